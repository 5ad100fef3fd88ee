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
import types
import typing
from collections.abc import Callable
from typing import Any

import orjson

from fabricgen.core.model import Device, Link, Plan, Server
from fabricgen.core.records import record

_OPTIONS = (
    orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS
)
_AS_DICT: dict[type, Callable[[Any], dict[str, Any]]] = {}
_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Values without keys, which orjson writes the same compact or indented."""


def _fields_as_dict(value: Any) -> dict[str, Any]:
    """orjson's hook for dataclasses: a dict, so that OPT_SORT_KEYS sorts their keys too
    (orjson writes dataclass fields in declaration order). It runs for every link and server
    of the plan (hundreds of thousands of times at 5,000 switches), so each class gets one
    generated function that builds its dict as a literal, keys already in sorted order, with
    the dataclasses it holds (a link's ends and media, a device's interfaces) built inline:
    one call per link instead of four, one per device instead of hundreds."""
    cls = type(value)
    as_dict = _AS_DICT.get(cls)
    if as_dict is None:
        if not dataclasses.is_dataclass(value):
            raise TypeError(f"cannot serialise {cls.__name__}")
        as_dict = _AS_DICT[cls] = _dict_builder(cls)
    return as_dict(value)


def _dict_builder(cls: type) -> Callable[[Any], dict[str, Any]]:
    """`lambda value: {"a": value.a, "b": value.b}` for a dataclass (its field names are
    identifiers, from the class itself, so the generated source holds nothing from the inventory).

    >>> from fabricgen.core.model import Endpoint
    >>> _dict_builder(Endpoint)(Endpoint("leaf1", "Ethernet1/1", 1))
    {'device': 'leaf1', 'interface': 'Ethernet1/1', 'port': 1}
    """
    source = "lambda value: " + _literal(cls, "value", 0)
    built: Callable[[Any], dict[str, Any]] = eval(source, {"__builtins__": {}})  # identifiers only, checked in _literal
    return built


_INLINE_DEPTH = 3
"""How deep dataclasses held by dataclasses are built inline (the plan's nest two deep)."""


def _literal(cls: type, expr: str, depth: int) -> str:
    """The source of a dict literal of the fields of dataclass `cls` read from `expr`, keys sorted."""
    names = sorted(f.name for f in dataclasses.fields(cls))
    if not all(name.isidentifier() for name in names):
        raise TypeError(f"not field names: {names}")
    hints = _hints(cls)
    return "{" + ", ".join(f"{name!r}: {_field_source(hints.get(name), f'{expr}.{name}', depth)}" for name in names) + "}"


def _field_source(hint: Any, expr: str, depth: int) -> str:
    """A field's value: a dataclass (or one or None, or a tuple of them) as its literal, inline;
    anything else as it is (a dataclass found there at run time still reaches the hook)."""
    if depth >= _INLINE_DEPTH:
        return expr
    args = typing.get_args(hint)
    if _is_dataclass_type(hint):
        return _literal(hint, expr, depth + 1)
    if typing.get_origin(hint) in (types.UnionType, typing.Union) and len(args) == 2 and type(None) in args:
        inner = next(arg for arg in args if arg is not type(None))
        if _is_dataclass_type(inner):
            return f"(None if {expr} is None else {_literal(inner, expr, depth + 1)})"
    if typing.get_origin(hint) is tuple and len(args) == 2 and args[1] is Ellipsis and _is_dataclass_type(args[0]):
        item = f"item{depth}"
        return f"[{_literal(args[0], item, depth + 1)} for {item} in {expr}]"
    return expr


def _is_dataclass_type(hint: Any) -> bool:
    return isinstance(hint, type) and dataclasses.is_dataclass(hint)


def _hints(cls: type) -> dict[str, Any]:
    """The resolved field types of `cls`, or none when they cannot be resolved (then nothing is inlined)."""
    try:
        return typing.get_type_hints(cls)
    except (NameError, TypeError):
        return {}


def _key_ordered(hint: Any, seen: frozenset[type] = frozenset()) -> bool:
    """Whether a value of this type is written with every key in order without OPT_SORT_KEYS:
    scalars, and dataclasses (their builders sort their keys) of such values or tuples of them,
    but no dict. Sorting keys is half of orjson's time on the plan's lists.

    >>> from fabricgen.core.model import Endpoint
    >>> _key_ordered(Endpoint), _key_ordered(dict[str, int]), _key_ordered(tuple[Endpoint, ...] | None)
    (True, False, True)
    """
    if hint in _SCALARS:
        return True
    if _is_dataclass_type(hint):
        hints = _hints(hint)
        fields = dataclasses.fields(hint)
        inner = seen | {hint}
        return hint in seen or (len(hints) >= len(fields) and all(_key_ordered(hints[f.name], inner) for f in fields))
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (tuple, types.UnionType, typing.Union) and args:
        return all(arg is Ellipsis or _key_ordered(arg, seen) for arg in args)
    return False


def to_data(value: Any) -> Any:
    """Dataclasses, tuples and dicts -> plain JSON data (dict keys as strings); a field derived from
    the others (`compare=False`, `Plan.cables`) is left out."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value) if f.compare}
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
    data: dict[str, Any] = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan) if f.compare}
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
_COMPACT_ORDERED = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS
"""For values whose keys are in order already (`_key_ordered`)."""


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


@record
class FragmentSplit:
    """The plan's links and servers grouped by the device whose fragment holds them, worked out
    once, so the device fragments can be encoded in slices, by any process (`render -j`): at
    5,000 switches they are 270 MB of text, too much to hold at once beside the plan."""

    plan: Plan
    links: dict[str, list[Any]]
    servers: dict[str, list[Any]]
    ordered: bool
    """The devices', links' and servers' keys are in order already (`_key_ordered`)."""


def split_fragments(plan: Plan) -> FragmentSplit:
    links = _by_owner(plan, plan.links, [link.a.device for link in plan.links], [link.z.device for link in plan.links])
    servers = _by_owner(plan, plan.servers, [server.leaf for server in plan.servers], [""] * len(plan.servers))
    return FragmentSplit(plan, links, servers, all(_key_ordered(cls) for cls in (Device, Link, Server)))


def fabric_fragment(split: FragmentSplit) -> dict[str, str]:
    """`plan/fabric.json`: the fabric-wide facts, an index of the devices, and the links and
    servers that belong to no device."""
    data = _plan_data(split.plan)
    data["devices"] = [{key: getattr(device, key) for key in _INDEX_FIELDS} for device in split.plan.devices]
    data["links"] = split.links[""]
    data["servers"] = split.servers[""]
    return {FABRIC_FRAGMENT: lines_json(data)}


def device_fragments(split: FragmentSplit, start: int, stop: int) -> dict[str, str]:
    """`plan/devices/<name>.json` of the plan's devices[start:stop]."""
    files = {}
    for device in split.plan.devices[start:stop]:
        fields = _fields_as_dict(device)
        fields["links"] = split.links[device.name]
        fields["servers"] = split.servers[device.name]
        files[f"{DEVICE_FRAGMENTS}/{device.name}.json"] = lines_json(fields, split.ordered)
    return files


def _by_owner(plan: Plan, items: tuple[Any, ...], firsts: list[str], seconds: list[str]) -> dict[str, list[Any]]:
    """Items by the first of their two candidate owners (`firsts[i]`, `seconds[i]`) that is a
    device, in plan order, under "" when neither is; a list for every device (empty when it
    owns nothing)."""
    groups: dict[str, list[Any]] = {device.name: [] for device in plan.devices}
    nobody: list[Any] = []
    for item, first, second in zip(items, firsts, seconds, strict=True):
        group = groups.get(first) if first else None
        if group is None:
            group = groups.get(second, nobody) if second else nobody
        group.append(item)
    groups[""] = nobody
    return groups


def _compact(value: Any, ordered: bool = False) -> bytes:
    return orjson.dumps(value, default=_fields_as_dict, option=_COMPACT_ORDERED if ordered else _COMPACT)


_INDENTED = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE


def lines_json(data: dict[str, Any], ordered: bool = False) -> str:
    """A JSON object with sorted keys, a key per line, a non-empty list's items one per line.

    One orjson call per object: a list of scalars is written as orjson indents it, a list of
    objects as its items' compact lines (`_list_block`), any other object compact on its key's
    line, the last two as `orjson.Fragment`s (written as they are). At 5,000 switches that is
    one call per device instead of two per key. `ordered`: the values' keys are in order already
    (`_key_ordered`), only the top level's are sorted.

    >>> print(lines_json({"b": [1, {"y": 2, "x": 1}], "a": "z", "c": [], "d": ["p", 2]}), end="")
    {
      "a": "z",
      "b": [
        1,
        {"x":1,"y":2}
      ],
      "c": [],
      "d": [
        "p",
        2
      ]
    }
    """
    if not data:
        return "{\n}\n"
    values = {key: value if type(value) in _SCALARS else _line_value(value, ordered) for key, value in data.items()}
    return orjson.dumps(values, option=_INDENTED).decode("utf-8")


def _line_value(value: Any, ordered: bool) -> Any:
    """`value` as `lines_json` hands it to orjson."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, list | tuple):
        if not value or all(type(item) in _SCALARS for item in value):
            return value
        return orjson.Fragment(_list_block(value, ordered))
    return orjson.Fragment(_compact(value, ordered))


_SEAM = b"},{"
_CUT = b"},\n    {"


def _list_block(items: list[Any] | tuple[Any, ...], ordered: bool) -> bytes:
    """A non-empty list as `lines_json` writes it under its key: one compact JSON value per line
    (4 spaces in, "," between), then `  ]`.

    A list of objects (dataclasses, dicts: every list of the plan) is encoded in one orjson call
    and cut at its `},{` seams (as bytes: no decoding until the whole object is written): at
    5,000 switches that is one call per list instead of one per item (over a million). The cut
    is right exactly when there are as many pieces as items (a `},{` inside a string, or between
    objects nested in an item, would make more); otherwise, or for other values, item by item.

    >>> print(_list_block([{"b": "},{", "a": 1}, {}], False).decode())
    [
        {"a":1,"b":"},{"},
        {}
      ]
    """
    if all(kind is dict or dataclasses.is_dataclass(kind) for kind in set(map(type, items))):
        pieces = _compact(items, ordered)[2:-2].split(_SEAM)
        if len(pieces) == len(items):
            return b"[\n    {" + _CUT.join(pieces) + b"}\n  ]"
    return b"[\n" + b",\n".join([b"    " + _compact(item, ordered) for item in items]) + b"\n  ]"


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
