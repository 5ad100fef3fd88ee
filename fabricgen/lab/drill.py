"""Check 7, the fault drill: one spine, then one cable, go silent; BFD must withdraw the paths.

A silent failure is what BFD exists for, so the drill removes the IPv4 addresses of the spine's
ports (or of one cable's spine end): the links stay up, the leaves see their neighbour stop
answering, and only BFD (or, without it, the BGP hold timer) tells them. The kernel here has no
netem or tc classifiers to drop packets on a veth, and pulling a veth end down would be seen
at once as a carrier loss. The detection time is measured from the fault to the moment each
affected leaf's kernel route loses the paths, and must stay within BFD's planned detection
time plus a polling allowance. Then the addresses come back and the full width must return.
"""

from __future__ import annotations

import datetime
import re
import time
from dataclasses import dataclass

from fabricgen.lab import expect
from fabricgen.lab.kernel import ecmp_width, ip_batch
from fabricgen.lab.lab import Lab
from fabricgen.lab.report import Check
from fabricgen.lab.topology import LabPort, LabSwitch, LabTopology
from fabricgen.lab.verify import check_ecmp, each, poll

ALLOWANCE_S = 0.5
"""Scheduling slack on top of BFD's planned detection time (the time is read from bgpd's log)."""
CONVERGENCE_S = 5.0
"""BGP best-path and zebra's kernel update after the session drops: every leaf recomputes at
once on the same 2 cores (about 2 s for 8 leaves and 1,800 routes here)."""


def _silence(lab: Lab, switch: LabSwitch, ports: list[LabPort]) -> None:
    ip_batch([f"addr flush dev {p.kernel}" for p in ports], lab.namespace(switch.name))


def _restore(lab: Lab, switch: LabSwitch, ports: list[LabPort]) -> None:
    ip_batch([f"addr replace {p.address}/{p.prefix_length} dev {p.kernel}" for p in ports], lab.namespace(switch.name))


@dataclass(frozen=True, slots=True)
class Probe:
    """What one leaf must show after the fault: its BFD peers on the failed cables down, and
    its route to `prefix` (a remote leaf's loopback) down to `width` next hops."""

    leaf: str
    peers: frozenset[str]
    prefix: str
    width: int


def _probes(plan: LabTopology, faults: expect.Faults) -> list[Probe]:
    full, hurt = expect.graph(plan), expect.graph(plan, faults)
    prefixes = expect.leaf_prefixes(plan)
    probes = []
    for leaf in (s for s in plan.switches if s.role == "leaf"):
        failed = frozenset(
            n.address
            for n in leaf.neighbors
            if n.peer_node in faults.switches
            or any(
                (leaf.name, p.kernel) in faults.cables
                for p in leaf.ports
                if p.peer_node == n.peer_node and p.peer_planned == n.peer_planned
            )
        )
        for other, owned in prefixes.items():
            if other != leaf.name and expect.ecmp_width(hurt, leaf, other) < expect.ecmp_width(full, leaf, other):
                probes.append(Probe(leaf.name, failed, owned[0], expect.ecmp_width(hurt, leaf, other)))
                break
    return probes


_LOG_LINE = re.compile(r"^(\d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}) BGP: .*sent to neighbor (\S+) 6/10 \(Cease/BFD Down\)")


def bfd_down_times(log: str, since: float) -> dict[str, float]:
    """When bgpd dropped each session because BFD said down, from the switch's FRR log
    (millisecond timestamps, `log timestamp precision 3`): {neighbor address: epoch seconds}.

    >>> import datetime
    >>> line = "2026/12/01 09:56:54.250 BGP: [HZN6M-XRM1G] %NOTIFICATION(Hard Reset): sent to neighbor 10.1.0.2 6/10 (Cease/BFD Down) 0 bytes"
    >>> t0 = datetime.datetime(2026, 12, 1, 9, 56, 54).timestamp()
    >>> {k: round(v - t0, 3) for k, v in bfd_down_times(line, t0).items()}
    {'10.1.0.2': 0.25}
    """
    times: dict[str, float] = {}
    for line in log.splitlines():
        match = _LOG_LINE.match(line)
        if match:
            when = datetime.datetime.strptime(match.group(1), "%Y/%m/%d %H:%M:%S.%f").timestamp()
            if when >= since:
                times.setdefault(match.group(2), when)
    return times


def _route_width(lab: Lab, probe: Probe) -> int:
    for route in lab.routes(probe.leaf):
        if f"{route.get('dst')}/32" == probe.prefix or route.get("dst") == probe.prefix:
            return ecmp_width(route)
    return 0


def _measure(lab: Lab, probes: list[Probe], limit: float) -> dict[str, float]:
    """Seconds from the fault until each leaf's kernel route has lost the paths (polled; a
    leaf missing did not within `limit`)."""
    start = time.monotonic()
    route_at: dict[str, float] = {}

    def look(probe: Probe) -> None:
        if _route_width(lab, probe) <= probe.width:
            route_at[probe.leaf] = time.monotonic() - start

    while time.monotonic() - start < limit:
        pending = [p for p in probes if p.leaf not in route_at]
        if not pending:
            break
        each(pending, look)
        time.sleep(0.05)
    return route_at


def _bfd_detection(lab: Lab, probes: list[Probe], fault_at: float) -> dict[str, float]:
    """Per leaf: seconds from the fault until its last failed session was dropped by BFD."""
    result = {}
    for probe in probes:
        log = (lab.node_work(probe.leaf) / "frr.log").read_text(errors="replace")
        down = bfd_down_times(log, fault_at - 0.01)
        if probe.peers and all(a in down for a in probe.peers):
            result[probe.leaf] = max(down[a] for a in probe.peers) - fault_at
    return result


def _reachable(lab: Lab, plan: LabTopology, check: Check, label: str) -> None:
    pairs = expect.ping_pairs(plan)
    answered = 0
    for (server, src, dst_server, dst, leaf), ok in each(pairs, lambda p: lab.ping(p[0], p[1], p[3], 1000, count=3, timeout=1)):
        if ok is True:
            answered += 1
        else:
            check.fail(leaf, f"{label}: {server} {src} cannot reach {dst_server} {dst}")
    check.evidence.append(f"{label}: {answered} of {len(pairs)} server pairs reachable")


def _drill(lab: Lab, plan: LabTopology, check: Check, label: str, switch: LabSwitch, ports: list[LabPort], faults: expect.Faults) -> None:
    detection = plan.bfd_interval_ms * plan.bfd_multiplier / 1000 if plan.bfd else 0.0
    bfd_limit = detection + ALLOWANCE_S
    route_limit = (detection if plan.bfd else lab.timers.hold) + CONVERGENCE_S
    probes = _probes(plan, faults)
    fault_at = time.time()
    _silence(lab, switch, ports)
    try:
        route_at = _measure(lab, probes, route_limit + 5)
        bfd_at = _bfd_detection(lab, probes, fault_at) if plan.bfd else {}
        for probe in probes:
            if plan.bfd and probe.peers and bfd_at.get(probe.leaf, float("inf")) > bfd_limit:
                seen = f"after {bfd_at[probe.leaf]:.2f} s" if probe.leaf in bfd_at else "never"
                check.fail(probe.leaf, f"{label}: BFD saw it {seen}, planned detection {detection:.2f} s (limit {bfd_limit:.2f} s)")
            if route_at.get(probe.leaf, float("inf")) > route_limit:
                seen = f"after {route_at[probe.leaf]:.2f} s" if probe.leaf in route_at else "not"
                check.fail(probe.leaf, f"{label}: kernel paths to {probe.prefix} withdrawn {seen} (limit {route_limit:.2f} s)")
        if bfd_at:
            check.evidence.append(f"{label}: BFD down on {len(bfd_at)} leaves in {_span(bfd_at)} (planned detection {detection:.2f} s)")
        if route_at:
            check.evidence.append(f"{label}: kernel ECMP paths withdrawn on {len(route_at)} leaves in {_span(route_at)}")
        hurt = poll(lambda: check_ecmp(lab, plan, faults, number=7), timeout=10)
        for failure in hurt.failures:
            check.fail(failure.device, f"{label}: {failure.message}")
        check.evidence += [f"{label}: {e}" for e in hurt.evidence]
        _reachable(lab, plan, check, label)
    finally:
        _restore(lab, switch, ports)
    back = poll(lambda: check_ecmp(lab, plan, number=7), timeout=30 + 2 * lab.timers.hold)
    for failure in back.failures:
        check.fail(failure.device, f"after {label} recovered: {failure.message}")
    check.evidence.append(f"after {label} recovered: full width back in {back.seconds:.1f} s")


def _span(times: dict[str, float]) -> str:
    values = sorted(times.values())
    return f"{values[0]:.2f}-{values[-1]:.2f} s"


def check_fault_drill(lab: Lab, plan: LabTopology) -> Check:
    check = Check(7, "fault-drill", "Fault drill: a spine and a cable go silent; BFD withdraws their paths, servers stay reachable")
    start = time.monotonic()
    spines = [s for s in plan.switches if s.role == "spine"]
    leaves = [s for s in plan.switches if s.role == "leaf"]
    if len(spines) < 2 or not leaves:
        check.skipped = "needs two spines and a leaf"
        return check
    spine = spines[0]
    fabric_ports = list(spine.ports)
    _drill(lab, plan, check, f"spine {spine.name} down", spine, fabric_ports, expect.Faults(switches=frozenset({spine.name})))
    leaf = leaves[0]
    uplink = next(p for p in leaf.ports if p.role == "uplink")
    upper = plan.switch(uplink.peer_node)
    far = next(p for p in upper.ports if p.peer_node == leaf.name and p.peer_planned == uplink.planned)
    label = f"cable {leaf.name} {uplink.planned} - {upper.name} {far.planned} down"
    _drill(lab, plan, check, label, upper, [far], expect.Faults(cables=frozenset({(leaf.name, uplink.kernel)})))
    check.seconds = time.monotonic() - start
    return check
