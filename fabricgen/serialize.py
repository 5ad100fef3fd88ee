"""The plan as JSON: stable key order, no floats that vary, one trailing newline.

Encoded by orjson, which walks the frozen dataclasses natively in C: a 5,000-switch plan is
hundreds of megabytes of JSON, and the standard library's pure-Python indenting encoder
needs tens of seconds for it. The text is `json.dumps(to_data(plan), indent=2,
sort_keys=True, ensure_ascii=False)` to the byte (tested), keys sorted in dataclasses too.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable
from typing import Any

import orjson

from fabricgen.model import Plan

_OPTIONS = (
    orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS
)
_GETTERS: dict[type, tuple[tuple[str, ...], Callable[[Any], Any]]] = {}


def _fields_as_dict(value: Any) -> dict[str, Any]:
    """orjson's hook for dataclasses: a dict, so that OPT_SORT_KEYS sorts their keys too
    (orjson writes dataclass fields in declaration order). One C-level attrgetter per class:
    this hook runs for every interface, link and neighbor of the plan."""
    cls = type(value)
    known = _GETTERS.get(cls)
    if known is None:
        if not dataclasses.is_dataclass(value):
            raise TypeError(f"cannot serialise {cls.__name__}")
        names = tuple(f.name for f in dataclasses.fields(value))
        known = _GETTERS[cls] = (names, operator.attrgetter(*names))
    names, getter = known
    values = getter(value)
    return dict(zip(names, values, strict=True)) if len(names) > 1 else {names[0]: values}


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
    return orjson.dumps(data, default=_fields_as_dict, option=_OPTIONS).decode("utf-8")
