"""Inventory builders for tests: a small valid fabric as a dict, and YAML text from a dict."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

BASE: dict[str, Any] = {
    "fabric": {"name": "t1", "transport": "roce"},
    "spines": {"count": 2, "model": "arista-7060dx5-64s", "platform": "eos"},
    "leaves": {"count": 4, "model": "arista-7060dx5-64s", "platform": "eos"},
    "uplinks": {"per_spine": 2, "speed": "400G"},
    "servers": {"per_leaf": 4, "ports_per_server": 1, "speed": "400G"},
    "addressing": {"loopbacks": "10.0.0.0/22", "fabric": "10.1.0.0/16", "servers": "10.2.0.0/16", "management": "192.168.0.0/22"},
    "bgp": {"spine_asn": 65000, "leaf_asn": 65101},
}


def fabric(**changes: Any) -> dict[str, Any]:
    """BASE with `section={...}` merged in (one level deep)."""
    doc = copy.deepcopy(BASE)
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(doc.get(key), dict):
            doc[key].update(value)
        else:
            doc[key] = value
    return doc


def write(tmp: Path, doc: dict[str, Any], name: str = "fabric.yml") -> Path:
    path = tmp / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path
