"""How OpenSM really routed the tree, read from its log and the switches' forwarding tables.

`<engine> tables configured on all switches` is not enough: a mistyped GUID in
root_guids.conf makes ftree log `ERR AB24: Root switch GUID ... not found`, rank the fabric
from the remaining roots and route every leaf-to-leaf path over the other spines, still
"ftree tables configured" and SUBNET UP. Two checks catch that:

- **fat tree**: no ftree error (`ERR AB..`, opensm/osm_ucast_ftree.c) in the log, and the
  number of rank-0 switches ftree reports (`Fabric has N switches at rank 0 (roots)`) is the
  number of planned spines;
- **spine routes**: every leaf's linear forwarding table (`dump_lfts`, one call for all
  switches) sends the destinations on other leaves through uplinks; each planned spine must
  carry some of those routes, and the spines' shares must be even (ftree spreads destinations
  round-robin over the up ports, so on a symmetric tree the shares differ by at most one per
  leaf).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from fabricgen.core.model import Plan
from fabricgen.infiniband.ibnet import IbFabric, norm_guid
from fabricgen.infiniband.sim import Simulation
from fabricgen.infiniband.verify_report import Check, Report

FTREE_ERROR = re.compile(r"ERR (AB[0-9A-F]{2}): (.*)")
RANK0 = re.compile(r"Fabric has (\d+) switches at rank 0 \(roots\)")
LFT_HEADER = re.compile(r"^Unicast lids .* guid (0x[0-9a-fA-F]+)")
LFT_ENTRY = re.compile(r"^0x[0-9a-fA-F]+ (\d+) : \(Channel Adapter portguid (0x[0-9a-fA-F]+)")
IMBALANCE = 0.25
"""Largest tolerated deviation of one spine's route count from the mean (25 %)."""


def check_tree(report: Report, plan: Plan, log: str) -> None:
    """ftree errors and the rank-0 switch count against the planned spines (ftree only)."""
    ib = plan.infiniband
    assert ib is not None
    if ib.routing_engine != "ftree":
        return
    spines = sum(1 for d in plan.devices if d.role == "spine")
    errors: list[str] = []
    for code, text in FTREE_ERROR.findall(log):
        line = f"ERR {code}: {text.strip()}"
        if line not in errors:
            errors.append(line)
    ranks = RANK0.findall(log)
    roots = int(ranks[-1]) if ranks else None
    bad_rank = roots is not None and roots != spines
    ok = not errors and not bad_rank
    evidence = [f"rank-0 switches (roots): {roots if roots is not None else 'not logged'}, planned spines: {spines}", *errors[:8]]
    hints = []
    if any("AB24" in e or "AB25" in e for e in errors):
        hints.append(
            "a GUID in root_guids.conf is not a switch of the fabric: compare it with ibnetdiscover "
            "and import the real GUIDs (fabricgen ib import-guids), then render again"
        )
    if bad_rank and not hints:
        hints.append("ftree ranked a different set of switches as roots: root_guids.conf must list exactly the spine node GUIDs")
    summary = (
        f"ftree ranked the {spines} planned spines as roots, no ftree errors"
        if ok
        else f"ftree ranked {roots} root(s) for {spines} planned spine(s)"
        if bad_rank
        else f"ftree logged {len(errors)} error(s)"
    )
    report.add(Check("fat tree", ok, summary, evidence, hints))


@dataclass(frozen=True, slots=True)
class SpineRoutes:
    """Leaf-to-leaf routes per spine and per leaf uplink port, from the leaves' LFTs."""

    per_spine: Counter[str]
    per_port: dict[str, Counter[int]]
    wrong: list[str]


def parse_lfts(text: str) -> dict[str, list[tuple[int, str]]]:
    """`dump_lfts` output -> switch node GUID -> [(out port, destination CA port GUID)].

    >>> parse_lfts("Unicast lids [0x0-0x3] of switch Lid 5 guid 0x02fab00020000020 (leaf):\\n"
    ...            "0x0006 001 : (Channel Adapter portguid 0x02fab00030010021: 'h HCA-1')\\n")
    {'0x02fab00020000020': [(1, '0x02fab00030010021')]}
    """
    tables: dict[str, list[tuple[int, str]]] = {}
    current: list[tuple[int, str]] | None = None
    for line in text.splitlines():
        header = LFT_HEADER.match(line)
        if header:
            current = tables.setdefault(norm_guid(header.group(1)), [])
            continue
        entry = LFT_ENTRY.match(line)
        if entry and current is not None:
            current.append((int(entry.group(1)), norm_guid(entry.group(2))))
    return tables


def spine_routes(plan: Plan, found: IbFabric, tables: dict[str, list[tuple[int, str]]]) -> SpineRoutes:
    """Count, per spine, the routes each leaf sends up towards CA ports on other leaves."""
    role = {d.guid: (d.name, d.role) for d in plan.devices}
    by_id = found.nodes
    by_guid = found.by_node_guid()
    leaf_of_port: dict[str, str] = {}
    for ca in by_id.values():
        if ca.kind == "ca":
            for port in ca.ports.values():
                attached = by_id.get(port.remote_id)
                if attached is not None:
                    leaf_of_port[port.port_guid] = attached.node_guid
    per_spine: Counter[str] = Counter()
    per_port: dict[str, Counter[int]] = {}
    wrong: list[str] = []
    for guid, entries in sorted(tables.items()):
        name, kind = role.get(guid, (guid, "?"))
        node = by_guid.get(guid)
        if kind != "leaf" or node is None:
            continue
        ports = per_port.setdefault(name, Counter())
        for out_port, destination in entries:
            if leaf_of_port.get(destination, guid) == guid:
                continue
            remote = by_id.get(node.ports[out_port].remote_id) if out_port in node.ports else None
            next_name, next_role = role.get(remote.node_guid, ("?", "?")) if remote else ("unconnected port", "?")
            if next_role != "spine":
                wrong.append(f"{name} port {out_port} -> {next_name}: route to {destination} does not go up to a spine")
                continue
            per_spine[next_name] += 1
            ports[out_port] += 1
    return SpineRoutes(per_spine, per_port, wrong)


def check_spine_routes(report: Report, plan: Plan, sim: Simulation, found: IbFabric) -> None:
    """Every planned spine carries leaf-to-leaf routes, and evenly (warn on imbalance, with the numbers)."""
    result = sim.diag("dump_lfts", timeout=120)
    if not result.ok:
        report.add(Check("spine routes", False, "dump_lfts failed", [result.describe()]))
        return
    (sim.workdir / "dump_lfts.out").write_text(result.stdout)
    routes = spine_routes(plan, found, parse_lfts(result.stdout))
    spines = sorted(d.name for d in plan.devices if d.role == "spine")
    idle = [s for s in spines if routes.per_spine[s] == 0]
    total = sum(routes.per_spine.values())
    mean = total / len(spines) if spines else 0
    skewed = [s for s in spines if mean and abs(routes.per_spine[s] - mean) > IMBALANCE * mean]
    ok = bool(total) and not idle and not routes.wrong
    evidence = [f"leaf-to-leaf routes per spine: {', '.join(f'{s} {routes.per_spine[s]}' for s in spines)} (of {total})"]
    port_counts = [n for ports in routes.per_port.values() for n in ports.values()]
    if port_counts:
        evidence.append(f"routes per leaf uplink: {min(port_counts)}-{max(port_counts)} on {len(port_counts)} uplink(s)")
    evidence += routes.wrong[:8]
    hints = []
    if idle:
        hints.append(
            f"{', '.join(idle)} carr{'ies' if len(idle) == 1 else 'y'} no route between leaves: "
            "check root_guids.conf (every spine GUID, no typo) and the spine's cables"
        )
    if skewed and ok:
        hints.append(
            f"uneven spine shares ({', '.join(skewed)} more than {IMBALANCE:.0%} off the mean {mean:.1f}): "
            "ftree spreads destinations round-robin over a leaf's up ports, so uneven shares mean unequal "
            "uplinks per spine or missing cables (see the cabling check)"
        )
    summary = (
        f"all {len(spines)} spines carry leaf-to-leaf routes" + (", unevenly" if skewed else ", evenly")
        if ok
        else f"{len(idle)} of {len(spines)} spine(s) carry no leaf-to-leaf route"
        if idle
        else "leaf forwarding tables do not route between leaves through the spines"
    )
    report.add(Check("spine routes", ok, summary, evidence, hints, warn=bool(skewed)))
