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

import time

from fabricgen.lab import expect
from fabricgen.lab.kernel import ecmp_width, ip_batch
from fabricgen.lab.lab import Lab
from fabricgen.lab.report import Check
from fabricgen.lab.topology import LabPort, LabSwitch, LabTopology
from fabricgen.lab.verify import check_ecmp, each, poll

ALLOWANCE_S = 1.0
"""Polling, zebra and kernel time on a loaded 2-core machine on top of BFD's detection time."""


def _silence(lab: Lab, switch: LabSwitch, ports: list[LabPort]) -> None:
    ip_batch([f"addr flush dev {p.kernel}" for p in ports], lab.namespace(switch.name))


def _restore(lab: Lab, switch: LabSwitch, ports: list[LabPort]) -> None:
    ip_batch([f"addr replace {p.address}/{p.prefix_length} dev {p.kernel}" for p in ports], lab.namespace(switch.name))


def _probe(plan: LabTopology, faults: expect.Faults) -> dict[str, tuple[str, int]]:
    """Per leaf whose width changes: one remote loopback and the width it must drop to."""
    full, hurt = expect.graph(plan), expect.graph(plan, faults)
    prefixes = expect.leaf_prefixes(plan)
    probes = {}
    for leaf in (s for s in plan.switches if s.role == "leaf"):
        for other, owned in prefixes.items():
            if other != leaf.name and expect.ecmp_width(hurt, leaf, other) < expect.ecmp_width(full, leaf, other):
                probes[leaf.name] = (owned[0], expect.ecmp_width(hurt, leaf, other))
                break
    return probes


def _measure(lab: Lab, probes: dict[str, tuple[str, int]], limit: float) -> dict[str, float]:
    """Seconds until each probed leaf's route drops to its width (missing: not within `limit`)."""
    start = time.monotonic()
    pending = dict(probes)
    detected: dict[str, float] = {}
    while pending and time.monotonic() - start < limit:
        for leaf, table in each(list(pending), lab.routes):
            if isinstance(table, list):
                prefix, want = pending[leaf]
                width = next((ecmp_width(r) for r in table if f"{r.get('dst')}/32" == prefix or r.get("dst") == prefix), 0)
                if width <= want:
                    detected[leaf] = time.monotonic() - start
                    del pending[leaf]
        time.sleep(0.05)
    return detected


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
    limit = (detection + ALLOWANCE_S) if plan.bfd else 3 * lab.timers.hold
    probes = _probe(plan, faults)
    _silence(lab, switch, ports)
    try:
        detected = _measure(lab, probes, limit + 5)
        for leaf in sorted(probes):
            if leaf not in detected:
                check.fail(leaf, f"{label}: paths not withdrawn within {limit + 5:.1f} s")
            elif detected[leaf] > limit:
                check.fail(leaf, f"{label}: paths withdrawn after {detected[leaf]:.2f} s, more than {limit:.2f} s")
        if detected:
            times = sorted(detected.values())
            check.evidence.append(
                f"{label}: {len(detected)} leaves withdrew the paths in {times[0]:.2f}-{times[-1]:.2f} s "
                f"(BFD detection {detection:.2f} s planned, limit {limit:.2f} s)"
            )
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
