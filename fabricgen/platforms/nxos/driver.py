"""Cisco NX-OS: what the push reads from a switch (NX-API `show ... | json`), and the text of
`configure replace ... show-patch`. NX-OS nests tables as `TABLE_x: {ROW_x: ...}`, one row as a
dict and several as a list; `rows` normalises both and finds rows at any depth."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from fabricgen.platforms.acl_text import ControlPlaneFilter, read_filter
from fabricgen.platforms.driver import (
    Management,
    Session,
    as_int,
    host_part,
    numeric_leaves,
    short_interface,
    threshold_bytes,
    truthy,
)
from fabricgen.platforms.nxos import config_text


def as_list(value: Any) -> list[Any]:
    """NX-OS returns a single row as a dict and several as a list: always give a list."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def rows(data: Any, row: str) -> list[dict[str, Any]]:
    """Every `ROW_<row>` entry anywhere in an NX-OS JSON document, in document order.

    `row` may be given with or without the `ROW_` prefix. Searching at any depth keeps the
    checks independent of the intermediate `TABLE_vrf` / `TABLE_af` / `TABLE_saf` layers,
    which differ between NX-OS releases.

    >>> rows({"TABLE_vrf": {"ROW_vrf": {"TABLE_neighbor": {"ROW_neighbor": {"neighborid": "10.0.0.1"}}}}}, "neighbor")
    [{'neighborid': '10.0.0.1'}]
    """
    key = row if row.startswith("ROW_") else f"ROW_{row}"
    found: list[dict[str, Any]] = []

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            for name, value in node.items():
                if name == key:
                    for item in as_list(value):
                        if isinstance(item, Mapping):
                            found.append(dict(item))
                            walk(item)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(data)
    return found


_PATCH_NOISE = re.compile(
    r"(?i)^\s*(collecting running-config|converting to checkpoint file|generating rollback patch|"
    r"#generating rollback patch|rollback patch is empty|patch validation completed|!.*|#.*|`?end`?)\s*$"
)


def patch_lines(show_patch: str) -> list[str]:
    """The patch lines of `configure replace ... show-patch`, without NX-OS's progress messages.

    An empty list means the running config already equals the rendered file.
    """
    return [line.rstrip() for line in str(show_patch).splitlines() if line.strip() and not _PATCH_NOISE.match(line)]


class NxosDriver:
    """The `Driver` of Cisco NX-OS."""

    def bgp_sessions(self, summary: Mapping[str, Any]) -> dict[str, Session]:
        """`show ip bgp summary`: every `ROW_neighbor`, single row or many."""
        sessions: dict[str, Session] = {}
        for row in rows(summary, "neighbor"):
            address = row.get("neighborid") or row.get("neighbor-id") or row.get("neighbor")
            if address is not None:
                sessions[str(address)] = Session(str(row.get("state", "unknown")), as_int(row.get("prefixreceived", 0)))
        return sessions

    def bfd_states(self, neighbors: Mapping[str, Any]) -> dict[str, str]:
        """`show bfd neighbors`: `TABLE_bfdNeighbor` rows, their local state (field names not
        pinned from a capture: docs/deploy.md)."""
        return {
            str(r["dest_ip_addr"]): str(r.get("local_state", "unknown")).lower()
            for r in rows(neighbors, "bfdNeighbor")
            if "dest_ip_addr" in r
        }

    def interface_states(self, brief: Mapping[str, Any]) -> dict[str, str]:
        """`show interface brief`: `state` (`up` is up)."""
        return {
            short_interface(str(row["interface"])): str(row.get("state", "unknown"))
            for row in rows(brief, "interface")
            if "interface" in row
        }

    def pfc_states(self, pfc: Mapping[str, Any]) -> dict[str, bool]:
        """`show interface priority-flow-control`: `ROW_entry` `intf-name` and its `oper` state."""
        return {short_interface(str(r["intf-name"])): truthy(r.get("oper", "off")) for r in rows(pfc, "entry") if "intf-name" in r}

    def pfc_priorities(self, pfc: Mapping[str, Any]) -> dict[str, frozenset[int]]:
        """`show interface priority-flow-control`: the `vl-bmap` of a port whose PFC is
        operational, the bitmap of paused CoS values in hex as the text output's `Oper(VL bmap)`
        column prints it (`8` = CoS 3); field name invented (tests/data/show/README.md)."""
        found = {}
        for r in rows(pfc, "entry"):
            if "intf-name" in r:
                bitmap = int(str(r.get("vl-bmap", "0")), 16) if truthy(r.get("oper", "off")) else 0
                found[short_interface(str(r["intf-name"]))] = frozenset(cos for cos in range(8) if bitmap >> cos & 1)
        return found

    def qos_policies(self, output: Mapping[str, Any]) -> dict[str, str]:
        """`show policy-map interface brief`: `ROW_intf` `intf-name` and its `in-qos-policy`
        (invented shape)."""
        return {short_interface(str(r["intf-name"])): str(r.get("in-qos-policy") or "") for r in rows(output, "intf") if "intf-name" in r}

    def ecn_thresholds(self, output: Mapping[str, Any]) -> dict[str, dict[int, tuple[int, int]]]:
        """`show queuing interface`: per `ROW_queuing_interface` (`if_name_str`), its egress
        `ROW_qosgrp_egress` rows with WRED-ECN on (invented shape); the QoS group is the traffic class."""
        found: dict[str, dict[int, tuple[int, int]]] = {}
        for port in rows(output, "queuing_interface"):
            marking: dict[int, tuple[int, int]] = {}
            for q in rows(port, "qosgrp_egress"):
                if truthy(q.get("eq-wred-ecn", "disabled")):
                    unit = q.get("eq-wred-unit", "")
                    marking[as_int(q.get("eq-qosgrp"))] = (
                        threshold_bytes(q.get("eq-wred-min-thresh"), unit),
                        threshold_bytes(q.get("eq-wred-max-thresh"), unit),
                    )
            if "if_name_str" in port:
                found[short_interface(str(port["if_name_str"]))] = marking
        return found

    def bgp_identity(self, config: str) -> dict[str, tuple[str, str]]:
        return config_text.bgp_identity(config)

    def lldp_neighbors(self, output: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for row in rows(output, "nbor"):
            found[short_interface(str(row.get("l_port_id", "")))] = (
                host_part(row.get("chassis_id")),
                short_interface(str(row.get("port_id", ""))),
            )
        return found

    def counters(self, output: Any, keys: str) -> dict[str, int]:
        return numeric_leaves(output, keys)

    def known_shapes(self) -> Mapping[str, tuple[str, ...]]:
        return {
            "bgp": ("TABLE_vrf",),
            "bfd": ("TABLE_bfdNeighbor",),
            "interfaces": ("TABLE_interface",),
            "lldp": ("TABLE_nbor", "neigh_count"),
            "pfc": ("TABLE_entry",),
            "qos": ("TABLE_intf",),
            "ecn": ("TABLE_queuing_interface",),
            "errors": ("TABLE_interface",),
            "watchdog": ("TABLE_pfcwd",),
        }

    def filters(self) -> Mapping[str, Callable[..., Any]]:
        return {"rows": rows, "patch_lines": patch_lines}

    def management(self, config: str) -> Management:
        return config_text.management(config)

    def control_plane(self, config: str) -> ControlPlaneFilter:
        """`line vty`: the vty ACL (SSH sessions, every VRF)."""
        return read_filter(config, "line vty", _APPLYING)


_APPLYING = re.compile(r"^access-class (?P<acl>\S+) in$")
"""The line that applies the control-plane ACL (ownership.yml `owned_lines`)."""

DRIVER = NxosDriver()
