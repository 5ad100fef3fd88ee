"""Flow-level simulation of collective traffic on the planned leaf-spine fabric.

Training traffic is a few long, fat flows. ECMP hashes each flow onto one of the equal-cost
uplinks independently of the others, so two flows can share an uplink while another idles; the
collective then runs at the speed of its most loaded link. InfiniBand's ftree routing instead
picks the path from the destination (deterministically), which spreads a leaf-ordered ring
perfectly but not an arbitrary permutation (`ftree_path` is checked against real OpenSM).

Model (fluid, per step of the collective): every flow asks for `demand` Gbit/s; a link's
utilisation is the demand routed over it divided by its capacity; a bulk-synchronous collective
finishes when its slowest flow does, so its time scales with max(1, max link utilisation). The
reference is ideal balancing: each leaf's off-leaf demand spread evenly over all its uplinks
(and over all downlinks into the destination leaf). Everything is vectorised over flows and
trials; seeds are fixed, so the same inputs give the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricgen.analyze.topology import Fabric, FloatArray, IntArray

PATTERNS = ("ring", "ring-random", "all-to-all")
ROUTINGS = ("ecmp", "ftree")
CHUNK_ELEMENTS = 1 << 22
"""Flows x trials handled per vectorised batch: bounds memory at a few hundred MB."""
ALL_TO_ALL_TRIALS = 16
"""All-to-all has thousands of small flows per leaf; its maximum load concentrates quickly."""


@dataclass(frozen=True, slots=True)
class Flows:
    """Flows of one pattern. Arrays are (flows,) when the placement is fixed, (trials, flows)
    when it is random per trial. `dst_index` is the destination port's position among its leaf's
    server ports (plan order): the key OpenSM's ftree spreads destinations over up-ports by
    (checked against real OpenSM forwarding tables in tests/test_analyze_opensm.py)."""

    src_leaf: IntArray
    dst_leaf: IntArray
    dst_index: IntArray
    demand_gbps: float
    count: int


def ring_flows(fabric: Fabric, servers: int, rails: int, demand_gbps: float, order: IntArray | None = None, split: int = 1) -> Flows:
    """One ring per rail (NIC index) over the job's servers, as NCCL builds rings on rail-aligned
    servers: server order[j] sends to order[j+1] on every rail. `order` is (servers,) or
    (trials, servers); default: plan order."""
    order = np.arange(servers, dtype=np.int64) if order is None else order
    nxt = np.roll(order, -1, axis=-1)
    src = np.repeat(order, rails, axis=-1)
    dst = np.repeat(nxt, rails, axis=-1)
    rail = np.tile(np.arange(rails, dtype=np.int64), servers)
    return _flows(fabric, src, dst, rail, demand_gbps, split)


def all_to_all_flows(fabric: Fabric, servers: int, rails: int, demand_gbps: float, split: int = 1) -> Flows:
    """Every server to every other server on every rail (mixture-of-experts dispatch); each GPU
    splits its NIC rate over its servers-1 peers."""
    src, dst = np.nonzero(~np.eye(servers, dtype=bool))
    src = np.repeat(src.astype(np.int64), rails)
    dst = np.repeat(dst.astype(np.int64), rails)
    rail = np.tile(np.arange(rails, dtype=np.int64), servers * (servers - 1))
    return _flows(fabric, src, dst, rail, demand_gbps / max(servers - 1, 1), split)


def _flows(fabric: Fabric, src: IntArray, dst: IntArray, rail: IntArray, demand: float, split: int) -> Flows:
    """`split` flows per connection (NCCL_IB_QPS_PER_CONNECTION: each queue pair is its own
    5-tuple to ECMP), each carrying 1/split of the demand."""
    first_port = np.concatenate(([0], np.cumsum(fabric.server_nics)[:-1]))
    leaf_first = np.full(len(fabric.leaves), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(leaf_first, fabric.server_leaf, first_port)
    rail = np.broadcast_to(rail, src.shape)
    src_leaf, dst_leaf = fabric.server_leaf[src], fabric.server_leaf[dst]
    dst_index = first_port[dst] + rail % fabric.server_nics[dst] - leaf_first[dst_leaf]
    if split > 1:
        src_leaf, dst_leaf, dst_index = (np.repeat(a, split, axis=-1) for a in (src_leaf, dst_leaf, dst_index))
    return Flows(src_leaf, dst_leaf, dst_index, demand / split, int(src_leaf.shape[-1]))


def ftree_path(fabric: Fabric, src_leaf: IntArray, dst_leaf: IntArray, key: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """(spine, up cable, down cable) OpenSM's ftree engine gives a flow to port `key` of `dst_leaf`.

    Destination-based, as OpenSM 3.3.23 fills the tables (checked against its real forwarding
    tables in tests/test_analyze_opensm.py): port j of every leaf is reached through spine
    j mod S; on the way down, cable (j div S) mod P; on the way up, each source leaf hands the
    cables to a spine out in turn to the destinations it routes through that spine, leaf by
    leaf (its own leaf skipped), so the up cable is that running count mod P."""
    n_spines, per_spine = len(fabric.spines), fabric.per_spine
    spine = key % n_spines
    down_cable = (key // n_spines) % per_spine
    if per_spine == 1:
        return spine, down_cable, down_cable
    ports = np.bincount(fabric.server_leaf, weights=fabric.server_nics, minlength=len(fabric.leaves)).astype(np.int64)
    s = np.arange(n_spines, dtype=np.int64)
    per_leaf = np.where(ports[:, None] > s, (ports[:, None] - s + n_spines - 1) // n_spines, 0)  # ports j = s (mod S), per leaf
    before = np.cumsum(per_leaf, axis=0) - per_leaf  # the same, summed over the leaves before
    turn = before[dst_leaf, spine] - np.where(src_leaf < dst_leaf, per_leaf[src_leaf, spine], 0) + key // n_spines
    return spine, turn % per_spine, down_cable


@dataclass(frozen=True, slots=True)
class Loads:
    """Per-trial results: utilisation of every directed fabric link, and the ideal maximum."""

    utilisation: FloatArray
    """(trials, links)"""
    ideal: FloatArray
    """(trials,) max link utilisation under perfect balancing"""
    crossing: FloatArray
    """(trials,) flows that leave their leaf"""


def route(fabric: Fabric, flows: Flows, routing: str, trials: int, rng: np.random.Generator) -> Loads:
    """Route `flows` `trials` times and add up the demand on each directed link.

    All flows of a pattern carry the same demand, so loads are flow counts times the demand:
    unweighted bincounts over link numbers (`Fabric.up_link`/`down_link`, with the leaf part
    computed once per flow), flows that stay on their leaf counted in a spare bin."""
    n_spines, per_spine, n_links, n_leaves = len(fabric.spines), fabric.per_spine, fabric.n_links, len(fabric.leaves)
    width = n_spines * per_spine
    leaf_capacity = float(fabric.link_gbps[0]) * width if n_links else 0.0
    src_all, dst_all, key_all = flows.src_leaf, flows.dst_leaf, flows.dst_index
    fixed = src_all.ndim == 1
    if fixed:  # one placement for every trial: drop on-leaf flows once
        keep = src_all != dst_all
        src_all, dst_all, key_all = src_all[keep], dst_all[keep], key_all[keep]
    count = int(src_all.shape[-1])
    bins = n_links + 1  # the spare bin (n_links) collects flows that stay on their leaf
    util = np.empty((trials, n_links), dtype=np.float64)
    ideal = np.empty(trials, dtype=np.float64)
    crossing = np.empty(trials, dtype=np.float64)
    step = max(1, CHUNK_ELEMENTS // max(count, 1))
    for start in range(0, trials, step):
        t = min(step, trials - start)
        src, dst, key = (a[None, :] if fixed else a[start : start + t] for a in (src_all, dst_all, key_all))
        cross = np.ones((1, count), dtype=bool) if fixed else src != dst
        up = src * width
        down = n_links // 2 + dst * width
        if routing == "ecmp":
            uplink = rng.integers(0, width, size=(t, count), dtype=np.int64)
            up = up + uplink
            if per_spine > 1:
                down = down + (uplink // per_spine) * per_spine + rng.integers(0, per_spine, size=(t, count), dtype=np.int64)
            else:
                down = down + uplink
        elif routing == "ftree":
            spine, up_cable, down_cable = ftree_path(fabric, src, dst, key)
            up = up + spine * per_spine + up_cable
            down = down + spine * per_spine + down_cable
        else:
            raise ValueError(f"unknown routing {routing!r}")
        up, down = np.broadcast_to(up, (t, count)), np.broadcast_to(down, (t, count))
        if not fixed:
            up, down = np.where(cross, up, n_links), np.where(cross, down, n_links)
        offset = (np.arange(t, dtype=np.int64) * bins)[:, None]
        counts = np.bincount((up + offset).ravel(), minlength=t * bins) + np.bincount((down + offset).ravel(), minlength=t * bins)
        util[start : start + t] = counts.reshape(t, bins)[:, :n_links] * flows.demand_gbps / fabric.link_gbps
        leaf_bins = n_leaves + 1
        leaf_offset = (np.arange(cross.shape[0], dtype=np.int64) * leaf_bins)[:, None]
        out_n = np.bincount((np.where(cross, src, n_leaves) + leaf_offset).ravel(), minlength=cross.shape[0] * leaf_bins)
        in_n = np.bincount((np.where(cross, dst, n_leaves) + leaf_offset).ravel(), minlength=cross.shape[0] * leaf_bins)
        most = np.maximum(out_n, in_n).reshape(-1, leaf_bins)[:, :n_leaves].max(axis=1) if n_leaves else np.zeros(cross.shape[0])
        ideal[start : start + t] = most * flows.demand_gbps / leaf_capacity if leaf_capacity else 0.0
        crossing[start : start + t] = cross.sum(axis=1)
    return Loads(util, ideal, crossing)


@dataclass(frozen=True, slots=True)
class SimResult:
    """Summary of one pattern under one routing."""

    pattern: str
    routing: str
    trials: int
    seed: int
    flows: int
    crossing_flows: float
    max_util_mean: float
    max_util_p99: float
    max_util_worst: float
    link_util_p50: float
    link_util_p90: float
    link_util_p99: float
    ideal_util: float
    slowdown_mean: float
    slowdown_p99: float
    slowdown_worst: float
    max_util_per_trial: tuple[float, ...]

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__slots__ if k != "max_util_per_trial"}


def summarise(pattern: str, routing: str, seed: int, flows: Flows, loads: Loads) -> SimResult:
    """Percentiles over trials (maximum link load, slowdown) and over every link of every trial
    that carries traffic in some trial (the fabric links a collective can use)."""
    peak = loads.utilisation.max(axis=1)
    slowdown = np.maximum(peak, 1.0) / np.maximum(loads.ideal, 1.0)
    used = loads.utilisation[:, loads.utilisation.any(axis=0)]
    links = used.ravel() if used.size else np.zeros(1)
    p50, p90, p99 = (float(v) for v in np.percentile(links, [50, 90, 99]))
    return SimResult(
        pattern=pattern,
        routing=routing,
        trials=len(peak),
        seed=seed,
        flows=flows.count,
        crossing_flows=round(float(loads.crossing.mean()), 6),
        max_util_mean=round(float(peak.mean()), 6),
        max_util_p99=round(float(np.percentile(peak, 99)), 6),
        max_util_worst=round(float(peak.max()), 6),
        link_util_p50=round(p50, 6),
        link_util_p90=round(p90, 6),
        link_util_p99=round(p99, 6),
        ideal_util=round(float(loads.ideal.mean()), 6),
        slowdown_mean=round(float(slowdown.mean()), 6),
        slowdown_p99=round(float(np.percentile(slowdown, 99)), 6),
        slowdown_worst=round(float(slowdown.max()), 6),
        max_util_per_trial=tuple(round(float(v), 6) for v in peak),
    )


def simulate(
    fabric: Fabric,
    servers: int,
    rails: int,
    demand_gbps: float,
    *,
    trials: int = 256,
    seed: int = 1,
    split: int = 1,
    patterns: tuple[str, ...] = PATTERNS,
) -> list[SimResult]:
    """Every pattern under ECMP and ftree routing on the job's first `servers` servers.

    Each (pattern, routing) draws from its own stream seeded by (seed, pattern), so adding a
    pattern does not change the others, and both routings see the same random placements."""
    results = []
    for number, pattern in enumerate(PATTERNS):
        if pattern not in patterns:
            continue
        runs = min(trials, ALL_TO_ALL_TRIALS) if pattern == "all-to-all" else trials
        if pattern == "ring":
            flows = ring_flows(fabric, servers, rails, demand_gbps, split=split)
        elif pattern == "ring-random":
            placement = np.random.default_rng([seed, number, 0])
            order = np.argsort(placement.random((runs, servers)), axis=1).astype(np.int64)
            flows = ring_flows(fabric, servers, rails, demand_gbps, order, split)
        else:
            flows = all_to_all_flows(fabric, servers, rails, demand_gbps, split)
        for routing in ROUTINGS:
            deterministic = routing == "ftree" and flows.src_leaf.ndim == 1
            loads = route(fabric, flows, routing, 1 if deterministic else runs, np.random.default_rng([seed, number, 1]))
            results.append(summarise(pattern, routing, seed, flows, loads))
    return results
