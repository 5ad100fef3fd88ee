"""Post-change checks for the deploy playbooks: `show ... | json` in, a list of problems out.

The playbooks confirm a pending commit only when every check returns an empty list. The
logic lives here, in plain typed Python with unit tests on captured outputs, rather than in
Jinja expressions inside YAML that nobody can test. `playbooks/filter_plugins/fabricgen.py`
exposes these functions to Ansible as filters.

Every check fails closed: an interface or neighbor missing from the output counts as a
problem, so a command whose output shape differs from what is expected stops the canary
instead of waving a broken switch through.

NX-OS JSON nests tables as `TABLE_x: {ROW_x: ...}` where one row is a dict and several rows a
list; `nxos_rows` normalises both and finds rows at any depth.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Any

ESTABLISHED = "established"


def as_list(value: Any) -> list[Any]:
    """NX-OS returns a single row as a dict and several as a list: always give a list."""
    if value is None:
        return []
    if isinstance(value, list):
        return value
    return [value]


def nxos_rows(data: Any, row: str) -> list[dict[str, Any]]:
    """Every `ROW_<row>` entry anywhere in an NX-OS JSON document, in document order.

    `row` may be given with or without the `ROW_` prefix. Searching at any depth keeps the
    checks independent of the intermediate `TABLE_vrf` / `TABLE_af` / `TABLE_saf` layers,
    which differ between NX-OS releases.
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


def _names(items: Iterable[Any], key: str = "") -> list[str]:
    """Accept plain names or dicts (host_vars entries) and return the names."""
    names = []
    for item in items or ():
        if isinstance(item, Mapping):
            names.append(str(item[key]))
        else:
            names.append(str(item))
    return names


def _short(name: str) -> str:
    """Canonical interface name for comparison: EOS and NX-OS abbreviate (`Et1/1`, `Eth1/1`)."""
    match = re.match(r"(?i)^(eth|et|ethernet)(\d.*)$", name.strip())
    if match:
        return f"ethernet{match.group(2)}"
    return name.strip().lower()


# --- BGP -------------------------------------------------------------------------------------


def eos_bgp_peer_states(summary: Mapping[str, Any]) -> dict[str, str]:
    """`show ip bgp summary | json` (EOS) -> {peer address: state}, all VRFs merged."""
    states: dict[str, str] = {}
    for vrf in (summary.get("vrfs") or {}).values():
        for address, peer in (vrf.get("peers") or {}).items():
            states[str(address)] = str(peer.get("peerState", "unknown"))
    return states


def nxos_bgp_peer_states(summary: Mapping[str, Any]) -> dict[str, str]:
    """`show ip bgp summary | json` (NX-OS) -> {peer address: state}, single row or many."""
    states: dict[str, str] = {}
    for row in nxos_rows(summary, "neighbor"):
        address = row.get("neighborid") or row.get("neighbor-id") or row.get("neighbor")
        if address is not None:
            states[str(address)] = str(row.get("state", "unknown"))
    return states


def bgp_not_established(states: Mapping[str, str], neighbors: Iterable[Any]) -> list[str]:
    """Planned neighbors that are not Established, as `address (state)` messages."""
    problems = []
    for address in _names(neighbors, "address"):
        state = states.get(address)
        if state is None:
            problems.append(f"{address} (not configured)")
        elif state.lower() != ESTABLISHED:
            problems.append(f"{address} ({state})")
    return problems


def eos_bgp_problems(summary: Mapping[str, Any], neighbors: Iterable[Any]) -> list[str]:
    return bgp_not_established(eos_bgp_peer_states(summary), neighbors)


def nxos_bgp_problems(summary: Mapping[str, Any], neighbors: Iterable[Any]) -> list[str]:
    return bgp_not_established(nxos_bgp_peer_states(summary), neighbors)


# --- interfaces ------------------------------------------------------------------------------


def eos_interface_states(status: Mapping[str, Any]) -> dict[str, str]:
    """`show interfaces status | json` (EOS) -> {interface: linkStatus} (`connected` is up)."""
    return {_short(name): str(entry.get("linkStatus", "unknown")) for name, entry in (status.get("interfaceStatuses") or {}).items()}


def nxos_interface_states(brief: Mapping[str, Any]) -> dict[str, str]:
    """`show interface brief | json` (NX-OS) -> {interface: state} (`up` is up)."""
    return {_short(str(row["interface"])): str(row.get("state", "unknown")) for row in nxos_rows(brief, "interface") if "interface" in row}


def interfaces_not_up(states: Mapping[str, str], interfaces: Iterable[Any], up: Iterable[str] = ("up", "connected")) -> list[str]:
    """Planned fabric interfaces that are not up, as `name (state)` messages."""
    good = {u.lower() for u in up}
    problems = []
    for name in _names(interfaces, "name"):
        state = states.get(_short(name))
        if state is None:
            problems.append(f"{name} (missing)")
        elif state.lower() not in good:
            problems.append(f"{name} ({state})")
    return problems


def eos_interface_problems(status: Mapping[str, Any], interfaces: Iterable[Any]) -> list[str]:
    return interfaces_not_up(eos_interface_states(status), interfaces)


def nxos_interface_problems(brief: Mapping[str, Any], interfaces: Iterable[Any]) -> list[str]:
    return interfaces_not_up(nxos_interface_states(brief), interfaces)


# --- BFD -------------------------------------------------------------------------------------


def eos_bfd_states(peers: Mapping[str, Any]) -> dict[str, str]:
    """`show bfd peers | json` (EOS) -> {peer address: status}, all VRFs merged (shape: ANTA's
    VerifyBFDPeersHealth unit data, `vrfs.<vrf>.ipv4Neighbors.<ip>.peerStats.<intf>.status`)."""
    states: dict[str, str] = {}
    for vrf in (peers.get("vrfs") or {}).values():
        for address, peer in ((vrf or {}).get("ipv4Neighbors") or {}).items():
            for stats in ((peer or {}).get("peerStats") or {}).values():
                states[str(address)] = str((stats or {}).get("status", "unknown")).lower()
    return states


def nxos_bfd_states(neighbors: Mapping[str, Any]) -> dict[str, str]:
    """`show bfd neighbors | json` (NX-OS) -> {peer address: local state} (`TABLE_bfdNeighbor`
    rows; field names not pinned from a capture: docs/deploy.md)."""
    return {
        str(r["dest_ip_addr"]): str(r.get("local_state", "unknown")).lower()
        for r in nxos_rows(neighbors, "bfdNeighbor")
        if "dest_ip_addr" in r
    }


# --- PFC -------------------------------------------------------------------------------------


def _truthy(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() in {"on", "true", "enabled", "yes", "1"}


def eos_pfc_states(pfc: Mapping[str, Any]) -> dict[str, bool]:
    """`show priority-flow-control | json` (EOS) -> {interface: PFC enabled}.

    Reads `interfaceStatuses.<name>.enabled` (or `portEnabled`); see docs/deploy.md on
    confirming the shape on the canary.
    """
    states = {}
    for name, entry in (pfc.get("interfaceStatuses") or pfc.get("interfaces") or {}).items():
        value = entry.get("enabled", entry.get("portEnabled", False)) if isinstance(entry, Mapping) else entry
        states[_short(name)] = _truthy(value)
    return states


def nxos_pfc_states(pfc: Mapping[str, Any], row: str = "entry", name_key: str = "intf-name", state_key: str = "oper") -> dict[str, bool]:
    """`show interface priority-flow-control | json` (NX-OS) -> {interface: PFC operational}."""
    return {_short(str(r[name_key])): _truthy(r.get(state_key, "off")) for r in nxos_rows(pfc, row) if name_key in r}


def pfc_not_enabled(states: Mapping[str, bool], interfaces: Iterable[Any]) -> list[str]:
    problems = []
    for name in _names(interfaces, "name"):
        state = states.get(_short(name))
        if state is None:
            problems.append(f"{name} (missing)")
        elif not state:
            problems.append(f"{name} (PFC off)")
    return problems


def eos_pfc_problems(pfc: Mapping[str, Any], interfaces: Iterable[Any]) -> list[str]:
    return pfc_not_enabled(eos_pfc_states(pfc), interfaces)


def nxos_pfc_problems(
    pfc: Mapping[str, Any], interfaces: Iterable[Any], row: str = "entry", name_key: str = "intf-name", state_key: str = "oper"
) -> list[str]:
    return pfc_not_enabled(nxos_pfc_states(pfc, row, name_key, state_key), interfaces)


# --- all checks of one switch ---------------------------------------------------------------


def _combined(
    checks: Mapping[str, Any],
    outputs: Mapping[str, Any],
    neighbors: Iterable[Any],
    fabric_interfaces: Iterable[Any],
    roce_interfaces: Iterable[Any],
) -> list[str]:
    arguments = {"bgp": neighbors, "interfaces": fabric_interfaces, "pfc": roce_interfaces}
    problems = []
    for check, output in outputs.items():
        if check not in checks:
            problems.append(f"{check}: unknown post-check")
            continue
        if not isinstance(output, Mapping):
            problems.append(f"{check}: expected JSON output, got {type(output).__name__}")
            continue
        problems.extend(f"{check}: {message}" for message in checks[check](output, arguments[check] or ()))
    return problems


def eos_problems(
    outputs: Mapping[str, Any], neighbors: Iterable[Any] = (), fabric_interfaces: Iterable[Any] = (), roce_interfaces: Iterable[Any] = ()
) -> list[str]:
    """{check name: `show ... | json` output} of an EOS switch -> every problem, prefixed by check.

    Check names: `bgp`, `interfaces`, `pfc`; an empty list means the switch may be confirmed.
    """
    checks = {"bgp": eos_bgp_problems, "interfaces": eos_interface_problems, "pfc": eos_pfc_problems}
    return _combined(checks, outputs, neighbors, fabric_interfaces, roce_interfaces)


def nxos_problems(
    outputs: Mapping[str, Any],
    neighbors: Iterable[Any] = (),
    fabric_interfaces: Iterable[Any] = (),
    roce_interfaces: Iterable[Any] = (),
    pfc_row: str = "entry",
    pfc_name_key: str = "intf-name",
    pfc_state_key: str = "oper",
) -> list[str]:
    """Same as `eos_problems` for NX-OS outputs (TABLE_/ROW_ normalised)."""

    def pfc(output: Mapping[str, Any], interfaces: Iterable[Any]) -> list[str]:
        return nxos_pfc_problems(output, interfaces, pfc_row, pfc_name_key, pfc_state_key)

    checks = {"bgp": nxos_bgp_problems, "interfaces": nxos_interface_problems, "pfc": pfc}
    return _combined(checks, outputs, neighbors, fabric_interfaces, roce_interfaces)


# --- device diffs ----------------------------------------------------------------------------

_NXOS_PATCH_NOISE = re.compile(
    r"(?i)^\s*(collecting running-config|converting to checkpoint file|generating rollback patch|"
    r"#generating rollback patch|rollback patch is empty|patch validation completed|!.*|#.*|`?end`?)\s*$"
)


def nxos_patch_lines(show_patch: str) -> list[str]:
    """The patch lines of `configure replace ... show-patch`, without NX-OS's progress messages.

    An empty list means the running config already equals the rendered file.
    """
    return [line.rstrip() for line in str(show_patch).splitlines() if line.strip() and not _NXOS_PATCH_NOISE.match(line)]


def eos_session_diff_lines(diff: str) -> list[str]:
    """The changed lines of `show session-config named <s> diffs` (`+`/`-` lines, headers dropped)."""
    lines = []
    for line in str(diff).splitlines():
        if line.startswith(("+++", "---", "@@")):
            continue
        if line.startswith(("+", "-")) and line[1:].strip():
            lines.append(line.rstrip())
    return lines


def config_lines(text: str) -> list[str]:
    """A rendered config as the commands a config session takes: `!` comments and `end` dropped,
    indentation kept (EOS leaves sub-modes implicitly by indentation)."""
    out = []
    for line in str(text).splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("!") or stripped == "end":
            continue
        out.append(line.rstrip())
    return out


# --- OpenSM ----------------------------------------------------------------------------------


def opensm_options(text: str) -> dict[str, str]:
    """`opensm.conf` -> {option: value}. OpenSM takes the first token after the key as value."""
    options = {}
    for line in str(text).splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        parts = stripped.split()
        options[parts[0]] = parts[1] if len(parts) > 1 else ""
    return options


def opensm_changed_options(old: str, new: str) -> list[str]:
    before, after = opensm_options(old), opensm_options(new)
    return sorted(key for key in set(before) | set(after) if before.get(key) != after.get(key))


def opensm_restart_needed(old: str, new: str, reloadable: Iterable[str]) -> bool:
    """True when an option that OpenSM reads only at start changed (SIGHUP is not enough).

    Options not listed as reloadable count as restart-only: unknown means restart.
    """
    allowed = set(reloadable)
    return any(key not in allowed for key in opensm_changed_options(old, new))


def local_checksums(directory: str, names: Iterable[str]) -> dict[str, str]:
    """{name: SHA-1} of rendered files on the controller (SHA-1: what `find`/`stat` report)."""
    return {name: hashlib.sha1(Path(directory, name).read_bytes()).hexdigest() for name in names}


def live_checksums(find_result: Mapping[str, Any]) -> dict[str, str]:
    """{name: SHA-1} from a registered `ansible.builtin.find` with `get_checksum: true`."""
    return {PurePosixPath(f["path"]).name: str(f.get("checksum", "")) for f in find_result.get("files", [])}


def checksums_differ(rendered: Mapping[str, str], live: Mapping[str, str]) -> bool:
    """True when a rendered file differs from the live one or has no live counterpart: the
    deploy then takes a fresh backup before replacing anything."""
    return any(live.get(name) != checksum for name, checksum in rendered.items())


def _iter_filters() -> Iterator[tuple[str, Any]]:
    yield "fabricgen_nxos_rows", nxos_rows
    yield "fabricgen_eos_problems", eos_problems
    yield "fabricgen_nxos_problems", nxos_problems
    yield "fabricgen_eos_bgp_problems", eos_bgp_problems
    yield "fabricgen_nxos_bgp_problems", nxos_bgp_problems
    yield "fabricgen_eos_interface_problems", eos_interface_problems
    yield "fabricgen_nxos_interface_problems", nxos_interface_problems
    yield "fabricgen_eos_pfc_problems", eos_pfc_problems
    yield "fabricgen_nxos_pfc_problems", nxos_pfc_problems
    yield "fabricgen_nxos_patch_lines", nxos_patch_lines
    yield "fabricgen_eos_session_diff_lines", eos_session_diff_lines
    yield "fabricgen_config_lines", config_lines
    yield "fabricgen_opensm_changed_options", opensm_changed_options
    yield "fabricgen_opensm_restart_needed", opensm_restart_needed
    yield "fabricgen_local_checksums", local_checksums
    yield "fabricgen_live_checksums", live_checksums
    yield "fabricgen_checksums_differ", checksums_differ


def ansible_filters() -> dict[str, Any]:
    """Name -> function, as Ansible's FilterModule.filters() wants it."""
    return dict(_iter_filters())
