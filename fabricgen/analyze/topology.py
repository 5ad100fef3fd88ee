"""The planned fabric as arrays: what the cost model and the ECMP simulation need from the plan.

Derived in one pass over `plan.devices`, `plan.links` and `plan.servers` (no per-device scans of
the whole fabric), so it stays linear for 5,000+ switches. Only the two-tier leaf-spine Clos the
planner builds today is understood; anything else is refused with a clear message.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from fabricgen.model import Plan

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class TopologyError(ValueError):
    """The plan is not a shape this analysis understands."""


@dataclass(frozen=True, slots=True)
class Fabric:
    """Leaves, spines and servers of a two-tier plan, indexed from 0 in plan order.

    Directed fabric links are numbered `up(l, s, p) = (l*S + s)*P + p` (leaf l to spine s over
    parallel cable p) and `down(l, s, p) = L*S*P + up(l, s, p)` (spine s to leaf l)."""

    transport: str
    leaves: tuple[str, ...]
    spines: tuple[str, ...]
    per_spine: int
    link_gbps: FloatArray
    """Capacity of each directed fabric link (2*L*S*P)."""
    server_leaf: IntArray
    server_nics: IntArray
    server_nic_gbps: FloatArray
    """Sum of each server's NIC port speeds."""
    leaf_share: FloatArray
    """min(1, uplink / downlink) per leaf: the fraction of NIC rate its uplinks carry when every
    server port sends off the leaf at once."""

    @property
    def n_links(self) -> int:
        return 2 * len(self.leaves) * len(self.spines) * self.per_spine

    def up_link(self, leaf: IntArray, spine: IntArray, parallel: IntArray) -> IntArray:
        return (leaf * len(self.spines) + spine) * self.per_spine + parallel

    def down_link(self, leaf: IntArray, spine: IntArray, parallel: IntArray) -> IntArray:
        return self.n_links // 2 + self.up_link(leaf, spine, parallel)


def fabric_of(plan: Plan) -> Fabric:
    """Arrays of `plan`; raises TopologyError for shapes other than a uniform leaf-spine."""
    roles = {d.role for d in plan.devices}
    if roles - {"leaf", "spine"}:
        raise TopologyError(f"only two-tier leaf-spine fabrics are analysed; this plan has {', '.join(sorted(roles - {'leaf', 'spine'}))}")
    leaves = tuple(d.name for d in plan.devices if d.role == "leaf")
    spines = tuple(d.name for d in plan.devices if d.role == "spine")
    if not leaves or not plan.servers:
        raise TopologyError("the plan has no leaves with servers; nothing to analyse")
    leaf_ix = {name: i for i, name in enumerate(leaves)}
    spine_ix = {name: i for i, name in enumerate(spines)}
    pairs: list[int] = []
    speeds: list[int] = []
    for link in plan.links:
        if link.kind == "leaf-spine":
            pairs.append(leaf_ix[link.a.device] * len(spines) + spine_ix[link.z.device])
            speeds.append(link.speed)
    counts = np.bincount(np.asarray(pairs, dtype=np.int64), minlength=len(leaves) * len(spines)) if pairs else np.zeros(1, np.int64)
    per_spine = int(counts.max()) if spines else 0
    if spines and (int(counts.min()) != per_spine or len(set(speeds)) > 1):
        raise TopologyError("leaf-spine cabling is not uniform (every leaf to every spine, same count and speed); cannot analyse")
    link_speed = float(speeds[0]) if speeds else 0.0
    link_gbps = np.full(2 * len(leaves) * len(spines) * per_spine, link_speed, dtype=np.float64)
    server_leaf = np.fromiter((leaf_ix[s.leaf] for s in plan.servers), dtype=np.int64, count=len(plan.servers))
    server_nics = np.fromiter((len(s.nics) for s in plan.servers), dtype=np.int64, count=len(plan.servers))
    server_gbps = np.fromiter((sum(n.speed for n in s.nics) for s in plan.servers), dtype=np.float64, count=len(plan.servers))
    share = np.ones(len(leaves), dtype=np.float64)
    for item in plan.oversubscription:
        if item.device in leaf_ix and item.downlink_gbps:
            share[leaf_ix[item.device]] = min(1.0, item.uplink_gbps / item.downlink_gbps)
    return Fabric(plan.transport, leaves, spines, per_spine, link_gbps, server_leaf, server_nics, server_gbps, share)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a job's GPUs sit: the first `servers` servers of the plan, in plan (leaf) order."""

    servers: int
    gpus_per_server: int
    line_gbps: float
    """NIC line rate per GPU of the slowest server used."""
    share: float
    """Uplink share of the worst leaf used; 1 when the job stays on one leaf."""
    leaves: int


def place(fabric: Fabric, gpus: int, gpus_per_server: int) -> Placement:
    """Place `gpus` on whole servers, leaf by leaf (how a topology-aware scheduler packs a job)."""
    needed = -(-gpus // gpus_per_server)
    if needed > len(fabric.server_leaf):
        raise TopologyError(
            f"the job needs {needed} servers of {gpus_per_server} GPUs; the plan has {len(fabric.server_leaf)} ({len(fabric.server_leaf) * gpus_per_server} GPUs)"
        )
    used_leaves = np.unique(fabric.server_leaf[:needed])
    line = float((fabric.server_nic_gbps[:needed] / gpus_per_server).min())
    share = 1.0 if len(used_leaves) <= 1 else float(fabric.leaf_share[used_leaves].min())
    return Placement(needed, gpus_per_server, line, share, len(used_leaves))
