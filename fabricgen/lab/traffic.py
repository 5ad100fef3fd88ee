"""Traffic for the lab's drills: flow agents (`lab/flows.py`) in server namespaces, and the loss
they measured, per flow and per drill phase.

One server per leaf sends to one server on every other leaf, several flows each (different
source ports, so the leaves' L4 ECMP hash spreads them over every spine), at a bounded rate for
a bounded time, between the lab's own namespaces only. A packet is lost when its sequence
number never arrived; its send time puts it in the phase it was sent in.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from fabricgen.lab.flows import READY_S
from fabricgen.lab.topology import LabServer, LabTopology

FLOWS_PER_PEER = 4
RATE_PER_FLOW = 25.0
"""Packets per second per flow: 8 senders x 7 peers x 4 flows x 25 = 5,600 packets/s for a 8-leaf fabric."""


@dataclass(frozen=True, slots=True)
class Sender:
    server: LabServer
    address: str
    peers: tuple[str, ...]


def senders(plan: LabTopology) -> list[Sender]:
    """The first server of every leaf, sending to the first server of every other leaf (its first NIC)."""
    first: dict[str, LabServer] = {}
    for server in plan.servers:
        if server.nics:
            first.setdefault(server.nics[0].leaf, server)
    chosen = [first[leaf] for leaf in sorted(first)]
    return [
        Sender(server, server.nics[0].address, tuple(other.nics[0].address for other in chosen if other is not server)) for server in chosen
    ]


@dataclass
class Traffic:
    """Running flow agents; `collect` waits for them and reads what they wrote."""

    plan: LabTopology
    folder: Path
    seconds: float
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def start(self) -> float:
        """Start every agent, wait until all listen, tell them to send; the time they were told."""
        shutil.rmtree(self.folder, ignore_errors=True)  # an earlier drill's files
        self.folder.mkdir(parents=True)
        for sender in senders(self.plan):
            argv = ["ip", "netns", "exec", sender.server.namespace, sys.executable, "-m", "fabricgen.lab.flows"]
            argv += [
                "--address",
                sender.address,
                "--seconds",
                f"{self.seconds:g}",
                "--out",
                str(self.folder / f"{sender.server.name}.json"),
            ]
            argv += ["--flows", str(FLOWS_PER_PEER), "--rate", f"{RATE_PER_FLOW:g}"]
            argv += [arg for peer in sender.peers for arg in ("--peer", peer)]
            self.processes.append(subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + READY_S
        while len(list(self.folder.glob("*.ready"))) < len(self.processes) and time.monotonic() < deadline:
            time.sleep(0.05)
        (self.folder / "go").touch()
        return time.monotonic()

    def stop(self) -> None:
        """Ask every agent to stop sending (SIGTERM); each still writes what it measured."""
        for process in self.processes:
            if process.poll() is None:
                process.terminate()

    def kill(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    def collect(self) -> list[dict[str, object]]:
        """Each agent's JSON (waits at most the run time plus a margin for each)."""
        results = []
        try:
            for process in self.processes:
                process.wait(timeout=self.seconds + 30)
        finally:
            self.kill()
        for path in sorted(self.folder.glob("*.json")):
            results.append(json.loads(path.read_text()))
        return results


@dataclass(frozen=True, slots=True)
class Loss:
    """Packets sent and lost in each phase, and the most one flow lost in all."""

    phases: tuple[str, ...]
    sent: tuple[int, ...]
    lost: tuple[int, ...]
    flows: int
    worst_flow: int

    @property
    def total_lost(self) -> int:
        return sum(self.lost)


def loss(results: Sequence[dict[str, object]], phases: Sequence[tuple[str, float]]) -> Loss:
    """Loss per phase: `phases` are (name, start time) in order; a packet belongs to the last
    phase that started at or before it was sent."""
    received: dict[str, set[int]] = {}
    for result in results:
        got = result["received"]
        assert isinstance(got, dict)
        sent_flows = result["sent"]
        assert isinstance(sent_flows, dict)
        destination = next(iter(sent_flows)).split(">")[0].split(":")[0] if sent_flows else ""
        for source, numbers in got.items():
            received[f"{source}>{destination}"] = set(numbers)
    starts = [start for _, start in phases]
    sent, lost = [0] * len(phases), [0] * len(phases)
    worst, flows = 0, 0
    for result in results:
        sent_flows = result["sent"]
        assert isinstance(sent_flows, dict)
        for key, times in sent_flows.items():
            flows += 1
            arrived = received.get(key, set())
            missing = 0
            for number, when in enumerate(times):
                phase = _phase(starts, when)
                sent[phase] += 1
                if number not in arrived:
                    lost[phase] += 1
                    missing += 1
            worst = max(worst, missing)
    return Loss(tuple(name for name, _ in phases), tuple(sent), tuple(lost), flows, worst)


def _phase(starts: Sequence[float], when: float) -> int:
    index = 0
    for position, start in enumerate(starts):
        if when >= start:
            index = position
    return index
