"""Flow-level simulation of collective traffic on the planned fabric (two or three tiers, rails).

Training traffic is a few long, fat flows. ECMP hashes each flow onto one of the equal-cost
uplinks independently of the others (every switch on the way hashes again), so two flows can
share an uplink while another idles; the collective then runs at the speed of its most loaded
link. InfiniBand's ftree routing picks the path from the destination (deterministically);
adaptive routing / packet spraying approaches ideal balancing.

The number of flows is NCCL's: every NIC of a ring carries `channels_per_nic` channels, each
over `qps_per_connection` queue pairs, and each queue pair is its own 5-tuple to ECMP (RoCEv2
sets a UDP source port per QP). Each flow asks for its share of the NIC line rate.

Model (fluid, per step of the collective): a link's utilisation is the demand routed over it
divided by its capacity; a bulk-synchronous collective finishes when its slowest flow does, so
its time scales with max(1, max link utilisation): the `path_factor` the cost model divides the
bandwidth by. Ideal balancing spreads each leaf's (and each pod's) off-leaf demand evenly over
its uplinks. Vectorised over flows and trials; seeds are fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fabricgen.analyze.topology import Fabric, FloatArray, IntArray

PATTERNS = ("ring", "tree", "ring-random", "all-to-all")
ROUTINGS = ("ecmp", "ftree")
CHUNK_ELEMENTS = 1 << 21
"""Flows x trials handled per vectorised batch: bounds memory at a few hundred MB."""
ALL_TO_ALL_TRIALS = 16
"""All-to-all has thousands of small flows per leaf; its maximum load concentrates quickly."""
MAX_FLOW_TRIALS = 1 << 22
"""Flows x trials of one pattern at most: the 4,096-GPU all-to-all (4 M flows) runs once."""


@dataclass(frozen=True, slots=True)
class Flows:
    """Flows of one pattern: arrays (flows,) when the placement is fixed, (trials, flows) when it
    is random per trial. `key` is the destination port's position among its leaf's server ports
    (plan order): what ftree spreads destinations over up-ports by."""

    src_leaf: IntArray
    dst_leaf: IntArray
    key: IntArray
    demand_gbps: float
    count: int


def _flows(fabric: Fabric, src_port: IntArray, dst_port: IntArray, demand: float, split: int) -> Flows:
    src_leaf, dst_leaf, key = fabric.port_leaf[src_port], fabric.port_leaf[dst_port], fabric.port_key[dst_port]
    if split > 1:
        src_leaf, dst_leaf, key = (np.repeat(a, split, axis=-1) for a in (src_leaf, dst_leaf, key))
    return Flows(src_leaf, dst_leaf, key, demand / split, int(src_leaf.shape[-1]))


def ring_flows(fabric: Fabric, servers: int, rails: int, demand_gbps: float, order: IntArray | None = None, split: int = 1) -> Flows:
    """One ring per rail over the job's servers, as NCCL builds rings on rail-aligned servers:
    server order[j] NIC r sends to order[j+1] NIC r. `order` is (servers,) or (trials, servers)."""
    order = np.arange(servers, dtype=np.int64) if order is None else order
    ports = fabric.job_ports(servers, rails)
    nxt = np.roll(order, -1, axis=-1)
    src = ports[order].reshape(*order.shape[:-1], -1)
    dst = ports[nxt].reshape(*order.shape[:-1], -1)
    return _flows(fabric, src, dst, demand_gbps, split)


def btree_parents(ranks: int) -> list[int]:
    """Parent of every rank in NCCL's binary tree (`ncclGetBtree`, src/graph/trees.cc): rank r's
    lowest set bit b; parent (r ^ b) | 2b, or r ^ b past the end; the root 0 has none (-1).

    >>> btree_parents(6)
    [-1, 2, 4, 2, 0, 4]
    """
    parents = [-1] * ranks
    for rank in range(1, ranks):
        bit = rank & -rank
        up = (rank ^ bit) | (bit << 1)
        parents[rank] = up if up < ranks else rank ^ bit
    return parents


def double_tree_edges(ranks: int) -> list[tuple[int, int]]:
    """(child, parent) edges of NCCL's double binary tree over `ranks` servers: the binary tree
    and its mirror (even count, rank r -> n-1-r) or its shift by one (odd count), as
    `ncclGetDtree` builds them; each tree carries half the data.

    >>> double_tree_edges(4)
    [(1, 2), (2, 0), (3, 2), (2, 1), (1, 3), (0, 1)]
    """
    parents = btree_parents(ranks)
    first = [(r, p) for r, p in enumerate(parents) if p >= 0]
    if ranks % 2 == 0:
        second = [(ranks - 1 - r, ranks - 1 - p) for r, p in first]
    else:
        second = [((r + 1) % ranks, (p + 1) % ranks) for r, p in first]
    return first + second


TREE_FLOWS_PER_NIC = 4
"""Directed tree edges a NIC sends on at once (parent and two children in one tree, parent in
the other); each carries S/2 in the tree's time 2S/B: a quarter of the NIC rate."""


def tree_flows(fabric: Fabric, servers: int, rails: int, demand_gbps: float, split: int = 1) -> Flows:
    """NCCL's double binary tree over the job's servers, one tree pair per rail (channels are
    rail-aligned as the ring's): every edge in both directions (reduce up, broadcast down), each
    at a quarter of the NIC rate."""
    edges = np.array(double_tree_edges(servers), dtype=np.int64).reshape(-1, 2)
    ports = fabric.job_ports(servers, rails)
    pairs = np.concatenate([edges, edges[:, ::-1]])
    src, dst = ports[pairs[:, 0]].ravel(), ports[pairs[:, 1]].ravel()
    return _flows(fabric, src, dst, demand_gbps / TREE_FLOWS_PER_NIC, split)


def all_to_all_flows(fabric: Fabric, servers: int, rails: int, demand_gbps: float, split: int = 1, pxn: bool = True) -> Flows:
    """Every GPU to every GPU of every other server (mixture-of-experts dispatch). With PXN
    (NCCL's default) the data first moves over NVLink to the GPU on the destination's rail, so
    each flow stays on its rail: NIC r to NIC r, the NIC rate split over servers-1 peers. Without
    PXN, NIC r sends to every rail r' of the peer: rails x (servers-1) flows per NIC, and on a
    rail-optimised fabric most of them cross the spines."""
    ports = fabric.job_ports(servers, rails)
    src, dst = np.nonzero(~np.eye(servers, dtype=bool))
    if pxn:
        return _flows(fabric, ports[src].ravel(), ports[dst].ravel(), demand_gbps / max(servers - 1, 1), split)
    src_ports = np.repeat(ports[src], rails, axis=1).ravel()
    dst_ports = np.tile(ports[dst], (1, rails)).ravel()
    return _flows(fabric, src_ports, dst_ports, demand_gbps / max((servers - 1) * rails, 1), split)


def ftree_two_tier(fabric: Fabric, src_leaf: IntArray, dst_leaf: IntArray, key: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """(spine column, up cable, down cable) OpenSM's ftree engine gives a flow to port `key` of
    `dst_leaf` in a two-tier fabric (checked against real forwarding tables in
    tests/test_analyze_opensm.py): port j of every leaf is reached through spine j mod S; down
    cable (j div S) mod P; each source leaf hands the cables to a spine out in turn to the
    destinations routed through it, leaf by leaf (its own leaf skipped)."""
    n_spines, per_spine = fabric.leaf_up.shape[1], fabric.leaf_up.shape[2]
    spine = key % n_spines
    down_cable = (key // n_spines) % per_spine
    if per_spine == 1:
        return spine, down_cable, down_cable
    ports = np.bincount(fabric.port_leaf, minlength=len(fabric.leaves)).astype(np.int64)
    s = np.arange(n_spines, dtype=np.int64)
    per_leaf = np.where(ports[:, None] > s, (ports[:, None] - s + n_spines - 1) // n_spines, 0)
    before = np.cumsum(per_leaf, axis=0) - per_leaf
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


def _at(table: IntArray, *index: IntArray) -> IntArray:
    """table[i, j, ...] through one flat `take` (several times faster than n-d fancy indexing
    on millions of flows x trials)."""
    flat = index[0]
    for size, i in zip(table.shape[1:], index[1:], strict=True):
        flat = flat * size + i
    return np.take(table.reshape(-1), flat)


def _draw(rng: np.random.Generator, high: int, shape: tuple[int, ...]) -> IntArray:
    """A uniform hash choice among `high` equal-cost links (0 when there is only one)."""
    if high == 1:
        return np.zeros(shape, dtype=np.int64)
    return rng.integers(0, high, size=shape, dtype=np.int64)


def _hops(fabric: Fabric, src: IntArray, dst: IntArray, key: IntArray, routing: str, rng: np.random.Generator) -> list[IntArray]:
    """Directed link ids of every hop (up to four), -1 where a flow has no such hop."""
    shape = np.broadcast_shapes(src.shape, dst.shape)
    n_sp, n_p = fabric.leaf_up.shape[1], fabric.leaf_up.shape[2]
    if routing == "ecmp":
        pick = _draw(rng, n_sp * n_p, shape)
        column, up_cable, down_cable = pick // n_p, pick % n_p, _draw(rng, n_p, shape)
    elif fabric.tiers == 2:
        column, up_cable, down_cable = ftree_two_tier(fabric, src, dst, key)
    else:  # destination-based d-mod-k per tier: an approximation of ftree on three tiers
        key = fabric.leaf_local[dst] * (int(fabric.port_key.max()) + 1) + key
        column, up_cable, down_cable = key % n_sp, (key // n_sp) % n_p, (key // n_sp) % n_p
    column, up_cable, down_cable = (np.broadcast_to(a, shape) for a in (column, up_cable, down_cable))
    src, dst = np.broadcast_to(src, shape), np.broadcast_to(dst, shape)
    first = _at(fabric.leaf_up, src, column, up_cable)
    spine = _at(fabric.leaf_up_spine, src, column)
    dst_local = fabric.leaf_local[dst]
    last_same = _at(fabric.spine_down, spine, dst_local, down_cable)
    if fabric.tiers < 3:
        return [first, last_same]
    same_pod = fabric.leaf_pod[src] == fabric.leaf_pod[dst]
    n_x, n_q = fabric.spine_up.shape[1], fabric.spine_up.shape[2]
    if routing == "ecmp":
        pick2 = _draw(rng, n_x * n_q, shape)
        k, q_up, q_down = pick2 // n_q, pick2 % n_q, _draw(rng, n_q, shape)
    else:
        k, q_up, q_down = (key // n_sp) % n_x, (key // (n_sp * n_x)) % n_q, (key // (n_sp * n_x)) % n_q
    k, q_up, q_down = (np.broadcast_to(a, shape) for a in (k, q_up, q_down))
    spine_c = np.where(same_pod, 0, spine)
    up2 = _at(fabric.spine_up, spine_c, k, q_up)
    ss = _at(fabric.spine_up_ss, spine_c, k)
    dst_pod = fabric.leaf_pod[dst]
    down2 = _at(fabric.ss_down, ss, dst_pod, q_down)
    spine2 = _at(fabric.ss_down_spine, ss, dst_pod)
    down3 = _at(fabric.spine_down, spine2, dst_local, down_cable)
    none = np.full(shape, -1, dtype=np.int64)
    return [
        first,
        np.where(same_pod, last_same, up2),
        np.where(same_pod, none, down2),
        np.where(same_pod, none, down3),
    ]


def _capacities(fabric: Fabric) -> tuple[FloatArray, FloatArray]:
    """Per leaf: uplink capacity (the same cables carry the downlink); per pod: spine uplinks."""
    leaf_cap = (
        fabric.link_gbps[fabric.leaf_up.reshape(len(fabric.leaves), -1)].sum(axis=1)
        if fabric.leaf_up.size
        else np.zeros(len(fabric.leaves))
    )
    pod_cap = np.zeros(max(fabric.pods, 1))
    if fabric.spine_up.size:
        per_spine = fabric.link_gbps[fabric.spine_up.reshape(len(fabric.spines), -1)].sum(axis=1)
        np.add.at(pod_cap, fabric.spine_pod, per_spine)
    return leaf_cap, pod_cap


def _ideal(fabric: Fabric, src: IntArray, dst: IntArray, cross: IntArray, demand: float) -> FloatArray:
    """Max utilisation under perfect balancing, per trial: every leaf's (and pod's) off-leaf
    demand spread evenly over its uplinks, and the same for what comes down into it."""
    leaf_cap, pod_cap = _capacities(fabric)
    trials = cross.shape[0]
    worst = np.zeros(trials)
    groups: list[tuple[IntArray, IntArray, IntArray, FloatArray]] = [(src, dst, cross, leaf_cap)]
    if fabric.tiers == 3:
        sp, dp = fabric.leaf_pod[src], fabric.leaf_pod[dst]
        groups.append((sp, dp, cross & (sp != dp), pod_cap))
    for a, b, mask, cap in groups:
        bins = len(cap) + 1
        offset = (np.arange(trials, dtype=np.int64) * bins)[:, None]
        for end in (a, b):
            counts = np.bincount((np.where(mask, end, bins - 1) + offset).ravel(), minlength=trials * bins).reshape(trials, bins)[:, :-1]
            with np.errstate(divide="ignore", invalid="ignore"):
                load = np.where(cap > 0, counts * demand / np.where(cap > 0, cap, 1.0), 0.0)
            worst = np.maximum(worst, load.max(axis=1) if load.size else 0.0)
    return worst


def route(fabric: Fabric, flows: Flows, routing: str, trials: int, rng: np.random.Generator) -> Loads:
    """Route `flows` `trials` times and add up the demand on each directed link."""
    if routing not in ROUTINGS:
        raise ValueError(f"unknown routing {routing!r}")
    n_links = fabric.n_links
    src_all, dst_all, key_all = flows.src_leaf, flows.dst_leaf, flows.key
    fixed = src_all.ndim == 1
    if fixed:  # one placement for every trial: drop on-leaf flows once
        keep = src_all != dst_all
        src_all, dst_all, key_all = src_all[keep], dst_all[keep], key_all[keep]
    count = int(src_all.shape[-1])
    bins = n_links + 1  # the spare bin (n_links) collects hops a flow does not take
    util = np.empty((trials, n_links), dtype=np.float64)
    ideal = np.empty(trials, dtype=np.float64)
    crossing = np.empty(trials, dtype=np.float64)
    step = max(1, CHUNK_ELEMENTS // max(count, 1))
    for start in range(0, trials, step):
        t = min(step, trials - start)
        src, dst, key = (np.broadcast_to(a[None, :], (t, count)) if fixed else a[start : start + t] for a in (src_all, dst_all, key_all))
        cross = src != dst
        offset = (np.arange(t, dtype=np.int64) * bins)[:, None]
        counts = np.zeros(t * bins, dtype=np.int64)
        if count and fabric.tiers > 1:
            for hop in _hops(fabric, src, dst, key, routing, rng):
                ids = np.where(cross & (hop >= 0), hop, n_links)
                counts += np.bincount((ids + offset).ravel(), minlength=t * bins)
        util[start : start + t] = counts.reshape(t, bins)[:, :n_links] * flows.demand_gbps / fabric.link_gbps
        ideal[start : start + t] = _ideal(fabric, src, dst, cross, flows.demand_gbps) if count else 0.0
        crossing[start : start + t] = cross.sum(axis=1)
    return Loads(util, ideal, crossing)


@dataclass(frozen=True, slots=True)
class SimResult:
    """Summary of one pattern under one routing. `path_factor`: max(1, max link utilisation),
    what the collective's bandwidth is divided by; `adaptive_factor`: the same under ideal
    balancing (adaptive routing, packet spraying)."""

    pattern: str
    routing: str
    trials: int
    seed: int
    flows: int
    crossing_flows: float
    max_util_mean: float
    max_util_p99: float
    ideal_util: float
    path_factor_mean: float
    path_factor_p99: float
    adaptive_factor: float
    max_util_per_trial: tuple[float, ...]

    def as_dict(self) -> dict[str, object]:
        return {k: getattr(self, k) for k in self.__slots__ if k != "max_util_per_trial"}


def _sig(value: float) -> float:
    return round(float(value), 6)


def summarise(pattern: str, routing: str, seed: int, flows: Flows, loads: Loads) -> SimResult:
    """Means and 99th percentiles over trials."""
    peak = loads.utilisation.max(axis=1) if loads.utilisation.size else np.zeros(len(loads.ideal))
    factor = np.maximum(peak, 1.0)
    return SimResult(
        pattern=pattern,
        routing=routing,
        trials=len(peak),
        seed=seed,
        flows=flows.count,
        crossing_flows=_sig(loads.crossing.mean()),
        max_util_mean=_sig(peak.mean()),
        max_util_p99=_sig(np.percentile(peak, 99)),
        ideal_util=_sig(loads.ideal.mean()),
        path_factor_mean=_sig(factor.mean()),
        path_factor_p99=_sig(np.percentile(factor, 99)),
        adaptive_factor=_sig(np.maximum(loads.ideal, 1.0).mean()),
        max_util_per_trial=tuple(_sig(v) for v in peak),
    )


def _pattern_flows(
    fabric: Fabric, pattern: str, number: int, servers: int, rails: int, demand: float, runs: int, seed: int, split: int, pxn: bool
) -> Flows:
    if pattern == "ring":
        return ring_flows(fabric, servers, rails, demand, split=split)
    if pattern == "tree":
        return tree_flows(fabric, servers, rails, demand, split)
    if pattern == "ring-random":
        placement = np.random.default_rng([seed, number, 0])
        order = np.argsort(placement.random((runs, servers)), axis=1).astype(np.int64)
        return ring_flows(fabric, servers, rails, demand, order, split)
    return all_to_all_flows(fabric, servers, rails, demand, split, pxn)


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
    routings: tuple[str, ...] = ROUTINGS,
    pxn: bool = True,
) -> list[SimResult]:
    """Every pattern under each routing on the job's first `servers` servers.

    Each (pattern, routing) draws from its own stream seeded by (seed, pattern), so adding a
    pattern does not change the others, and both routings see the same random placements.
    Deterministic routings of a fixed placement run once."""
    results = []
    for number, pattern in enumerate(PATTERNS):
        if pattern not in patterns:
            continue
        runs = min(trials, ALL_TO_ALL_TRIALS) if pattern == "all-to-all" else trials
        if pattern == "all-to-all":
            per_trial = servers * (servers - 1) * rails * split * (1 if pxn else rails)
            runs = max(1, min(runs, MAX_FLOW_TRIALS // max(per_trial, 1)))
        flows = _pattern_flows(fabric, pattern, number, servers, rails, demand_gbps, runs, seed, split, pxn)
        for routing in routings:
            deterministic = routing == "ftree" and flows.src_leaf.ndim == 1
            loads = route(fabric, flows, routing, 1 if deterministic else runs, np.random.default_rng([seed, number, 1]))
            results.append(summarise(pattern, routing, seed, flows, loads))
    return results
