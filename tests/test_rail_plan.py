"""Rail-optimised attachment: NIC i of every server of a scalable unit lands on the unit's
rail leaf i, in the plan, the cabling and the leaves' interfaces; unbalanced rails are flagged."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from fabricgen.core.diagnostics import FabricError
from fabricgen.pipeline import load_and_plan
from tests.conftest import example_plan
from tests.fabrics import fabric, write


def test_pod_rail_example_is_rail_optimised() -> None:
    plan = example_plan("pod-rail")
    assert plan.rails == 8
    leaves = {d.name: d for d in plan.devices if d.role == "leaf"}
    assert len(plan.servers) == 2 * 32
    for server in plan.servers:
        assert [n.nic for n in server.nics] == list(range(1, 9))
        for nic in server.nics:
            leaf = leaves[nic.leaf]
            assert nic.rail == nic.nic
            assert leaf.index == (server.unit - 1) * 8 + nic.rail
            port = [i for i in leaf.interfaces if i.name == nic.leaf_interface]
            assert port and port[0].peer_device == server.name and port[0].peer_interface == f"nic{nic.nic}"
            assert port[0].address == nic.gateway
    # Every leaf carries one NIC of each of its unit's 32 servers, and one cable each.
    cables = Counter(link.z.device for link in plan.links if link.kind == "server-leaf")
    assert set(cables.values()) == {32} and len(cables) == 16
    per_leaf_servers = Counter(nic.leaf for s in plan.servers for nic in s.nics)
    assert set(per_leaf_servers.values()) == {32}
    assert all(o.ratio == 1.0 for o in plan.oversubscription)


def test_leaf_attachment_is_unchanged_by_rail_fields() -> None:
    plan = example_plan("pod-roce-400g")
    assert plan.rails == 0
    assert all(s.unit == 0 and {n.leaf for n in s.nics} == {s.leaf} and {n.rail for n in s.nics} == {0} for s in plan.servers)


def rail_fabric(leaves: int, ports: int, rails: int, per_leaf: int = 4) -> dict[str, object]:
    return fabric(
        leaves={"count": leaves},
        uplinks={"per_spine": 2, "speed": "400G"},
        servers={"attachment": "rail", "per_leaf": per_leaf, "ports_per_server": ports, "rails": rails, "name": "g-su{unit}-{index:02d}"},
    )


def diagnostics(tmp: Path, doc: dict[str, object]) -> list[str]:
    with pytest.raises(FabricError) as caught:
        load_and_plan(write(tmp, doc))
    return [f"{d.path}: {d.message}" for d in caught.value.diagnostics]


def test_missing_rail_leaves_are_flagged(tmp_path: Path) -> None:
    found = diagnostics(tmp_path, rail_fabric(leaves=6, ports=4, rails=4))
    rails = [m for m in found if "unbalanced rails" in m]
    assert len(rails) == 1
    assert rails[0].startswith("leaves.count:") and "4 server(s)" in rails[0] and "rail(s) 3-4 of 1-4" in rails[0]
    assert "g-su2-01" in rails[0]


def test_nics_that_do_not_divide_over_the_rails_are_flagged(tmp_path: Path) -> None:
    found = diagnostics(tmp_path, rail_fabric(leaves=6, ports=4, rails=3, per_leaf=2))
    rails = [m for m in found if "unbalanced rails" in m]
    assert rails == [
        "servers.ports_per_server: unbalanced rails: 4 server(s) (g-su1-01, g-su1-02, g-su2-01, g-su2-02) have 2/1/1 NICs on rails 1-3"
    ]


def test_balanced_rails_in_three_tiers(tmp_path: Path) -> None:
    doc = rail_fabric(leaves=4, ports=2, rails=2)
    doc.update(
        pods={"count": 2},
        superspines={"count": 2, "model": "arista-7060dx5-64s", "platform": "eos", "per_spine": 4},
    )
    doc["leaves"]["name"] = "t1-p{pod}-leaf{index:02d}"  # type: ignore[index]
    doc["spines"]["name"] = "t1-p{pod}-spine{index:02d}"  # type: ignore[index]
    doc["servers"]["name"] = "g-p{pod}-su{unit}-{index:02d}"  # type: ignore[index]
    plan = load_and_plan(write(tmp_path, doc)).plan
    assert len(plan.servers) == 2 * 2 * 4
    for server in plan.servers:
        assert {n.leaf for n in server.nics} == {f"t1-p{server.pod}-leaf{(server.unit - 1) * 2 + r:02d}" for r in (1, 2)}
