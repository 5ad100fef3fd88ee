"""The traffic drill on real FRR (root only): a change to one spine of `pod-roce-400g` while
traffic flows loses nothing when the spine is drained first, and loses packets when it is not.
One lab serves both drills (the drain drill leaves the fabric whole). Expected figures come from
the inventory: 8 leaves, so 8 senders x 7 peers x 4 flows; the spine's transit must stop."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from fabricgen import platforms as registry
from fabricgen.lab.drain_drill import run_drill
from fabricgen.lab.lab import Lab
from fabricgen.lab.run import run_checks
from fabricgen.lab.topology import LabTopology, lab_topology
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES
from tests.lab_helpers import leftovers, needs_lab, own_lab

pytestmark = needs_lab
LEAVES = 8
FLOWS = LEAVES * (LEAVES - 1) * 4


@pytest.fixture(scope="module")
def pod1() -> Iterator[tuple[LabTopology, Lab]]:
    topology = lab_topology(own_lab(load_and_plan(EXAMPLES / "pod-roce-400g").plan))
    with Lab(topology) as lab:
        report = run_checks(lab, topology, ["bgp", "ecmp"])
        assert report.passed, report.as_text()
        yield topology, lab
    assert leftovers(topology.fabric) == []


def _lines() -> list[str]:
    return list(registry.section("drain")["frr"]["bgp_lines"])


def test_drained_change_loses_nothing(pod1: tuple[LabTopology, Lab]) -> None:
    topology, lab = pod1
    check = run_drill(lab, topology, "drain", _lines())
    text = "\n".join(check.evidence)
    assert check.passed, text + "\n" + "\n".join(f.message for f in check.failures)
    assert f"{FLOWS} flows; the worst flow lost 0; lost 0" in text
    assert "drained: no leaf routes through it" in text and "undrained: every leaf's ECMP includes it again" in text


def test_abrupt_change_loses_packets(pod1: tuple[LabTopology, Lab]) -> None:
    topology, lab = pod1
    check = run_drill(lab, topology, "cut", _lines())
    lost = int(check.evidence[-1].rsplit("lost ", 1)[1])
    assert lost > 0, "\n".join(check.evidence)
