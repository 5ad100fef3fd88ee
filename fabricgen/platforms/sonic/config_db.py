"""What SONiC would refuse in a `config_db.json`, checked before a switch sees it.

`config_db.schema.json` beside this file is the JSON Schema of every table fabricgen writes,
written from sonic-buildimage's YANG models (each table cites its file). config_db stores every
leaf as a string, so a YANG integer range is a decimal string in the schema with its bounds in
`x-range`, which `problems` checks; so are the leafrefs between tables (`REFERENCES`: a PORT_QOS_MAP
naming a map that does not exist) and the YANG `must` expressions fabricgen's values could break
(a WRED maximum below its minimum, a watchdog time below the polling interval).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema

SCHEMA_FILE = Path(__file__).resolve().parent / "config_db.schema.json"

REFERENCES: tuple[tuple[str, str, str], ...] = (
    ("PORT_QOS_MAP", "dscp_to_tc_map", "DSCP_TO_TC_MAP"),
    ("PORT_QOS_MAP", "tc_to_queue_map", "TC_TO_QUEUE_MAP"),
    ("PORT_QOS_MAP", "tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP"),
    ("PORT_QOS_MAP", "pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE"),
    ("QUEUE", "scheduler", "SCHEDULER"),
    ("QUEUE", "wred_profile", "WRED_PROFILE"),
    ("BUFFER_PG", "profile", "BUFFER_PROFILE"),
    ("BUFFER_QUEUE", "profile", "BUFFER_PROFILE"),
    ("BUFFER_PROFILE", "pool", "BUFFER_POOL"),
)
"""(table, field, table its value names): the YANG leafrefs between the tables fabricgen writes."""

KEYED_BY: tuple[tuple[str, str], ...] = (
    ("INTERFACE", "PORT"),
    ("VLAN_MEMBER", "PORT"),
    ("PORT_QOS_MAP", "PORT"),
    ("QUEUE", "PORT"),
    ("PFC_WD", "PORT"),
    ("BUFFER_PG", "PORT"),
    ("BUFFER_QUEUE", "PORT"),
    ("BREAKOUT_CFG", "PORT"),
    ("MGMT_INTERFACE", "MGMT_PORT"),
    ("VLAN_INTERFACE", "VLAN"),
)
"""(table, table): the port (or VLAN, management port) in a row's key must be a row of the second
table; `global`/`GLOBAL` rows stand for every port. VLAN_MEMBER's port is its key's second part."""


@cache
def schema() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return data


def problems(config_db: Mapping[str, Any]) -> list[str]:
    """Everything SONiC's YANG would refuse in `config_db` among the tables fabricgen writes, as
    `TABLE|key: message` lines (empty: none)."""
    found = [f"{'|'.join(str(p) for p in error.absolute_path) or '/'}: {error.message}" for error in _validator().iter_errors(config_db)]
    found += list(_out_of_range(config_db))
    found += list(_dangling(config_db))
    found += list(_broken_musts(config_db))
    return found


@cache
def _validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schema())


def _out_of_range(config_db: Mapping[str, Any]) -> Iterator[str]:
    tables = schema()["properties"]
    for table, rows in config_db.items():
        entry = tables.get(table, {}).get("additionalProperties")
        if not isinstance(rows, Mapping) or not isinstance(entry, Mapping):
            continue
        for key, row in rows.items():
            for field, value in row.items() if isinstance(row, Mapping) else ():
                bounds = _field_schema(entry, field).get("x-range")
                if bounds and str(value).isdigit() and not bounds[0] <= int(value) <= bounds[1]:
                    yield f"{table}|{key}|{field}: {value} is outside {bounds[0]}..{bounds[1]}"


def _field_schema(entry: Mapping[str, Any], field: str) -> Mapping[str, Any]:
    """The schema of `field` in a row: a named property, or the rows' one value schema (maps)."""
    named = entry.get("properties", {}).get(field)
    if isinstance(named, Mapping):
        return named
    shared = entry.get("additionalProperties")
    return shared if isinstance(shared, Mapping) else {}


def _dangling(config_db: Mapping[str, Any]) -> Iterator[str]:
    for table, field, target in REFERENCES:
        for key, row in config_db.get(table, {}).items():
            name = row.get(field)
            if name is not None and name not in config_db.get(target, {}):
                yield f"{table}|{key}|{field}: {name} is not in {target}"
    for table, target in KEYED_BY:
        for key in config_db.get(table, {}):
            parts = key.split("|")
            named = parts[1] if table == "VLAN_MEMBER" else parts[0]
            if named not in ("global", "GLOBAL") and named not in config_db.get(target, {}):
                yield f"{table}|{key}: {named} is not in {target}"
    for table in ("INTERFACE", "LOOPBACK_INTERFACE", "VLAN_INTERFACE"):
        rows = config_db.get(table, {})
        for key in rows:
            if "|" in key and key.split("|")[0] not in rows:
                yield f"{table}|{key}: no row {key.split('|')[0]} of its own (SONiC adds the address to an interface it knows)"


def _broken_musts(config_db: Mapping[str, Any]) -> Iterator[str]:
    for name, row in config_db.get("WRED_PROFILE", {}).items():
        for color in ("green", "yellow", "red"):
            low, high = row.get(f"{color}_min_threshold"), row.get(f"{color}_max_threshold")
            if low is not None and high is not None and int(high) < int(low):
                yield f"WRED_PROFILE|{name}: {color}_max_threshold {high} is below {color}_min_threshold {low}"
    watchdog = config_db.get("PFC_WD", {})
    poll = watchdog.get("GLOBAL", {}).get("POLL_INTERVAL")
    for port, row in watchdog.items():
        for field in ("detection_time", "restoration_time"):
            if poll is not None and field in row and int(row[field]) < int(poll):
                yield f"PFC_WD|{port}|{field}: {row[field]} is below POLL_INTERVAL {poll}"
