"""Plans for the analyze tests, built through the normal pipeline from generated inventories,
and the plan -> arrays derivation (`analyze.planview`) checked against them: two tiers, rails,
three tiers with pods and planes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from fabricgen.analyze.planview import fabric_of
from fabricgen.analyze.topology import TopologyError, place
from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan
from tests.conftest import example_plan


def inventory(
    *,
    name: str = "t1",
    transport: str = "roce",
    spines: int = 2,
    leaves: int = 1,
    per_spine: int = 8,
    per_leaf: int = 2,
    ports_per_server: int = 8,
    speed: str = "400G",
    max_ratio: float = 1.0,
    jobs: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An inventory dict of a two-tier fabric of 64 x 400G switches (Arista 7060DX5 for RoCE,
    NVIDIA QM9700 for InfiniBand)."""
    model = "arista-7060dx5-64s" if transport == "roce" else "nvidia-qm9700"
    doc: dict[str, Any] = {
        "fabric": {"name": name, "transport": transport},
        "spines": {"count": spines, "model": model},
        "leaves": {"count": leaves, "model": model},
        "uplinks": {"per_spine": per_spine, "speed": "400G"},
        "servers": {"per_leaf": per_leaf, "ports_per_server": ports_per_server, "speed": speed},
        "addressing": {"loopbacks": "10.0.0.0/22", "fabric": "10.1.0.0/18", "servers": "10.2.0.0/16"},
        "oversubscription": {"max_ratio": max_ratio},
    }
    if transport == "roce":
        doc["spines"]["platform"] = doc["leaves"]["platform"] = "eos"
    else:
        doc["opensm"] = {"version": "3.3.24"}  # NDR needs OpenSM 3.3.24+ (data/subnet_managers.yml)
    if jobs is not None:
        doc["jobs"] = jobs
    return doc


def write_inventory(folder: Path, doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "fabric.yml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def plan_of(tmp_path: Path, doc: dict[str, Any]) -> Plan:
    return load_and_plan(write_inventory(tmp_path / doc["fabric"]["name"], doc)).plan


def big_inventory() -> dict[str, Any]:
    """The issue's 2-tier 2,048-GPU fabric: 32 spines x 64 leaves of 64-port switches,
    4 servers x 8 NICs per leaf, one 400G uplink to every spine (1:1)."""
    return inventory(name="big", spines=32, leaves=64, per_spine=1, per_leaf=4, ports_per_server=8)


def test_small_fabric_arrays(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, inventory(spines=2, leaves=3, per_spine=8, per_leaf=2))
    fabric = fabric_of(plan)
    assert fabric.leaves == ("t1-leaf01", "t1-leaf02", "t1-leaf03")
    assert fabric.spines == ("t1-spine01", "t1-spine02")
    assert fabric.tiers == 2 and fabric.pods == 1
    assert fabric.leaf_up.shape == (3, 2, 8)
    assert fabric.n_links == 2 * 3 * 2 * 8
    assert fabric.port_leaf.tolist() == [0] * 16 + [1] * 16 + [2] * 16
    assert fabric.port_key.tolist() == list(range(16)) * 3
    assert fabric.server_nics.tolist() == [8] * 6
    assert fabric.server_nic_gbps.tolist() == [3200.0] * 6
    assert fabric.leaf_share.tolist() == [1.0, 1.0, 1.0]
    assert np.all(fabric.link_gbps == 400.0)
    # Every directed link appears once in the up tables and once in the down tables.
    assert sorted(fabric.leaf_up.ravel().tolist() + fabric.spine_down.ravel().tolist()) == list(range(fabric.n_links))


def test_placement_is_truthful_about_leaves(tmp_path: Path) -> None:
    # 2 servers x 8 x 400G = 6400G down, 2 spines x 4 x 400G = 3200G up: 2:1.
    plan = plan_of(tmp_path, inventory(spines=2, leaves=2, per_spine=4, per_leaf=2, max_ratio=2.0))
    fabric = fabric_of(plan)
    assert fabric.leaf_share.tolist() == [0.5, 0.5]
    one_leaf = place(fabric, 16, 8)
    assert (one_leaf.servers, one_leaf.leaves, one_leaf.line_gbps) == (2, 1, 400.0)
    two_leaves = place(fabric, 32, 8)
    assert (two_leaves.servers, two_leaves.leaves) == (4, 2)
    with pytest.raises(TopologyError, match="needs 5 servers"):
        place(fabric, 33, 8)


def test_rail_example_spans_rail_leaves() -> None:
    """pod-rail: 2 units x 32 servers, NIC i on the unit's rail leaf i. One unit's 256 GPUs sit
    on 8 leaves (the old placement line said "1 leaf"), both units on all 16."""
    fabric = fabric_of(example_plan("pod-rail"))
    assert fabric.rails == 8
    assert fabric.port_leaf[:8].tolist() == list(range(8))
    unit = place(fabric, 256, 8)
    assert (unit.servers, unit.leaves, unit.rail_attached) == (32, 8, True)
    assert "NIC ports on 8 leaves (rail-attached" in unit.describe()
    assert place(fabric, 512, 8).leaves == 16


def test_three_tier_example_tables() -> None:
    """cluster-3tier: 8 pods x 16 leaves x 8 spines x 4 cables; spine j of every pod in plane j
    with 8 super-spines x 4 cables of 800G (numbers from the inventory's comments)."""
    fabric = fabric_of(example_plan("cluster-3tier"))
    assert fabric.tiers == 3 and fabric.pods == 8
    assert fabric.leaf_up.shape == (128, 8, 4)
    assert fabric.spine_down.shape == (64, 16, 4)
    assert fabric.spine_up.shape == (64, 8, 4)
    assert fabric.ss_down.shape == (64, 8, 4)
    assert set(fabric.link_gbps[fabric.spine_up.ravel()].tolist()) == {800.0}
    # The super-spine's spine in pod p is in the same plane as the spine that went up to it.
    spine = int(fabric.leaf_up_spine[0, 3])
    ss = int(fabric.spine_up_ss[spine, 0])
    assert int(fabric.ss_down_spine[ss, 5]) in np.flatnonzero(fabric.spine_pod == 5)
    assert fabric.spines[int(fabric.ss_down_spine[ss, 5])].endswith("spine04")
    assert place(fabric, 4096, 8).pods == 8


def test_big_fabric_builds_through_the_pipeline(tmp_path: Path) -> None:
    fabric = fabric_of(plan_of(tmp_path, big_inventory()))
    assert fabric.leaf_up.shape == (64, 32, 1)
    assert int(fabric.server_nics.sum()) == 2048
