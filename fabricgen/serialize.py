"""The plan as JSON: stable key order, no floats that vary, one trailing newline.

Encoded by orjson, which walks the frozen dataclasses natively in C: a 5,000-switch plan is
hundreds of megabytes of JSON, and the standard library's pure-Python indenting encoder
needs tens of seconds for it. The bytes are the same as `json.dumps(to_data(plan), indent=1,
sort_keys=True, ensure_ascii=False)`: orjson indents by two spaces, `_one_space_indent`
halves that.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from fabricgen.model import Plan

_OPTIONS = (
    orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields_as_dict(value: Any) -> dict[str, Any]:
    """orjson's hook for dataclasses: a dict, so that OPT_SORT_KEYS sorts their keys too
    (orjson writes dataclass fields in declaration order)."""
    cls = type(value)
    names = _FIELDS.get(cls)
    if names is None:
        if not dataclasses.is_dataclass(value):
            raise TypeError(f"cannot serialise {cls.__name__}")
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(value))
    return {name: getattr(value, name) for name in names}


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
    return _one_space_indent(orjson.dumps(data, default=_fields_as_dict, option=_OPTIONS)).decode("utf-8")


def _one_space_indent(text: bytes) -> bytes:
    r"""Two-space indented JSON -> one-space, with a few C-speed replaces, deepest level first.

    Converted indentation is written as tabs, so a shallower pattern cannot match it again;
    JSON encoders escape tabs inside strings, so every raw tab is one of ours.

    >>> _one_space_indent(b'{\n  "a": [\n    1\n  ]\n}')
    b'{\n "a": [\n  1\n ]\n}'
    """
    depth = 0
    while b"\n" + b"  " * (depth + 1) in text:
        depth += 1
    for level in range(depth, 0, -1):
        text = text.replace(b"\n" + b"  " * level, b"\n" + b"\t" * level)
    return text.replace(b"\t", b" ")
