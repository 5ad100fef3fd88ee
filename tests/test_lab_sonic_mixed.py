"""`fabricgen lab verify` on the mixed EOS / NX-OS / SONiC example (root only, one boot).

inventories/pod-mixed-sonic: EOS spines and NX-OS leaves run the lab's FRR rendering of the plan
(templates/frr, ports `swp<cage>`); its SONiC leaves run their own rendered frr.conf unmodified,
ports named as planned (tests/test_lab_sonic.py). The cables between them join a `swp` end to
an `Ethernet` end; sessions between a lab-template switch and a SONiC switch negotiate the lower
hold time. Expected values come from the inventory, not from the lab code.
"""

from __future__ import annotations

from fabricgen.lab.run import verify
from fabricgen.lab.topology import lab_topology
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES
from tests.lab_helpers import leftovers, needs_lab, own_lab

pytestmark = needs_lab


def test_mixed_eos_nxos_sonic_example_passes_every_check() -> None:
    plan = own_lab(load_and_plan(EXAMPLES / "pod-mixed-sonic").plan)
    assert sorted({d.platform for d in plan.devices}) == ["eos", "nxos", "sonic"]
    topology = lab_topology(plan)
    # inventory: leaves 3 and 4 are SONiC (node pins), the rest run the lab's FRR rendering
    assert sorted(s.name for s in topology.switches if s.native) == ["pod6-leaf03", "pod6-leaf04"]
    report = verify(topology)
    assert leftovers(plan.name) == []
    assert report.passed, report.as_text()
    # inventory: 2 spines x 8 links per leaf x 4 leaves, both ends; width 2 spines x 8 links
    assert "128 of 128 planned sessions" in report.checks[0].evidence[0]
    assert "at widths [16]" in report.checks[3].evidence[0]
    assert report.checks[-1].name == "fault-drill" and report.checks[-1].passed
