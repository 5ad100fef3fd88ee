"""Arista EOS: what the push reads from a switch (eAPI `show ... | json`), and the text of its
config session diff. The shapes are dicts keyed by peer or interface (`vrfs.<vrf>.peers`,
`interfaceStatuses`, `lldpNeighbors`); see tests/test_show_shapes.py for captured samples."""

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
from fabricgen.platforms.eos import config_text


def session_diff_lines(diff: str) -> list[str]:
    """The changed lines of `show session-config named <s> diffs` (`+`/`-` lines, headers dropped)."""
    lines = []
    for line in str(diff).splitlines():
        if line.startswith(("+++", "---", "@@")):
            continue
        if line.startswith(("+", "-")) and line[1:].strip():
            lines.append(line.rstrip())
    return lines


class EosDriver:
    """The `Driver` of Arista EOS."""

    def bgp_sessions(self, summary: Mapping[str, Any]) -> dict[str, Session]:
        """`show ip bgp summary`: every VRF's peers, merged."""
        sessions: dict[str, Session] = {}
        for vrf in (summary.get("vrfs") or {}).values():
            for address, peer in (vrf.get("peers") or {}).items():
                sessions[str(address)] = Session(str(peer.get("peerState", "unknown")), as_int(peer.get("prefixReceived", 0)))
        return sessions

    def bfd_states(self, peers: Mapping[str, Any]) -> dict[str, str]:
        """`show bfd peers`: every VRF's peers (shape: ANTA's VerifyBFDPeersHealth unit data,
        `vrfs.<vrf>.ipv4Neighbors.<ip>.peerStats.<intf>.status`)."""
        states: dict[str, str] = {}
        for vrf in (peers.get("vrfs") or {}).values():
            for address, peer in ((vrf or {}).get("ipv4Neighbors") or {}).items():
                for stats in ((peer or {}).get("peerStats") or {}).values():
                    states[str(address)] = str((stats or {}).get("status", "unknown")).lower()
        return states

    def interface_states(self, status: Mapping[str, Any]) -> dict[str, str]:
        """`show interfaces status`: `linkStatus` (`connected` is up)."""
        return {
            short_interface(name): str(entry.get("linkStatus", "unknown"))
            for name, entry in (status.get("interfaceStatuses") or {}).items()
        }

    def pfc_states(self, pfc: Mapping[str, Any]) -> dict[str, bool]:
        """`show priority-flow-control`: `interfaceStatuses.<name>.enabled` (or `portEnabled`);
        docs/deploy.md asks to confirm the shape on the canary."""
        states = {}
        for name, entry in (pfc.get("interfaceStatuses") or pfc.get("interfaces") or {}).items():
            value = entry.get("enabled", entry.get("portEnabled", False)) if isinstance(entry, Mapping) else entry
            states[short_interface(name)] = truthy(value)
        return states

    def pfc_priorities(self, pfc: Mapping[str, Any]) -> dict[str, frozenset[int]]:
        """`show priority-flow-control`: `interfaceStatuses.<name>.priorities` of a port whose PFC
        is on (an invented shape: tests/data/show/README.md)."""
        found = {}
        for name, entry in (pfc.get("interfaceStatuses") or {}).items():
            if isinstance(entry, Mapping):
                on = truthy(entry.get("enabled", entry.get("portEnabled", False)))
                found[short_interface(name)] = frozenset(as_int(p) for p in entry.get("priorities") or ()) if on else frozenset()
        return found

    def qos_policies(self, output: Mapping[str, Any]) -> dict[str, str]:
        """`show qos interfaces`: `interfaces.<name>.serviceProfile` (invented shape)."""
        return {
            short_interface(name): str(entry.get("serviceProfile") or "")
            for name, entry in (output.get("interfaces") or {}).items()
            if isinstance(entry, Mapping)
        }

    def ecn_thresholds(self, output: Mapping[str, Any]) -> dict[str, dict[int, tuple[int, int]]]:
        """`show qos interfaces ecn`: `interfaces.<name>.txQueues.<queue>.{ecnEnabled,
        minThreshold, maxThreshold, unit}` (invented shape); the queue number is the traffic class."""
        found: dict[str, dict[int, tuple[int, int]]] = {}
        for name, entry in (output.get("interfaces") or {}).items():
            marking: dict[int, tuple[int, int]] = {}
            for queue, q in ((entry or {}).get("txQueues") or {}).items():
                if isinstance(q, Mapping) and truthy(q.get("ecnEnabled", False)):
                    unit = q.get("unit", "")
                    marking[as_int(queue)] = (threshold_bytes(q.get("minThreshold"), unit), threshold_bytes(q.get("maxThreshold"), unit))
            found[short_interface(name)] = marking
        return found

    def bgp_identity(self, config: str) -> dict[str, tuple[str, str]]:
        return config_text.bgp_identity(config)

    def lldp_neighbors(self, output: Mapping[str, Any]) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for entry in output.get("lldpNeighbors") or []:
            found[short_interface(str(entry.get("port", "")))] = (
                host_part(entry.get("neighborDevice")),
                short_interface(str(entry.get("neighborPort", ""))),
            )
        return found

    def counters(self, output: Any, keys: str) -> dict[str, int]:
        return numeric_leaves(output, keys)

    def known_shapes(self) -> Mapping[str, tuple[str, ...]]:
        return {
            "bgp": ("vrfs",),
            "bfd": ("vrfs",),
            "interfaces": ("interfaceStatuses",),
            "lldp": ("lldpNeighbors",),
            "pfc": ("interfaceStatuses",),
            "qos": ("interfaces",),
            "ecn": ("interfaces",),
            "errors": ("interfaceErrorCounters",),
            "watchdog": ("interfaces",),
        }

    def filters(self) -> Mapping[str, Callable[..., Any]]:
        return {"session_diff_lines": session_diff_lines}

    def management(self, config: str) -> Management:
        return config_text.management(config)

    def control_plane(self, config: str) -> ControlPlaneFilter:
        """`system control-plane`: the control-plane ACL per VRF (none: EOS's default-control-plane-acl)."""
        return read_filter(config, "system control-plane", _APPLYING)


_APPLYING = re.compile(r"^ip access-group (?P<acl>\S+)( vrf (?P<vrf>\S+))? in$")
"""The line that applies the control-plane ACL (ownership.yml `owned_lines`)."""

DRIVER = EosDriver()
