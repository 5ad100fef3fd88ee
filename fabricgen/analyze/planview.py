"""The one module of `analyze` that reads the plan: plan -> `topology.Fabric` arrays, and the jobs.

Everything else in `fabricgen/analyze/` works on typed inputs, so a rename in the plan costs a
change here only. Facts the plan does not carry yet are derived here from its devices and
links, in one pass over each (linear at 5,000+ switches):

- per-tier link tables (which parallel cable joins which leaf, spine and super-spine), the
  pod of each leaf and spine, the plane of each super-spine;
- rail membership: the leaf of every server NIC (`ServerNic.leaf`), so a server spans its
  unit's rail leaves;
- the jobs: `plan.jobs` when the planner provides it; until then the inventory's `jobs:` section
  as the pipeline loaded it (the only place analyze still reads the inventory).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from fabricgen.analyze.topology import Fabric, IntArray, TopologyError
from fabricgen.core.model import Link, Plan


def _index(names: list[str]) -> dict[str, int]:
    return {name: i for i, name in enumerate(names)}


def _table(pairs: dict[tuple[int, int], list[tuple[int, int]]], rows: int, width: int, what: str) -> IntArray:
    """(rows, width, cables) link ids from {(row, column): [(port, link id)]}; uniform or refused."""
    counts = {len(v) for v in pairs.values()}
    if len(pairs) != rows * width or len(counts) != 1:
        raise TopologyError(f"{what} cabling is not uniform (every pair joined, same number of cables); cannot analyse")
    table = np.empty((rows, width, counts.pop()), dtype=np.int64)
    for (row, column), links in pairs.items():
        table[row, column] = [link_id for _, link_id in sorted(links)]
    return table


def fabric_of(plan: Plan) -> Fabric:
    """Arrays of `plan`; TopologyError for shapes the analysis does not understand."""
    by_role: dict[str, list[Any]] = defaultdict(list)
    for device in plan.devices:
        by_role[device.role].append(device)
    if set(by_role) - {"leaf", "spine", "superspine"}:
        raise TopologyError(f"unknown switch roles: {', '.join(sorted(set(by_role) - {'leaf', 'spine', 'superspine'}))}")
    leaves, spines, supers = by_role["leaf"], by_role["spine"], by_role["superspine"]
    if not leaves or not plan.servers:
        raise TopologyError("the plan has no leaves with servers; nothing to analyse")
    pod_ix = _index(sorted({str(d.pod) for d in leaves}))
    leaf_pod = np.array([pod_ix[str(d.pod)] for d in leaves], dtype=np.int64)
    spine_pod = np.array([pod_ix.get(str(d.pod), 0) if len(pod_ix) > 1 else 0 for d in spines], dtype=np.int64)
    leaf_local = _local(leaf_pod)
    spine_local = _local(spine_pod)
    plane_ix = _index(sorted({str(d.plane) for d in supers}))
    ss_plane = np.array([plane_ix[str(d.plane)] for d in supers], dtype=np.int64)
    ss_local = _local(ss_plane)
    leaf_ix, spine_ix, ss_ix = _index([d.name for d in leaves]), _index([d.name for d in spines]), _index([d.name for d in supers])
    fabric_links = [link for link in plan.links if link.kind in ("leaf-spine", "spine-superspine")]
    speeds = np.repeat(np.array([float(link.speed) for link in fabric_links], dtype=np.float64), 2)
    tables = _tier_tables(fabric_links, leaf_ix, spine_ix, ss_ix, leaf_pod, leaf_local, spine_pod, spine_local, ss_plane, ss_local)
    ports = _ports(plan, leaf_ix)
    return Fabric(
        transport=plan.transport,
        leaves=tuple(d.name for d in leaves),
        spines=tuple(d.name for d in spines),
        superspines=tuple(d.name for d in supers),
        link_gbps=speeds,
        leaf_pod=leaf_pod,
        leaf_local=leaf_local,
        spine_pod=spine_pod,
        **tables,
        **ports,
        leaf_share=_shares(plan, leaf_ix),
        spine_share=_shares(plan, spine_ix),
        rails=int(getattr(plan, "rails", 0) or 0),
    )


def _local(group: IntArray) -> IntArray:
    """Position of each item among the items of its group, in order."""
    seen: dict[int, int] = defaultdict(int)
    local = np.empty(len(group), dtype=np.int64)
    for i, g in enumerate(group.tolist()):
        local[i] = seen[g]
        seen[g] += 1
    return local


def _tier_tables(
    links: list[Link],
    leaf_ix: dict[str, int],
    spine_ix: dict[str, int],
    ss_ix: dict[str, int],
    leaf_pod: IntArray,
    leaf_local: IntArray,
    spine_pod: IntArray,
    spine_local: IntArray,
    ss_plane: IntArray,
    ss_local: IntArray,
) -> dict[str, Any]:
    """Link tables per tier: directed link 2i goes up link i of `links`, 2i+1 comes down it."""
    up: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    down: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    sup: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    sdown: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    n_leaves, n_spines, n_ss = len(leaf_ix), len(spine_ix), len(ss_ix)
    pods = int(leaf_pod.max()) + 1
    per_pod_spines = int(np.bincount(spine_pod, minlength=pods).max()) if n_spines else 0
    per_pod_leaves = int(np.bincount(leaf_pod, minlength=pods).max())
    leaf_up_spine = np.zeros((n_leaves, per_pod_spines), dtype=np.int64)
    per_plane = int(np.bincount(ss_plane).max()) if n_ss else 0
    spine_up_ss = np.zeros((n_spines, per_plane), dtype=np.int64)
    ss_down_spine = np.zeros((n_ss, pods), dtype=np.int64)
    for i, link in enumerate(links):
        if link.kind == "leaf-spine":
            leaf, spine = leaf_ix[link.a.device], spine_ix[link.z.device]
            up[(leaf, int(spine_local[spine]))].append((link.a.port, 2 * i))
            down[(spine, int(leaf_local[leaf]))].append((link.a.port, 2 * i + 1))
            leaf_up_spine[leaf, spine_local[spine]] = spine
        else:
            spine, ss = spine_ix[link.a.device], ss_ix[link.z.device]
            sup[(spine, int(ss_local[ss]))].append((link.a.port, 2 * i))
            sdown[(ss, int(spine_pod[spine]))].append((link.a.port, 2 * i + 1))
            spine_up_ss[spine, ss_local[ss]] = ss
            ss_down_spine[ss, spine_pod[spine]] = spine
    tables = {
        "leaf_up": _table(up, n_leaves, per_pod_spines, "leaf-spine") if n_spines else np.zeros((n_leaves, 0, 1), np.int64),
        "leaf_up_spine": leaf_up_spine,
        "spine_down": _table(down, n_spines, per_pod_leaves, "spine-leaf") if n_spines else np.zeros((0, 0, 1), np.int64),
    }
    if n_ss:
        tables["spine_up"] = _table(sup, n_spines, per_plane, "spine-super-spine")
        tables["ss_down"] = _table(sdown, n_ss, pods, "super-spine-spine")
    else:
        tables["spine_up"] = np.zeros((n_spines, 0, 1), dtype=np.int64)
        tables["ss_down"] = np.zeros((0, pods, 1), dtype=np.int64)
    tables["spine_up_ss"] = spine_up_ss
    tables["ss_down_spine"] = ss_down_spine
    return tables


def _ports(plan: Plan, leaf_ix: dict[str, int]) -> dict[str, Any]:
    nics = np.fromiter((len(s.nics) for s in plan.servers), dtype=np.int64, count=len(plan.servers))
    gbps = np.fromiter((sum(n.speed for n in s.nics) for s in plan.servers), dtype=np.float64, count=len(plan.servers))
    port_leaf = np.fromiter((leaf_ix[n.leaf] for s in plan.servers for n in s.nics), dtype=np.int64, count=int(nics.sum()))
    return {
        "port_leaf": port_leaf,
        "port_key": _local(port_leaf),
        "server_first_port": np.concatenate(([0], np.cumsum(nics)[:-1])).astype(np.int64),
        "server_nics": nics,
        "server_nic_gbps": gbps,
    }


def _shares(plan: Plan, index: dict[str, int]) -> Any:
    share = np.ones(len(index), dtype=np.float64)
    for item in plan.oversubscription:
        if item.device in index and item.downlink_gbps:
            share[index[item.device]] = min(1.0, item.uplink_gbps / item.downlink_gbps)
    return share
