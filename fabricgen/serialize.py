"""The plan as JSON: stable key order, no floats that vary, one trailing newline.

Encoded by orjson, which walks the frozen dataclasses natively in C: a 5,000-switch plan is
hundreds of megabytes of JSON, and the standard library's pure-Python indenting encoder
needs tens of seconds for it. Keys are sorted as strings, two-space indented.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson

from fabricgen.model import Plan

_OPTIONS = orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE


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
    return orjson.dumps(data, option=_OPTIONS).decode("utf-8")
