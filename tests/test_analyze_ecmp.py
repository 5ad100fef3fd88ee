"""The flow simulation: balls-into-bins against the exact expectation, ftree on a leaf-ordered
ring, NCCL's flows per NIC, rails and three tiers, fixed seeds, and the 2,048-GPU fabric built
through the normal pipeline."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fabricgen.analyze import ecmp
from fabricgen.analyze.planview import fabric_of
from fabricgen.analyze.topology import Fabric
from tests.test_analyze_plans import big_inventory, inventory, plan_of


def expected_max_load(balls: int, bins: int) -> Fraction:
    """Exact E[max load] of `balls` thrown uniformly into `bins`:
    P(max <= k) = balls! / bins^balls * [x^balls] (sum_{j<=k} x^j / j!)^bins."""

    def at_most(k: int) -> Fraction:
        poly = [Fraction(1)]
        term = [Fraction(1, math.factorial(j)) for j in range(k + 1)]
        for _ in range(bins):
            nxt = [Fraction(0)] * min(len(poly) + k, balls + 1)
            for i, a in enumerate(poly):
                for j, b in enumerate(term):
                    if i + j <= balls:
                        nxt[i + j] += a * b
            poly = nxt
        coefficient = poly[balls] if balls < len(poly) else Fraction(0)
        return coefficient * math.factorial(balls) / Fraction(bins) ** balls

    return sum((1 - at_most(k) for k in range(balls)), Fraction(0))


def test_exact_expectation_by_hand() -> None:
    # 2 balls, 2 bins: max 2 with probability 1/2, else 1.
    assert expected_max_load(2, 2) == Fraction(3, 2)
    # 3 balls, 3 bins: 27 outcomes; 3 put all in one bin (max 3), 6 are permutations (max 1), 18 have max 2.
    assert expected_max_load(3, 3) == Fraction(3 * 3 + 6 * 1 + 18 * 2, 27)


def two_leaves(spines: int, per_spine: int = 1) -> Fabric:
    """Two leaves joined by `spines` spines: every off-leaf flow is one ball, every uplink a bin.
    Physical link i = (leaf * spines + spine) * per_spine + cable; 2i goes up, 2i+1 comes down."""
    links = 2 * spines * per_spine
    up = 2 * np.arange(links, dtype=np.int64).reshape(2, spines, per_spine)
    return Fabric(
        transport="roce",
        leaves=("a", "b"),
        spines=tuple(f"s{i}" for i in range(spines)),
        superspines=(),
        link_gbps=np.full(2 * links, 100.0),
        leaf_pod=np.zeros(2, np.int64),
        leaf_local=np.arange(2, dtype=np.int64),
        spine_pod=np.zeros(spines, np.int64),
        leaf_up=up,
        leaf_up_spine=np.tile(np.arange(spines, dtype=np.int64), (2, 1)),
        spine_down=(up + 1).transpose(1, 0, 2).copy(),
        spine_up=np.zeros((spines, 0, 1), np.int64),
        spine_up_ss=np.zeros((spines, 0), np.int64),
        ss_down=np.zeros((0, 1, 1), np.int64),
        ss_down_spine=np.zeros((0, 1), np.int64),
        port_leaf=np.repeat(np.arange(2, dtype=np.int64), 64),
        port_key=np.tile(np.arange(64, dtype=np.int64), 2),
        server_first_port=np.array([0, 64], np.int64),
        server_nics=np.array([64, 64], np.int64),
        server_nic_gbps=np.array([6400.0, 6400.0]),
        leaf_share=np.ones(2),
        spine_share=np.ones(spines),
    )


def flows_between_leaves(count: int) -> ecmp.Flows:
    return ecmp.Flows(np.zeros(count, np.int64), np.ones(count, np.int64), np.arange(count, dtype=np.int64), 100.0, count)


@pytest.mark.parametrize(("balls", "bins"), [(8, 32), (16, 16), (12, 4)])
def test_ecmp_reproduces_balls_into_bins(balls: int, bins: int) -> None:
    trials = 20000
    loads = ecmp.route(two_leaves(bins), flows_between_leaves(balls), "ecmp", trials, np.random.default_rng(7))
    peak = loads.utilisation.max(axis=1)  # a flow of 100G on a 100G link: utilisation = flows per link
    exact = float(expected_max_load(balls, bins))
    standard_error = peak.std() / math.sqrt(trials)
    assert abs(peak.mean() - exact) < 4 * standard_error, (peak.mean(), exact)
    assert np.all(loads.ideal == balls / bins)


def test_ftree_spreads_distinct_destinations() -> None:
    loads = ecmp.route(two_leaves(32), flows_between_leaves(32), "ftree", 1, np.random.default_rng(0))
    assert loads.utilisation.max() == 1.0


def test_parallel_links_are_separate_bins() -> None:
    # 4 spines x 2 parallel links: ftree sends destination k over spine k % 4, link (k // 4) % 2.
    fabric = two_leaves(4, per_spine=2)
    loads = ecmp.route(fabric, flows_between_leaves(8), "ftree", 1, np.random.default_rng(0))
    util = loads.utilisation[0]
    up, down = fabric.leaf_up[0].ravel(), fabric.spine_down[:, 1, :].ravel()
    assert util[up].tolist() == [1.0] * 8
    assert util[down].tolist() == [1.0] * 8
    assert util.sum() == 16.0


def test_leaf_ordered_ring_on_a_plan(tmp_path: Path) -> None:
    # 4 leaves x 2 servers x 8 NICs, 2 spines x 8 links: each leaf sends 8 ring flows (one per rail) off-leaf.
    fabric = fabric_of(plan_of(tmp_path, inventory(spines=2, leaves=4, per_spine=8, per_leaf=2)))
    flows = ecmp.ring_flows(fabric, 8, 8, 400.0)
    assert flows.count == 64
    ftree = ecmp.route(fabric, flows, "ftree", 1, np.random.default_rng(0))
    assert ftree.crossing.tolist() == [32.0]
    assert ftree.utilisation.max() == 1.0
    hashed = ecmp.route(fabric, flows, "ecmp", 500, np.random.default_rng(0))
    assert hashed.utilisation.max(axis=1).mean() > 1.5  # 8 flows into 16 uplinks collide most of the time
    split = ecmp.route(fabric, ecmp.ring_flows(fabric, 8, 8, 400.0, split=8), "ecmp", 500, np.random.default_rng(0))
    assert split.utilisation.max(axis=1).mean() < hashed.utilisation.max(axis=1).mean()


def test_fixed_seeds_give_identical_output(tmp_path: Path) -> None:
    fabric = fabric_of(plan_of(tmp_path, inventory(spines=2, leaves=4, per_spine=8, per_leaf=2)))
    first = ecmp.simulate(fabric, 8, 8, 400.0, trials=64, seed=3)
    again = ecmp.simulate(fabric, 8, 8, 400.0, trials=64, seed=3)
    other = ecmp.simulate(fabric, 8, 8, 400.0, trials=64, seed=4)
    assert first == again
    assert [r.max_util_per_trial for r in first if r.routing == "ecmp"] != [r.max_util_per_trial for r in other if r.routing == "ecmp"]
    assert [(r.pattern, r.routing) for r in first] == [(p, r) for p in ecmp.PATTERNS for r in ecmp.ROUTINGS]


def test_all_to_all_demand_is_split_over_peers(tmp_path: Path) -> None:
    fabric = fabric_of(plan_of(tmp_path, inventory(spines=2, leaves=2, per_spine=8, per_leaf=2)))
    flows = ecmp.all_to_all_flows(fabric, 4, 8, 400.0)
    assert flows.count == 4 * 3 * 8
    assert flows.demand_gbps == pytest.approx(400.0 / 3)
    loads = ecmp.route(fabric, flows, "ftree", 1, np.random.default_rng(0))
    # Each leaf sends 2 servers x 8 rails x 2 off-leaf peers x 400/3 G over 16 x 400G uplinks.
    assert loads.ideal[0] == pytest.approx(2 * 8 * 2 * (400 / 3) / (16 * 400))


def test_two_thousand_gpu_fabric(tmp_path: Path) -> None:
    """The issue's size: 2,048 GPUs on 32 spines x 64 leaves. Speed is measured by
    benchmarks/analyze_2048.py, not here; this checks the shape of the answer."""
    fabric = fabric_of(plan_of(tmp_path, big_inventory()))
    results = {(r.pattern, r.routing): r for r in ecmp.simulate(fabric, 256, 8, 400.0, trials=32, seed=1)}
    assert results[("ring", "ftree")].path_factor_p99 == 1.0
    assert results[("ring", "ecmp")].path_factor_mean > 2.0  # one flow per NIC at line rate: collisions halve it
    assert results[("all-to-all", "ftree")].path_factor_mean == 1.0
    assert 1.0 < results[("all-to-all", "ecmp")].path_factor_mean < results[("ring", "ecmp")].path_factor_mean
    assert results[("all-to-all", "ecmp")].flows == 2048 * 255


def test_more_flows_per_nic_spread_better(tmp_path: Path) -> None:
    """NCCL's default of 2 channels per NIC halves each flow; 4 queue pairs per connection halve
    it again: the busiest link's load falls towards the ideal (independent calculation: 8 NICs
    at 400G leave each leaf over 16 x 400G uplinks, ideal 0.5)."""
    fabric = fabric_of(plan_of(tmp_path, inventory(spines=2, leaves=4, per_spine=8, per_leaf=2)))
    factors = []
    for split in (1, 2, 8):
        (ring,) = ecmp.simulate(fabric, 8, 8, 400.0, trials=200, seed=2, split=split, patterns=("ring",), routings=("ecmp",))
        assert ring.ideal_util == pytest.approx(0.5)
        factors.append(ring.path_factor_mean)
    assert factors[0] > factors[1] > factors[2] >= 1.0
    assert factors[2] < 1.3


def test_rail_ring_stays_on_its_rail_leaf(tmp_path: Path) -> None:
    """Rail attachment: server j NIC r and server j+1 NIC r share rail leaf r of their unit, so a
    ring inside one unit never uses a spine; only the unit boundary crosses."""
    doc = inventory(spines=2, leaves=4, per_spine=8, per_leaf=4, ports_per_server=2)
    doc["servers"].update({"attachment": "rail", "rails": 2})
    fabric = fabric_of(plan_of(tmp_path, doc))
    assert fabric.rails == 2
    assert fabric.port_leaf[:4].tolist() == [0, 1, 0, 1]  # server 1 NIC 0, 1; server 2 NIC 0, 1
    inside = ecmp.route(fabric, ecmp.ring_flows(fabric, 4, 2, 400.0), "ecmp", 4, np.random.default_rng(0))
    assert inside.utilisation.sum() == 0.0
    across = ecmp.route(fabric, ecmp.ring_flows(fabric, 8, 2, 400.0), "ftree", 1, np.random.default_rng(0))
    assert across.crossing.tolist() == [4.0]  # 2 unit boundaries x 2 rails


def small_three_tier() -> dict[str, Any]:
    """2 pods x (2 leaves + 2 spines), spine j of each pod in plane j with 2 super-spines,
    4 x 400G from each leaf to each spine and 2 x 800G from each spine to each super-spine."""
    doc = inventory(name="t3", spines=2, leaves=2, per_spine=4, per_leaf=2, ports_per_server=4)
    doc["spines"]["model"] = "arista-7060x6-64pe"
    doc["pods"] = {"count": 2}
    doc["leaves"]["name"] = "t3-p{pod}-leaf{index:02d}"
    doc["spines"]["name"] = "t3-p{pod}-spine{index:02d}"
    doc["superspines"] = {
        "count": 2,
        "model": "arista-7060x6-64pe",
        "platform": "eos",
        "name": "t3-ss{plane}-{index:02d}",
        "per_spine": 2,
        "speed": "800G",
    }
    doc["bgp"] = {"superspine_asn": 4200000001, "spine_asn": 4200000101, "leaf_asn": 4200001001}
    doc["addressing"]["fabric"] = "10.64.0.0/12"  # slots for growth across pods
    return doc


def test_three_tier_paths(tmp_path: Path) -> None:
    """A ring over both pods: the pod boundary crosses leaf -> spine -> super-spine -> spine ->
    leaf (four hops, one per tier); ftree's destination-based choice spreads the 4 rail flows
    of each boundary over distinct links, ECMP collides, ideal balancing is the reference."""
    fabric = fabric_of(plan_of(tmp_path, small_three_tier()))
    assert (fabric.tiers, fabric.pods) == (3, 2)
    assert fabric.spine_up.shape == (4, 2, 2) and fabric.ss_down.shape == (4, 2, 2)
    flows = ecmp.ring_flows(fabric, 8, 4, 400.0)
    ftree = ecmp.route(fabric, flows, "ftree", 1, np.random.default_rng(0))
    # 4 leaf boundaries x 4 rails leave their leaf; 2 of the boundaries also leave the pod.
    assert ftree.crossing.tolist() == [16.0]
    spine_up = fabric.spine_up.ravel()
    assert ftree.utilisation[0][spine_up].sum() * 800 / 400 == 8.0  # 2 pod boundaries x 4 rails, one hop each
    hashed = ecmp.route(fabric, flows, "ecmp", 64, np.random.default_rng(1))
    assert hashed.utilisation.max(axis=1).mean() > ftree.utilisation.max()
    results = ecmp.simulate(fabric, 8, 4, 400.0, trials=8, seed=1, split=2)
    assert {r.pattern for r in results} == set(ecmp.PATTERNS)


def test_pxn_keeps_all_to_all_on_the_rails(tmp_path: Path) -> None:
    """Rail-optimised unit of 4 servers x 2 rails: with PXN every all-to-all flow stays on its
    rail leaf; without it, half of each NIC's flows go to the other rail, over the spines."""
    doc = inventory(spines=2, leaves=2, per_spine=8, per_leaf=4, ports_per_server=2)
    doc["servers"].update({"attachment": "rail", "rails": 2})
    fabric = fabric_of(plan_of(tmp_path, doc))
    with_pxn = ecmp.route(fabric, ecmp.all_to_all_flows(fabric, 4, 2, 400.0), "ftree", 1, np.random.default_rng(0))
    assert with_pxn.crossing.tolist() == [0.0]
    flows = ecmp.all_to_all_flows(fabric, 4, 2, 400.0, pxn=False)
    assert flows.count == 4 * 3 * 2 * 2 and flows.demand_gbps == pytest.approx(400.0 / 6)
    without = ecmp.route(fabric, flows, "ftree", 1, np.random.default_rng(0))
    assert without.crossing.tolist() == [24.0]


def test_oversubscription_slows_the_ring(tmp_path: Path) -> None:
    """One server of 8 x 400G per leaf and 2 x 400G up (4:1): the leaf boundary of the ring puts
    8 x 400G on 800G of uplinks, so even ideal balancing runs at a quarter (path factor 4)."""
    fabric = fabric_of(plan_of(tmp_path, inventory(spines=2, leaves=4, per_spine=1, per_leaf=1, max_ratio=4.0)))
    assert fabric.leaf_share.tolist() == [0.25] * 4
    (ring,) = ecmp.simulate(fabric, 4, 8, 400.0, trials=1, patterns=("ring",), routings=("ftree",), split=2)
    assert ring.ideal_util == pytest.approx(4.0)
    assert ring.adaptive_factor == pytest.approx(4.0)
