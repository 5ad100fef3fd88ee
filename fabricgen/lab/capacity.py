"""Whether this machine can boot a lab, decided before anything is created.

A lab runs FRR (zebra, bgpd, bfdd) and lldpd per switch. What limits it is CPU for the BGP and
BFD sessions and memory per switch; a lab past either limit does not fail cleanly: configs time
out while being applied. The lab's timers slow down with its sessions per core
(`fabricgen/lab/timers.py`); past the last row of that data a lab is refused. Memory per switch
and per peer: the measurements in README "Lab" (benchmarks/lab_bench.py on a 2-core VM).
"""

from __future__ import annotations

import os
from pathlib import Path

from fabricgen.core.records import record
from fabricgen.lab.timers import sessions, timer_rows
from fabricgen.lab.topology import LabTopology

SWITCH_MIB = 37.0
PEER_MIB = 0.7
"""Daemon memory (Pss) per switch and per BGP peer: 61 and 67 MiB per switch were measured at 12
and 96 switches, both with 43 peers per switch on average; the per-peer share is the earlier
estimate (these two labs cannot separate it), the per-switch share fits the 96-switch lab."""
MEMORY_SHARE = 0.8
"""Of MemAvailable, what the lab may take (the rest stays for the system and other jobs)."""


@record
class Machine:
    cores: int
    available_mib: int


def this_machine() -> Machine:
    """Cores this process may run on and MemAvailable from /proc/meminfo."""
    cores = len(os.sched_getaffinity(0))
    available = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            available = int(line.split()[1]) // 1024
    return Machine(cores, available)


def memory_mib(topology: LabTopology) -> float:
    return SWITCH_MIB * len(topology.switches) + PEER_MIB * 2 * sessions(topology)


def refusal(topology: LabTopology, machine: Machine) -> str | None:
    """Why `machine` cannot boot `topology`, with the largest lab of this shape it can; None if it can.

    >>> from fabricgen.lab.topology import LabTopology
    >>> refusal(LabTopology("f", "fg-f-", (), (), (), "", True, 300, 3), Machine(2, 1000)) is None
    True
    """
    count, peers, need = len(topology.switches), sessions(topology), memory_mib(topology)
    per_core = timer_rows()[-1].sessions_per_core
    cpu_sessions = per_core * machine.cores
    memory = MEMORY_SHARE * machine.available_mib
    if peers <= cpu_sessions and need <= memory:
        return None
    per_switch = need / count if count else SWITCH_MIB
    fits = min(count * cpu_sessions // max(peers, 1), int(memory // per_switch))
    reasons = []
    if peers > cpu_sessions:
        reasons.append(
            f"{peers:,} BGP+BFD sessions, {machine.cores} cores carry about {cpu_sessions:,} ({per_core:,} per core at the slowest lab timers)"
        )
    if need > memory:
        reasons.append(
            f"about {need / 1024:.1f} GiB of daemons, {memory / 1024:.1f} GiB usable of {machine.available_mib / 1024:.1f} GiB available"
        )
    return (
        f"lab {topology.fabric}: {count} switches are more than this machine boots ({'; '.join(reasons)}); "
        f"it boots about {fits} switches of this fabric's shape, {cpu_sessions:,} sessions at most. "
        f"Run the lab on a containerlab host: fabricgen lab export INVENTORY -o DIR (docs/lab.md)"
    )
