"""`fabricgen lab verify` on a mixed EOS / NX-OS / SONiC fabric (root only, one boot).

EOS spines and an NX-OS leaf run the lab's FRR rendering of the plan (templates/frr, ports
`swp<cage>`); the SONiC leaves run their own rendered frr.conf unmodified, ports named as
planned (tests/test_lab_sonic.py). The cables between them join a `swp` end to an `Ethernet`
end; sessions between a lab-template switch and a SONiC switch negotiate the lower hold time.
Expected values come from the inventory below, not from the lab code.
"""

from __future__ import annotations

from pathlib import Path

from fabricgen.lab.run import verify
from fabricgen.lab.topology import lab_topology
from fabricgen.pipeline import load_and_plan
from tests.fabrics import fabric, write
from tests.lab_helpers import leftovers, needs_lab, own_lab

pytestmark = needs_lab

# 2 EOS spines, leaves 1-2 SONiC, leaf 3 NX-OS on Cisco hardware; one MTU every platform carries.
MIXED = fabric(
    fabric={"name": "mix1", "transport": "roce"},
    leaves={"count": 3, "platform": "sonic", "nodes": [{"index": 3, "model": "cisco-n9k-9364d-gx2a", "platform": "nxos"}]},
    roce={"mtu": 9100},
)


def test_mixed_eos_nxos_sonic_fabric_passes_every_check(tmp_path: Path) -> None:
    plan = own_lab(load_and_plan(write(tmp_path, MIXED)).plan)
    assert sorted({d.platform for d in plan.devices}) == ["eos", "nxos", "sonic"]
    topology = lab_topology(plan)
    native = sorted(s.name for s in topology.switches if s.native)
    assert native == [run for run in sorted(s.name for s in topology.switches) if "leaf01" in run or "leaf02" in run]
    report = verify(topology)
    assert leftovers(plan.name) == []
    assert report.passed, report.as_text()
    # inventory: 2 spines x 2 links per leaf x 3 leaves, both ends; width 2 spines x 2 links
    assert "24 of 24 planned sessions" in report.checks[0].evidence[0]
    assert "at widths [4]" in report.checks[3].evidence[0]
    assert report.checks[-1].name == "fault-drill" and report.checks[-1].passed
