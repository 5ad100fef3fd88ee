"""Lab timers scaled with the lab's BGP sessions per core, from data (platforms/frr/platform.yml).

Keepalives, BFD packets and LLDP frames flow all the time on every session, from both ends: on a
small machine their rate, not memory, decides whether a lab boots and converges (a starved lab
does not fail cleanly: `vtysh -f` times out applying a config). The rows of `lab_timers` keep
that rate per core at the first row's; the lab then detects failures more slowly, and the report
says which timers ran and what the plan says.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from fabricgen import platforms as registry
from fabricgen.lab.topology import LabTimers, LabTopology


@dataclass(frozen=True, slots=True)
class TimerRow:
    sessions_per_core: int
    timers: LabTimers
    bfd_min_interval_ms: int


def timer_rows() -> tuple[TimerRow, ...]:
    """`lab_timers` of the FRR platform, smallest lab first."""
    rows = [
        TimerRow(
            int(row["sessions_per_core"]),
            LabTimers(int(row["keepalive"]), int(row["hold"]), int(row["connect_retry"]), int(row["lldp_tx_interval"])),
            int(row["bfd_min_interval_ms"]),
        )
        for row in registry.section("lab_timers")["frr"]
    ]
    return tuple(sorted(rows, key=lambda r: r.sessions_per_core))


def sessions(topology: LabTopology) -> int:
    """BGP sessions of the lab: one per switch-to-switch cable (both ends list the neighbor)."""
    return sum(len(s.neighbors) for s in topology.switches) // 2


def row_for(topology: LabTopology, cores: int) -> TimerRow:
    """The first row that carries the lab's sessions per core (the last one past every row:
    capacity.py refuses such a lab before it boots)."""
    per_core = sessions(topology) / max(cores, 1)
    rows = timer_rows()
    return next((row for row in rows if per_core <= row.sessions_per_core), rows[-1])


def scaled(topology: LabTopology, cores: int) -> LabTopology:
    """`topology` with the timers of its row; BFD slowed to the row's floor if the plan is faster."""
    row = row_for(topology, cores)
    interval = max(topology.bfd_interval_ms, row.bfd_min_interval_ms)
    planned = topology.bfd_planned_ms or topology.bfd_interval_ms
    return replace(topology, timers=row.timers, bfd_interval_ms=interval, bfd_planned_ms=planned if interval != planned else 0)


def describe(topology: LabTopology, cores: int) -> str:
    """One line for the report: the timers the lab runs and why."""
    timers = topology.timers
    text = (
        f"lab timers for {sessions(topology):,} BGP sessions on {cores} cores: keepalive {timers.keepalive} s, "
        f"hold {timers.hold} s, LLDP every {timers.lldp_tx_interval} s"
    )
    if topology.bfd and topology.bfd_planned_ms:
        text += f", BFD {topology.bfd_interval_ms} ms (planned {topology.bfd_planned_ms} ms)"
    return text
