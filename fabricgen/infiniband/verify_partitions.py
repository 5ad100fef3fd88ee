"""The partition check of `fabricgen ib verify`: every HCA port, every partition, no sample.

Two sides, because a mistyped member GUID can hide on either:

- **file vs plan vs fabric**: the member GUIDs of each tenant in the rendered partitions.conf
  must be exactly the plan's member port GUIDs, and each must be a CA port of the discovered
  fabric (OpenSM skips a GUID it does not find, silently);
- **what OpenSM programmed**: the P_Key table of every discovered HCA port (`smpquery pkeys`)
  must hold exactly the planned keys: Default (0xffff full, 0x7fff limited) plus 0x8000|P_Key
  for full and P_Key for limited members, nothing else.

The master SM's own port is a full member of Default and of every partition (`SELF=full` in
each rule; opensm(8), PARTITION CONFIGURATION), also when the SM runs on a server: that is the
expected table for that port, not a leak.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

from fabricgen.core.model import Plan, SubnetManager
from fabricgen.infiniband.ibnet import IbFabric, norm_guid
from fabricgen.infiniband.partitions import check_partitions
from fabricgen.infiniband.pkeys import expected_pkeys, table_order
from fabricgen.infiniband.sim import Simulation
from fabricgen.infiniband.verify_report import Check, Report

PARALLEL_QUERIES = 4
"""Concurrent smpquery calls: ibsim serves at most 10 clients, OpenSM and a standby take two."""
GUID_WORD = re.compile(r"^(0x[0-9A-Fa-f]{1,16})(?:=(full|limited|both))?$")


def file_members(text: str) -> dict[str, set[str]]:
    """Partition name -> member port GUIDs of a partitions.conf text (keywords left out)."""
    _problems, rules = check_partitions(text)
    members: dict[str, set[str]] = {}
    for rule in rules:
        found = members.setdefault(rule.name, set())
        for word in rule.members:
            match = GUID_WORD.match(word.strip())
            if match:
                found.add(norm_guid(match.group(1)))
    return members


def file_problems(plan: Plan, text: str | None, fabric_ports: set[str]) -> list[str]:
    """Differences between the rendered members, the plan's members and the discovered CA ports."""
    ib = plan.infiniband
    assert ib is not None
    if text is None:
        return ["no partitions.conf among the rendered files"] if ib.partitions else []
    members = file_members(text)
    host_of = {n.port_guid: s.name for s in plan.servers for n in s.nics}
    problems = []
    for part in ib.partitions:
        listed = members.get(part.name)
        if listed is None:
            problems.append(f"{part.name}: no rule in partitions.conf")
            continue
        planned = set(part.port_guids)
        problems += [f"{part.name}: {g} is in partitions.conf but not a planned member" for g in sorted(listed - planned)]
        problems += [
            f"{part.name}: planned member {host_of.get(g, g)} ({g}) is missing from partitions.conf" for g in sorted(planned - listed)
        ]
        problems += [f"{part.name}: member {g} is not an HCA port of the fabric (OpenSM skips it)" for g in sorted(listed - fabric_ports)]
    return problems


def _pkeys(sim: Simulation, lid: int) -> list[int] | None:
    """The port's P_Key table in index order, empty entries left out (they only trail)."""
    result = sim.diag("smpquery", "pkeys", str(lid), timeout=30)
    if not result.ok:
        return None
    return [int(v, 16) for v in re.findall(r"0x[0-9a-fA-F]{4}\b", result.stdout) if int(v, 16)]


def _shown(problems: list[str], limit: int = 16) -> list[str]:
    """The first `limit` problems of each kind (P_Key tables first, then the file), and a count."""
    tables = [p for p in problems if "P_Key" in p][:limit]
    files = [p for p in problems if "P_Key" not in p][:limit]
    rest = len(problems) - len(tables) - len(files)
    return tables + files + ([f"... {rest} more"] if rest > 0 else [])


def _fmt(keys: set[int] | list[int] | None) -> str:
    return "no answer" if keys is None else " ".join(f"0x{k:04x}" for k in sorted(keys)) or "none"


def read_tables(sim: Simulation, lids: dict[str, int], guids: list[str]) -> dict[str, list[int] | None]:
    """The P_Key table of each port (None when it did not answer), a few queries at a time."""
    with ThreadPoolExecutor(max_workers=PARALLEL_QUERIES) as pool:
        tables = list(pool.map(lambda g: _pkeys(sim, lids[g]) if g in lids else None, guids))
    return dict(zip(guids, tables, strict=True))


def check_partition_tables(
    report: Report, plan: Plan, sim: Simulation, lids: dict[str, int], sm: SubnetManager, rendered: str | None, found: IbFabric
) -> None:
    """Compare every port's P_Key table with the plan, and the rendered members with plan and fabric."""
    ib = plan.infiniband
    assert ib is not None
    fabric_ports = {p.port_guid for n in found.nodes.values() if n.kind == "ca" for p in n.ports.values() if p.port_guid}
    bad: list[str] = []
    wanted = expected_pkeys(plan, sm)
    name_of = {n.port_guid: s.name for s in plan.servers for n in s.nics} | {s.port_guid: s.host for s in ib.subnet_managers}
    guids = sorted(fabric_ports | set(wanted))
    tables = read_tables(sim, lids, guids)
    for guid in guids:
        want = wanted.get(guid)
        have = tables[guid]
        if want is None:
            bad.append(f"unplanned port {guid} has P_Keys {_fmt(have)}")
        elif have is None or set(have) != want:
            bad.append(f"{name_of.get(guid, guid)} ({guid}): P_Keys {_fmt(have)}, planned {_fmt(want)}")
        elif have != table_order(want):
            bad.append(
                f"{name_of.get(guid, guid)} ({guid}): P_Key indexes {' '.join(f'{i}:0x{k:04x}' for i, k in enumerate(have))}, "
                f"the host page says {' '.join(f'{i}:0x{k:04x}' for i, k in enumerate(table_order(want)))} (NCCL_IB_PKEY)"
            )
    bad += file_problems(plan, rendered, fabric_ports)
    evidence = [
        f"P_Key tables of {len(guids)} HCA port(s) read back, {len(ib.partitions)} tenant partition(s), "
        "indexes as on the host pages (NCCL_IB_PKEY)"
    ]
    for part in ib.partitions:
        key = 0x8000 | part.pkey if part.membership == "full" else part.pkey
        evidence.append(f"{part.name} 0x{key:04x}: {len(part.port_guids)} member port(s)")
    evidence.append(f"{sm.host} (master SM port): {_fmt(tables.get(sm.port_guid))}, full member of every partition (SELF=full)")
    ok = not bad
    hints = []
    if not ok:
        hints.append("a member GUID that is not in the fabric is a typo or a stale GUID: import the real ones (fabricgen ib import-guids)")
        hints.append("see the OpenSM log check: a partitions.conf parse error makes OpenSM fall back to an open Default partition")
    summary = (
        f"every port holds exactly its planned P_Keys ({len(ib.partitions)} tenant(s), Default 0x{0xFFFF if ib.default_membership == 'full' else 0x7FFF:04x})"
        if ok
        else f"{len(bad)} problem(s) with partition membership"
    )
    report.add(Check("partitions", ok, summary, evidence + _shown(bad), hints))
