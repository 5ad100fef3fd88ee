"""Post-checks against a baseline taken just before the change.

A switch passes when nothing regressed compared to the baseline and the planned state that can
already exist does: a session Established before must be Established after, unless this switch's
own change makes it two-ended (its address, remote AS or local AS changes: `bgp_identity.py`) and
the far end has not landed yet; a planned session must be Established when its far end is
already on the new config; every Established session carries at least one prefix; LLDP
neighbors on planned links are the planned ones (and none seen before went away); fabric
interfaces up before stay up (a GPU server rebooting on a host port is not the change's fault);
every RoCE port runs the plan's QoS policy, PFC on the plan's no-drop priority and on no other,
and ECN marking on exactly the plan's queues at the plan's thresholds; PFC watchdog drops and interface errors grow no faster than their
threshold over the check window. One dead optic that was already dead does not block.

Outputs are read by the driver of the host's platform (`fabricgen/platforms/<os>/driver.py`,
picked by `ansible_network_os`), never by trying every platform's parser on them: an output in
a shape that driver does not know fails the check, as a parser that reads nothing must not pass.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fabricgen import platforms as registry
from fabricgen.platforms.driver import Driver, Session, host_part, short_interface

UP = frozenset({"up", "connected"})


COUNTER_RATES: dict[str, float] = {"errors": 0.1, "watchdog": 0.0}
"""Largest growth per second, per counter, that still passes: interface errors may tick (a
0.1/s allowance is 30 in a 5-minute window); any PFC watchdog drop means a pause storm."""


@dataclass(frozen=True, slots=True)
class Expectation:
    """What the plan says about one switch, and which far ends are on the new config already."""

    neighbors: tuple[Mapping[str, Any], ...]
    peers_on_new_config: frozenset[str]
    fabric_interfaces: tuple[str, ...]
    roce_interfaces: tuple[str, ...]
    lldp_plan: tuple[Mapping[str, Any], ...]
    two_ended: frozenset[str] = frozenset()
    """Neighbor addresses whose identity this switch's own change alters (address, remote AS,
    local AS): such a session may drop until the far end's half lands. Every other session must
    stay up, whatever else changes in this run."""
    elapsed: float = 0.0
    """Seconds between the baseline and this reading: counters are judged by rate."""
    counter_rates: Mapping[str, float] = field(default_factory=lambda: dict(COUNTER_RATES))
    counter_keys: str = r"(?i)(drop|discard|err|fcs|crc|stuck)"
    qos_plan: Mapping[str, Any] = field(default_factory=dict)
    """What the plan says every RoCE port runs (host_vars `fabricgen_qos_plan`): `policy`,
    `pfc_priorities`, `ecn` (traffic class, minimum and maximum bytes). Empty: no QoS expectation."""


EMPTY_MEANS_NONE = frozenset({"bfd"})
"""Checks whose empty answer means "none" (NX-API prints no table at all when there is no BFD
neighbor, as on day 0 before the first push)."""


def shape_problems(driver: Driver, check: str, output: Any) -> list[str]:
    """An output whose shape the platform's driver does not know fails the check (an empty
    parse must not pass). The keys a driver knows are its `known_shapes`."""
    known = driver.known_shapes().get(check, ())
    if isinstance(output, Mapping) and any(key in output for key in known):
        return []
    if check in EMPTY_MEANS_NONE and output in ({}, ""):
        return []
    keys = ", ".join(sorted(str(k) for k in output)) if isinstance(output, Mapping) else type(output).__name__
    return [f"{check}: output not recognised (top-level keys: {keys or 'none'}): the check cannot pass on it"]


def bgp_problems(driver: Driver, before: Mapping[str, Any], after: Mapping[str, Any], expect: Expectation) -> list[str]:
    was, now = driver.bgp_sessions(before), driver.bgp_sessions(after)
    peer_of = {str(n["address"]): str(n.get("peer", "")) for n in expect.neighbors}
    waiting = {a for a in expect.two_ended if peer_of.get(a, "") not in expect.peers_on_new_config}
    problems = []
    for address, session in sorted(was.items()):
        if address in waiting:
            continue  # a two-ended change whose far end has not landed its half yet
        if expect.neighbors and address not in peer_of:
            continue  # the plan no longer has this session (a readdressed or removed link)
        if session.established and not now.get(address, Session("missing", 0)).established:
            problems.append(f"bgp: {address} was Established before the change, now {now.get(address, Session('not configured', 0)).state}")
    for neighbor in expect.neighbors:
        address, peer = str(neighbor["address"]), str(neighbor.get("peer", ""))
        current = now.get(address)
        if (
            peer in expect.peers_on_new_config
            and not (current and current.established)
            and not was.get(address, Session("", 0)).established
        ):
            problems.append(f"bgp: {address} ({peer}, already on the new config) is {current.state if current else 'not configured'}")
    for address, session in sorted(now.items()):
        if session.established and session.prefixes < 1:
            problems.append(f"bgp: {address} is Established with 0 prefixes received")
    return problems


def interface_problems(driver: Driver, before: Mapping[str, Any], after: Mapping[str, Any], expect: Expectation) -> list[str]:
    """Fabric interfaces only: one that was up must stay up, a planned one must come up unless it
    was already down. A host port going down (a server rebooting) is not the change's doing."""
    was, now = driver.interface_states(before), driver.interface_states(after)
    problems = []
    for name in expect.fabric_interfaces:
        key = short_interface(name)
        state = now.get(key, "missing")
        if state.lower() in UP:
            continue
        if was.get(key, "").lower() in UP:
            problems.append(f"interfaces: {name} was up before the change, now {state}")
        elif key not in was:
            problems.append(f"interfaces: {name} ({state})")
    return problems


def lldp_problems(driver: Driver, before: Mapping[str, Any], after: Mapping[str, Any], expect: Expectation) -> list[str]:
    was, now = driver.lldp_neighbors(before), driver.lldp_neighbors(after)
    problems = []
    for link in expect.lldp_plan:
        local = short_interface(str(link["interface"]))
        planned = (host_part(link["peer"]), short_interface(str(link["peer_interface"])))
        seen = now.get(local)
        if seen is not None and seen != planned:
            problems.append(
                f"lldp: {link['interface']} sees {seen[0]} {seen[1]}, the cabling plan says {link['peer']} {link['peer_interface']}"
            )
        elif seen is None and local in was:
            problems.append(f"lldp: {link['interface']} saw {was[local][0]} before the change, nothing now")
    return problems


def pfc_problems(driver: Driver, after: Mapping[str, Any], expect: Expectation) -> list[str]:
    """PFC on on every RoCE port and, when the plan says which, on its no-drop priorities only
    (a second paused priority can deadlock the fabric; a missing one drops RoCE)."""
    states = driver.pfc_states(after)
    problems = [
        f"pfc: {name} ({'missing' if short_interface(name) not in states else 'PFC off'})"
        for name in expect.roce_interfaces
        if not states.get(short_interface(name), False)
    ]
    if "pfc_priorities" not in expect.qos_plan:
        return problems
    planned = frozenset(int(p) for p in expect.qos_plan["pfc_priorities"])
    seen = driver.pfc_priorities(after)
    for name in expect.roce_interfaces:
        found = seen.get(short_interface(name))
        if states.get(short_interface(name), False) and found != planned:
            problems.append(f"pfc: {name} pauses priorities {_listed(found or ())}, the plan says {_listed(planned)} only")
    return problems


def _listed(values: Iterable[int]) -> str:
    return ",".join(str(v) for v in sorted(values)) or "none"


def qos_problems(driver: Driver, after: Mapping[str, Any], expect: Expectation) -> list[str]:
    """Every RoCE port runs the plan's QoS policy (a port that lost its service-policy
    classifies RoCE as best effort: no PFC, no ECN for it)."""
    planned = str(expect.qos_plan.get("policy", ""))
    if not planned:
        return []
    policies = driver.qos_policies(after)
    problems = []
    for name in expect.roce_interfaces:
        found = policies.get(short_interface(name))
        if found is None:
            problems.append(f"qos: {name} (missing)")
        elif found != planned:
            problems.append(f"qos: {name} runs policy {found or '(none)'}, the plan says {planned}")
    return problems


def ecn_problems(driver: Driver, after: Mapping[str, Any], expect: Expectation) -> list[str]:
    """Every RoCE port marks ECN on exactly the plan's traffic classes, at its thresholds in bytes."""
    if "ecn" not in expect.qos_plan:
        return []
    planned = {int(e["traffic_class"]): (int(e["min_bytes"]), int(e["max_bytes"])) for e in expect.qos_plan["ecn"]}
    thresholds = driver.ecn_thresholds(after)
    problems = []
    for name in expect.roce_interfaces:
        found = thresholds.get(short_interface(name))
        if found is None:
            problems.append(f"ecn: {name} (missing)")
            continue
        for tc in sorted(set(planned) | set(found)):
            want, got = planned.get(tc), found.get(tc)
            if want == got:
                continue
            said = f"the plan says {want[0]} to {want[1]} bytes" if want else "the plan says no ECN there"
            marks = f"marks ECN from {got[0]} to {got[1]} bytes" if got else "marks no ECN"
            problems.append(f"ecn: {name} traffic class {tc} {marks}, {said}")
    return problems


def counter_problems(driver: Driver, check: str, before: Any, after: Any, expect: Expectation) -> list[str]:
    """Counters that grew faster than the check's rate over the window since the baseline."""
    was, now = driver.counters(before, expect.counter_keys), driver.counters(after, expect.counter_keys)
    rate = float(expect.counter_rates.get(check, 0.0))
    allowed = rate * max(float(expect.elapsed), 1.0)
    return [
        f"{check}: {path} grew from {was[path]} to {value} in {max(float(expect.elapsed), 1.0):.0f} s (threshold {rate:g}/s)"
        for path, value in sorted(now.items())
        if path in was and value - was[path] > allowed
    ]


_CHECKS = ("bgp", "bfd", "interfaces", "lldp", "pfc", "qos", "ecn", "errors", "watchdog")
_STATE_CHECKS = {"pfc": pfc_problems, "qos": qos_problems, "ecn": ecn_problems}
"""Checks of the state after the change against the plan alone (no baseline needed)."""


def bfd_problems(driver: Driver, before: Any, after: Any, expect: Expectation) -> list[str]:
    """A BFD peer up before stays up (the same exemptions as BGP: a two-ended change waiting for
    its far end, a session the plan dropped); one whose far end is already on the new config
    must be up once it exists."""
    was = driver.bfd_states(before or {}) if isinstance(before, Mapping) else {}
    now = driver.bfd_states(after)
    peer_of = {str(n["address"]): str(n.get("peer", "")) for n in expect.neighbors}
    waiting = {a for a in expect.two_ended if peer_of.get(a, "") not in expect.peers_on_new_config}
    problems = []
    for address, state in sorted(now.items()):
        if state == "up" or address in waiting or (expect.neighbors and address not in peer_of):
            continue
        if was.get(address) == "up":
            problems.append(f"bfd: {address} was up before the change, now {state}")
        elif peer_of.get(address, "") in expect.peers_on_new_config:
            problems.append(f"bfd: {address} ({peer_of[address]}, already on the new config) is {state}")
    for address in sorted(set(was) - set(now)):
        if was[address] == "up" and address not in waiting and not (expect.neighbors and address not in peer_of):
            problems.append(f"bfd: {address} was up before the change, now gone")
    return problems


def baseline_problems(driver: Driver, before: Mapping[str, Any], after: Mapping[str, Any], expect: Expectation) -> list[str]:
    """{check: output} before and after the change -> every problem; empty = confirm."""
    problems: list[str] = []
    empty: Mapping[str, Any] = {}
    for check in _CHECKS:
        if check not in after:
            continue
        shape = shape_problems(driver, check, after[check]) or (shape_problems(driver, check, before[check]) if check in before else [])
        if shape:
            problems += shape
        elif check == "bgp":
            problems += bgp_problems(driver, before.get("bgp") or empty, after["bgp"], expect)
        elif check == "bfd":
            problems += bfd_problems(driver, before.get("bfd"), after["bfd"] or empty, expect)
        elif check == "interfaces":
            problems += interface_problems(driver, before.get("interfaces") or empty, after["interfaces"], expect)
        elif check == "lldp":
            problems += lldp_problems(driver, before.get("lldp") or empty, after["lldp"], expect)
        elif check in _STATE_CHECKS:
            problems += _STATE_CHECKS[check](driver, after[check], expect)
        else:
            problems += counter_problems(driver, check, before.get(check) or empty, after[check], expect)
    return problems


def switch_problems(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    neighbors: Iterable[Mapping[str, Any]] = (),
    peers_on_new_config: Iterable[str] = (),
    fabric_interfaces: Iterable[str] = (),
    roce_interfaces: Iterable[str] = (),
    lldp_plan: Iterable[Mapping[str, Any]] = (),
    two_ended: Iterable[str] = (),
    elapsed: float = 0.0,
    counter_rates: Mapping[str, float] | None = None,
    *,
    platform: str,
    qos_plan: Mapping[str, Any] | None = None,
) -> list[str]:
    """The Ansible filter: plain arguments in, problems out (see `baseline_problems`).
    `platform`: the host's `ansible_network_os` (or fabricgen platform name), which picks the
    driver that reads the outputs."""
    expect = Expectation(
        tuple(neighbors or ()),
        frozenset(peers_on_new_config or ()),
        tuple(fabric_interfaces or ()),
        tuple(roce_interfaces or ()),
        tuple(lldp_plan or ()),
        frozenset(two_ended or ()),
        float(elapsed or 0.0),
        {**COUNTER_RATES, **{str(k): float(v) for k, v in (counter_rates or {}).items()}},
        qos_plan=dict(qos_plan or {}),
    )
    return baseline_problems(registry.driver(platform), before or {}, after or {}, expect)


def peers_on_new_config(neighbors: Iterable[Mapping[str, Any]], hostvars: Mapping[str, Any]) -> list[str]:
    """Planned far ends whose host has `fabricgen_switch_on_new_config` set in this run (looked up per
    peer, never by scanning every host: linear in this switch's neighbors)."""
    done = []
    for peer in sorted({str(n.get("peer", "")) for n in neighbors or ()}):
        if peer and peer in hostvars and bool(hostvars[peer].get("fabricgen_switch_on_new_config", False)):
            done.append(peer)
    return done
