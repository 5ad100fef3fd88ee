"""What deploy.yml's batch planner needs to know about redundancy, as host variables of hosts.yml.

A batch of switches is down together while its configs are replaced. Two facts of the plan
bound it (`fabricgen/push/rollout.py` reads them):

- `fabricgen_rail_group`: leaves that share servers (rail attachment: a server's NICs on the
  rail leaves of its scalable unit; or any server cabled to more than one leaf). Taking two of
  them at once takes two of a server's paths; one at a time, it keeps all but one. Leaves whose
  servers attach to them alone have none: nothing a batch can spare them.
- unless `oversubscription.during_change` is false: each switch's downlink and uplink bandwidth
  (`fabricgen_downlink_gbps`, `fabricgen_uplink_gbps`), each upper switch's bandwidth to each
  switch below it (`fabricgen_below_gbps`), and `fabricgen_change_ratio` (the ratio): no batch
  and no drain leaves a switch below above that ratio (`core/capacity.py`).

Linear in servers and links; nothing here scans the fabric per device.
"""

from __future__ import annotations

from typing import Any

from fabricgen.core.model import Plan


def rail_groups(plan: Plan) -> dict[str, str]:
    """Leaf -> the first (by name) leaf of the set of leaves that share servers with it, for
    leaves in such a set (union of the leaves of every server cabled to more than one)."""
    parent: dict[str, str] = {}

    def root(leaf: str) -> str:
        while parent.setdefault(leaf, leaf) != leaf:
            parent[leaf] = parent[parent[leaf]]
            leaf = parent[leaf]
        return leaf

    for server in plan.servers:
        leaves = sorted({nic.leaf for nic in server.nics})
        for leaf in leaves[1:]:
            a, b = root(leaves[0]), root(leaf)
            if a != b:
                parent[max(a, b)] = min(a, b)
    return {leaf: root(leaf) for leaf in sorted(parent)}


def capacity_vars(plan: Plan) -> dict[str, dict[str, Any]]:
    """Device -> its capacity host variables when the inventory holds a ratio during changes."""
    if plan.during_change is None:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for item in plan.oversubscription:
        found.setdefault(item.device, {}).update(fabricgen_downlink_gbps=item.downlink_gbps, fabricgen_uplink_gbps=item.uplink_gbps)
    for link in plan.links:
        if link.to_host:
            continue
        below = found.setdefault(link.z.device, {}).setdefault("fabricgen_below_gbps", {})
        below[link.a.device] = below.get(link.a.device, 0) + link.speed
    return found
