"""The plan as JSON: stable key order, no floats that vary, one trailing newline."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from fabricgen.model import Plan


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
    data = to_data(plan)
    data["source"] = data["source"].replace("\\", "/")
    for item in data["oversubscription"]:
        item["ratio"] = round(item["downlink_gbps"] / item["uplink_gbps"], 4) if item["uplink_gbps"] else None
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
