"""`lab verify --drill drain|cut`: a change to one spine while traffic flows, drained or not.

`drain`: the first spine is drained (its platform's drain lines, platforms/frr/platform.yml
`drain:`; its neighbours' receiver policy gives its routes LOCAL_PREF 0), the drill waits until
no leaf's kernel route uses it and its transit counter (IP ForwDatagrams of its namespace) stops
moving, then applies the change (a reload: forwarding stops, the routing daemons restart,
forwarding resumes once its sessions are back), undrains it and waits until every leaf's ECMP
includes it again. `cut`: the same change
without the drain. Traffic (`lab/traffic.py`) runs throughout; the loss of every phase is counted
from sequence numbers. The drain drill passes only with 0 packets lost.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from fabricgen.lab.kernel import in_namespace, sysctls
from fabricgen.lab.lab import Lab
from fabricgen.lab.report import Check
from fabricgen.lab.topology import LabSwitch, LabTopology
from fabricgen.lab.traffic import Loss, Traffic, loss

SETTLE_S = 3.0
"""Traffic before the change and after the fabric is whole again."""
ROUTES_S = 30.0
"""Longest wait for the leaves' kernel routes to leave or include the spine."""
TRANSIT_WINDOW_S = 2.0
"""How long the drained spine's forwarded-packet counter is watched."""
TRAFFIC_S = 75.0
"""Upper bound of the traffic's run; the drill stops it when done."""


def forwarded(lab: Lab, switch: str) -> int:
    """IP ForwDatagrams of the switch's namespace: packets it routed through (transit), not its own."""
    text = in_namespace(lab.namespace(switch), ["cat", "/proc/net/snmp"]).stdout
    rows = [line.split() for line in text.splitlines() if line.startswith("Ip:")]
    return int(rows[1][rows[0].index("ForwDatagrams")])


def _transit_rate(lab: Lab, switch: str) -> float:
    first = forwarded(lab, switch)
    time.sleep(TRANSIT_WINDOW_S)
    return (forwarded(lab, switch) - first) / TRANSIT_WINDOW_S


def _paths_via(lab: Lab, plan: LabTopology, spine: LabSwitch) -> dict[str, int]:
    """Per leaf, the kernel routes with a next hop on `spine` (its port addresses), but for the
    spine's own loopback (only it announces that: a drain cannot move it)."""
    gateways = {port.address for port in spine.ports}
    counts = {}
    for leaf in (s for s in plan.switches if s.role == "leaf"):
        routes = [route for route in lab.routes(leaf.name) if route.get("dst") != spine.loopback]
        hops = (route.get("nexthops") or [route] for route in routes)
        counts[leaf.name] = sum(1 for group in hops if any(hop.get("gateway") in gateways for hop in group))
    return counts


def _wait(condition: Callable[[], bool], timeout: float = ROUTES_S) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > timeout:
            return -1.0
        time.sleep(0.2)
    return time.monotonic() - start


def _set_drained(lab: Lab, spine: LabSwitch, drained: bool, lines: list[str]) -> None:
    prefix = "" if drained else "no "
    commands = "".join(f" {prefix}{line}\n" for line in lines)
    lab.apply_frr_commands(spine.name, f"router bgp {spine.asn}\n{commands}exit\n")


def _sessions_up(lab: Lab, spine: LabSwitch) -> bool:
    peers = lab.bgp_summary(spine.name).get("peers", {})
    return len(peers) == len(spine.neighbors) and all(p.get("state") == "Established" for p in peers.values())


def _change(lab: Lab, spine: LabSwitch, *, drained: bool, check: Check) -> None:
    """The change: the spine reloads. Its forwarding stops at once (as a switch's ASIC does when
    it reloads), its routing daemons restart, and it forwards again once its sessions are back."""
    namespace = lab.namespace(spine.name)
    sysctls(namespace, {"net.ipv4.ip_forward": "0"})
    lab.restart_switch(dataclasses.replace(spine, drained=drained))
    if _wait(lambda: _sessions_up(lab, spine)) < 0:
        check.fail(spine.name, "its BGP sessions did not come back after the change")
    sysctls(namespace, {"net.ipv4.ip_forward": "1"})


def run_drill(lab: Lab, plan: LabTopology, mode: str, drain_lines: list[str]) -> Check:
    """The drill on a converged lab; `mode` is `drain` or `cut`."""
    check = Check(8, f"drill-{mode}", f"Traffic drill ({mode}): a change to one spine while traffic flows")
    spine = next(s for s in plan.switches if s.role == "spine")
    before = _paths_via(lab, plan, spine)
    traffic = Traffic(plan, lab.work / "traffic", TRAFFIC_S)
    started = traffic.start()
    phases: list[tuple[str, float]] = []
    try:
        time.sleep(SETTLE_S)
        if mode == "drain":
            _drain_phase(lab, plan, spine, drain_lines, phases, check)
        phases.append(("change", time.monotonic()))
        _change(lab, spine, drained=mode == "drain", check=check)
        if mode == "drain":
            _undrain_phase(lab, plan, spine, drain_lines, phases, before, check)
        else:
            waited = _wait(lambda: _paths_via(lab, plan, spine) == before)
            check.evidence.append(f"{spine.name} changed without a drain: every leaf's ECMP includes it again after {waited:.1f} s")
        phases.append(("after", time.monotonic()))
        time.sleep(SETTLE_S)
    finally:
        traffic.stop()
    _report_loss(check, loss(traffic.collect(), [("before", started), *phases]), mode)
    check.seconds = time.monotonic() - started
    return check


def _drain_phase(lab: Lab, plan: LabTopology, spine: LabSwitch, lines: list[str], phases: list[tuple[str, float]], check: Check) -> None:
    busy = _transit_rate(lab, spine.name)
    phases.append(("drain", time.monotonic()))
    _set_drained(lab, spine, True, lines)
    waited = _wait(lambda: not any(_paths_via(lab, plan, spine).values()))
    if waited < 0:
        check.fail(spine.name, f"leaves still route through it {ROUTES_S:.0f} s after the drain")
        return
    idle = _transit_rate(lab, spine.name)
    check.evidence.append(
        f"{spine.name} drained: no leaf routes through it after {waited:.1f} s; transit {busy:.0f} -> {idle:.0f} packets/s"
    )
    if idle > max(1.0, busy * 0.01):
        check.fail(spine.name, f"still forwards {idle:.0f} packets/s once drained (was {busy:.0f})")


def _undrain_phase(
    lab: Lab, plan: LabTopology, spine: LabSwitch, lines: list[str], phases: list[tuple[str, float]], before: dict[str, int], check: Check
) -> None:
    phases.append(("undrain", time.monotonic()))
    _set_drained(lab, spine, False, lines)
    waited = _wait(lambda: _paths_via(lab, plan, spine) == before)
    if waited < 0:
        check.fail(spine.name, "the leaves' ECMP did not include it again after the undrain")
        return
    busy = _transit_rate(lab, spine.name)
    check.evidence.append(f"{spine.name} undrained: every leaf's ECMP includes it again after {waited:.1f} s; transit {busy:.0f} packets/s")
    if busy <= 0:
        check.fail(spine.name, "carries no transit traffic after the undrain")


def _report_loss(check: Check, measured: Loss, mode: str) -> None:
    for name, sent, lost in zip(measured.phases, measured.sent, measured.lost, strict=True):
        check.evidence.append(f"{name}: sent {sent}, lost {lost}")
    check.evidence.append(f"{measured.flows} flows; the worst flow lost {measured.worst_flow}; lost {measured.total_lost}")
    if mode == "drain" and measured.total_lost:
        check.fail("traffic", f"{measured.total_lost} packet(s) lost during a drained change (the worst flow lost {measured.worst_flow})")


__all__ = ["run_drill"]
