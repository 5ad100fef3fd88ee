"""Checks of three-tier and rail-optimised plans (named in `checks/registry.py`).

Like every check they read the finished plan only, and each is linear in its size.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.inputs import Inputs


def _ranges(numbers: list[int]) -> str:
    """[1, 2, 3, 5] -> '1-3, 5'."""
    out: list[str] = []
    for n in sorted(numbers):
        if out and n == int(out[-1].split("-")[-1]) + 1:
            out[-1] = f"{out[-1].split('-')[0]}-{n}"
        else:
            out.append(str(n))
    return ", ".join(out)


def _names(names: list[str], limit: int = 4) -> str:
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def check_rails(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """With rail attachment every server must have the same number of NICs on each of the
    unit's rails: a missing rail leaf (leaves.count not a multiple of rails) or NICs that do
    not divide evenly over the rails make collective traffic of one rank cross the spines."""
    if not plan.rails:
        return
    expected = range(1, plan.rails + 1)
    missing: dict[tuple[str, ...], list[str]] = defaultdict(list)
    uneven: dict[tuple[int, ...], list[str]] = defaultdict(list)
    for server in plan.servers:
        counts = Counter(nic.rail for nic in server.nics)
        absent = tuple(str(r) for r in expected if r not in counts)
        if absent:
            missing[absent].append(server.name)
        elif len(set(counts.values())) > 1:
            uneven[tuple(counts[r] for r in expected)].append(server.name)
    for absent, names in sorted(missing.items()):
        yield source.diagnostic(
            ("leaves", "count"),
            f"unbalanced rails: {len(names)} server(s) ({_names(names)}) have no NIC on rail(s) {_ranges([int(r) for r in absent])} of 1-{plan.rails}: their scalable unit lacks those rail leaves",
            hint=f"make the leaves of each pod a multiple of servers.rails ({plan.rails})",
        )
    for per_rail, names in sorted(uneven.items()):
        yield source.diagnostic(
            ("servers", "ports_per_server"),
            f"unbalanced rails: {len(names)} server(s) ({_names(names)}) have {'/'.join(map(str, per_rail))} NICs on rails 1-{plan.rails}",
            hint=f"make servers.ports_per_server a multiple of servers.rails ({plan.rails})",
        )


def check_tier_asns(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """eBGP across three tiers needs one ASN per group: every leaf, each pod's spines, each
    plane's super-spines. An ASN shared between groups makes BGP drop paths as AS-path loops.
    (Leaf duplicates and leaf/spine clashes are reported by `check_duplicates`.)"""
    if not plan.pods:
        return
    owners: dict[int, set[str]] = defaultdict(set)
    for device in plan.devices:
        if device.role == "spine" and device.asn:
            owners[device.asn].add(f"pod {device.pod} spines")
        elif device.role == "superspine" and device.asn:
            owners[device.asn].add(f"plane {device.plane} super-spines")
    for device in plan.devices:
        if device.role == "leaf" and device.asn in owners and any(o.startswith("plane") for o in owners[device.asn]):
            owners[device.asn].add(device.name)
    for asn, groups in sorted(owners.items()):
        if len(groups) > 1:
            yield source.diagnostic(
                ("bgp",),
                f"ASN {asn} is shared by {', '.join(sorted(groups))}",
                hint="spines get spine_asn + pod - 1, super-spines superspine_asn + plane - 1: keep the ranges apart",
            )
