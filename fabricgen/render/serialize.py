"""The plan as JSON: stable key order, no floats that vary, one trailing newline.

Two shapes. `plan_json` is the whole plan as one indented document (`fabricgen plan --format
json`, for tools that want everything at once). `plan_fragments` is what `render` writes into
the build folder: `plan/fabric.json` (fabric-wide facts and an index of the devices) and
`plan/devices/<name>.json` (one per device), each a JSON object with a key per line and a list's
items one compact object per line. A one-leaf change then rewrites a handful of small files
instead of one document of hundreds of megabytes, and a line diff shows whole items (an
interface, a neighbor, a link). Joined back (`join_fragments`), they are `plan_json`'s data.

Encoded by orjson, which walks the frozen dataclasses natively in C: a 5,000-switch plan is
hundreds of megabytes of JSON, and the standard library's pure-Python indenting encoder
needs tens of seconds for it. The text is `json.dumps(to_data(plan), indent=2,
sort_keys=True, ensure_ascii=False)` to the byte (tested), keys sorted in dataclasses too.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from fabricgen.core.model import Plan

_OPTIONS = (
    orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS
)
_AS_DICT: dict[type, Callable[[Any], dict[str, Any]]] = {}


def _fields_as_dict(value: Any) -> dict[str, Any]:
    """orjson's hook for dataclasses: a dict, so that OPT_SORT_KEYS sorts their keys too
    (orjson writes dataclass fields in declaration order). It runs for every interface, link
    and neighbor of the plan (over a million times at 5,000 switches), so each class gets one
    generated function that builds its dict as a literal, keys already in sorted order: about
    twice as fast as pairing names with an attrgetter's values."""
    cls = type(value)
    as_dict = _AS_DICT.get(cls)
    if as_dict is None:
        if not dataclasses.is_dataclass(value):
            raise TypeError(f"cannot serialise {cls.__name__}")
        as_dict = _AS_DICT[cls] = _dict_builder(sorted(f.name for f in dataclasses.fields(value)))
    return as_dict(value)


def _dict_builder(names: list[str]) -> Callable[[Any], dict[str, Any]]:
    """`lambda value: {"a": value.a, "b": value.b}` for field names (identifiers, from the
    dataclass itself, so the generated source holds nothing from the inventory).

    >>> _dict_builder(["imag", "real"])(complex(1, 2))
    {'imag': 2.0, 'real': 1.0}
    """
    if not all(name.isidentifier() for name in names):
        raise TypeError(f"not field names: {names}")
    source = "lambda value: {" + ", ".join(f"{name!r}: value.{name}" for name in names) + "}"
    built: Callable[[Any], dict[str, Any]] = eval(source, {"__builtins__": {}})  # identifiers only, checked above
    return built


def to_data(value: Any) -> Any:
    """Dataclasses, tuples and dicts -> plain JSON data (dict keys as strings)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [to_data(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    return value


def plan_json(plan: Plan) -> str:
    """The same data as `to_data(plan)`, plus each oversubscription's ratio (4 decimals)."""
    return orjson.dumps(_plan_data(plan), default=_fields_as_dict, option=_OPTIONS).decode("utf-8")


def _plan_data(plan: Plan) -> dict[str, Any]:
    """The plan's fields as a dict (values still dataclasses), source with "/" and ratios added."""
    data: dict[str, Any] = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)}
    data["source"] = plan.source.replace("\\", "/")
    data["oversubscription"] = [
        {
            "device": item.device,
            "downlink_gbps": item.downlink_gbps,
            "uplink_gbps": item.uplink_gbps,
            "ratio": round(item.downlink_gbps / item.uplink_gbps, 4) if item.uplink_gbps else None,
        }
        for item in plan.oversubscription
    ]
    return data


FABRIC_FRAGMENT = "plan/fabric.json"
DEVICE_FRAGMENTS = "plan/devices"
_INDEX_FIELDS = ("name", "role", "platform", "pod")
"""What `plan/fabric.json` says of each device: enough to find its fragment and its platform."""
_COMPACT = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS


def plan_fragments(plan: Plan) -> dict[str, str]:
    """`plan/fabric.json` and `plan/devices/<name>.json`: the plan split so each file changes
    only with what it describes (see the module docstring).

    A device's fragment holds its own fields plus `links` (the links whose `a` end it is, or whose `z`
    end it is when the `a` end is a server) and
    `servers` (the servers attached to it, for a leaf): at 5,000 switches the links alone are
    over 100 MB, so they go with their device rather than into the fabric-wide file. Links or
    servers naming no device of the plan stay in `plan/fabric.json`."""
    split = split_fragments(plan)
    files = fabric_fragment(split)
    files.update(device_fragments(split, 0, len(plan.devices)))
    return files


@dataclass(frozen=True, slots=True)
class FragmentSplit:
    """The plan's links and servers grouped by the device whose fragment holds them, worked out
    once, so the device fragments can be encoded in slices, by any process (`render -j`): at
    5,000 switches they are 270 MB of text, too much to hold at once beside the plan."""

    plan: Plan
    links: dict[str, list[Any]]
    servers: dict[str, list[Any]]


def split_fragments(plan: Plan) -> FragmentSplit:
    names = {device.name for device in plan.devices}
    links = _grouped(plan.links, names, lambda link: (link.a.device, link.z.device))
    servers = _grouped(plan.servers, names, lambda server: (server.leaf,))
    return FragmentSplit(plan, links, servers)


def fabric_fragment(split: FragmentSplit) -> dict[str, str]:
    """`plan/fabric.json`: the fabric-wide facts, an index of the devices, and the links and
    servers that belong to no device."""
    data = _plan_data(split.plan)
    data["devices"] = [{key: getattr(device, key) for key in _INDEX_FIELDS} for device in split.plan.devices]
    data["links"] = split.links.get("", [])
    data["servers"] = split.servers.get("", [])
    return {FABRIC_FRAGMENT: lines_json(data)}


def device_fragments(split: FragmentSplit, start: int, stop: int) -> dict[str, str]:
    """`plan/devices/<name>.json` of the plan's devices[start:stop]."""
    files = {}
    for device in split.plan.devices[start:stop]:
        fields = _fields_as_dict(device)
        fields["links"] = split.links.get(device.name, [])
        fields["servers"] = split.servers.get(device.name, [])
        files[f"{DEVICE_FRAGMENTS}/{device.name}.json"] = lines_json(fields)
    return files


def _grouped(items: tuple[Any, ...], names: set[str], owners: Callable[[Any], tuple[str, ...]]) -> dict[str, list[Any]]:
    """Items by the first of their `owners` that is a device, in plan order; "" for items
    owned by no device."""
    groups: dict[str, list[Any]] = {}
    for item in items:
        name = next((candidate for candidate in owners(item) if candidate in names), "")
        groups.setdefault(name, []).append(item)
    return groups


def _compact(value: Any) -> str:
    return orjson.dumps(value, default=_fields_as_dict, option=_COMPACT).decode("utf-8")


def lines_json(data: dict[str, Any]) -> str:
    """A JSON object with sorted keys, a key per line, a non-empty list's items one per line.

    >>> print(lines_json({"b": [1, {"y": 2, "x": 1}], "a": "z", "c": []}), end="")
    {
      "a": "z",
      "b": [
        1,
        {"x":1,"y":2}
      ],
      "c": []
    }
    """
    keys = sorted(data)
    lines = ["{"]
    for number, key in enumerate(keys, start=1):
        value = data[key]
        comma = "," if number < len(keys) else ""
        head = f"  {_compact(key)}: "
        if isinstance(value, list | tuple) and value:
            lines.append(head + "[")
            lines.append(_item_lines(value))
            lines.append(f"  ]{comma}")
        else:
            lines.append(head + _compact(value) + comma)
    lines.append("}\n")
    return "\n".join(lines)


def _item_lines(items: list[Any] | tuple[Any, ...]) -> str:
    """The items of a non-empty list, one compact JSON value per line (4 spaces in, "," between).

    A list of objects (dataclasses, dicts: every list of the plan) is encoded in one orjson call
    and cut at its `},{` seams: at 5,000 switches that is one call per list instead of one per
    item (over a million). The cut is right exactly when there are as many pieces as items (a
    `},{` inside a string would make one more); otherwise, or for other values, item by item.

    >>> print(_item_lines([{"b": "},{", "a": 1}, {}]))
        {"a":1,"b":"},{"},
        {}
    """
    if all(dataclasses.is_dataclass(kind) or kind is dict for kind in {type(item) for item in items}):
        text = _compact(items)
        pieces = text[2:-2].split("},{")
        if len(pieces) == len(items):
            return "    {" + "},\n    {".join(pieces) + "}"
    return ",\n".join(f"    {_compact(item)}" for item in items)


def join_fragments(fabric: dict[str, Any], devices: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The whole plan's data (as `plan_json` encodes it) from parsed fragments: `fabric` is
    `plan/fabric.json`, `devices` maps a device's name to its parsed `plan/devices/<name>.json`.
    Links and servers come grouped by device, in device order (the plan's own order within a
    device), then those owned by no device."""
    joined: dict[str, Any] = {**fabric, "devices": [], "links": [], "servers": []}
    for entry in fabric["devices"]:
        device = dict(devices[entry["name"]])
        joined["links"].extend(device.pop("links"))
        joined["servers"].extend(device.pop("servers"))
        joined["devices"].append(device)
    joined["links"].extend(fabric["links"])
    joined["servers"].extend(fabric["servers"])
    return joined
