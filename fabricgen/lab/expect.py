"""What a converged lab must show, computed from the `LabTopology` alone (no lab needed).

ECMP width: a leaf reaches another leaf's prefixes through every live uplink whose upper switch
still reaches that leaf: directly (same pod), or through a live super-spine of its plane and
the destination pod's spine of that plane (an upper switch never accepts a path back through
its own ASN, so a pod is never re-entered). Faults are cables or switches taken out.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from fabricgen.lab.topology import LabCable, LabSwitch, LabTopology


@dataclass(frozen=True, slots=True)
class Faults:
    switches: frozenset[str] = frozenset()
    cables: frozenset[tuple[str, str]] = frozenset()
    """Cables by their (a node, a kernel name) end."""


NO_FAULTS = Faults()


@dataclass
class Graph:
    """Live switch-to-switch cables: `up[lower]` and `down[upper]` list one entry per cable."""

    up: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    down: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    asn: dict[str, int] = field(default_factory=dict)


def fabric_cables(topology: LabTopology) -> tuple[LabCable, ...]:
    switches = {s.name for s in topology.switches}
    return tuple(c for c in topology.cables if c.a_node in switches and c.z_node in switches)


def graph(topology: LabTopology, faults: Faults = NO_FAULTS) -> Graph:
    result = Graph(asn={s.name: s.asn for s in topology.switches})
    for cable in fabric_cables(topology):
        if cable.a_node in faults.switches or cable.z_node in faults.switches or (cable.a_node, cable.a_kernel) in faults.cables:
            continue
        result.up[cable.a_node].append(cable.z_node)
        result.down[cable.z_node].append(cable.a_node)
    return result


def _reaches(live: Graph, upper: str, leaf: str) -> bool:
    if leaf in live.down[upper]:
        return True
    for top in set(live.up[upper]):
        for other in set(live.down[top]):
            if live.asn[other] != live.asn[upper] and leaf in live.down[other]:
                return True
    return False


def ecmp_width(live: Graph, source: LabSwitch, destination: str) -> int:
    """Kernel next hops `source` (a leaf) has towards the prefixes of leaf `destination`."""
    width = sum(1 for upper in live.up[source.name] if _reaches(live, upper, destination))
    return min(width, source.maximum_paths)


def leaf_prefixes(topology: LabTopology) -> dict[str, tuple[str, ...]]:
    """Routes each leaf originates: its loopback and the subnets of its server cables."""
    servers = defaultdict(list)
    for cable in topology.cables:
        if cable.kind == "server-leaf" and cable.subnet:
            servers[cable.z_node].append(cable.subnet)
    return {s.name: (f"{s.loopback}/32", *sorted(servers[s.name])) for s in topology.switches if s.role == "leaf"}


def originated(topology: LabTopology, switch: LabSwitch) -> frozenset[str]:
    """What `switch` must announce: a leaf its loopback and server subnets, others their loopback."""
    return frozenset(leaf_prefixes(topology).get(switch.name, (f"{switch.loopback}/32",)))


def largest_host_mtu(topology: LabTopology) -> int:
    return max((nic.mtu for server in topology.servers for nic in server.nics), default=0)


def ping_pairs(topology: LabTopology) -> list[tuple[str, str, str, str, str]]:
    """(server, source address, destination server, destination address, leaf): one pair per leaf,
    from a NIC on that leaf to a NIC on the next leaf (next pod's first leaf wraps pods), so
    every leaf sends and receives."""
    by_leaf: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for server in topology.servers:
        for nic in server.nics:
            if nic.address:
                by_leaf[nic.leaf].append((server.name, nic.address))
    leaves = [s.name for s in sorted(topology.switches, key=lambda s: (s.pod, s.name)) if s.role == "leaf" and by_leaf[s.name]]
    pairs = []
    for index, leaf in enumerate(leaves):
        step = max(1, len(leaves) // 2) if len({topology.switch(x).pod for x in leaves}) > 1 else 1
        other = leaves[(index + step) % len(leaves)]
        if other == leaf:
            continue
        (src_server, src), (dst_server, dst) = by_leaf[leaf][0], by_leaf[other][-1]
        pairs.append((src_server, src, dst_server, dst, leaf))
    return pairs


CableKey = tuple[str, str]
"""A cable by its lower end: (a node, a kernel name)."""


def path_cables(topology: LabTopology, source: str, destination: str) -> frozenset[CableKey]:
    """Every switch-to-switch cable a packet from leaf `source` to leaf `destination` may cross,
    whatever the ECMP hash picks: up to an upper switch that reaches `destination`, then down
    directly, or over a super-spine and the destination pod's spine of that plane (the paths
    `ecmp_width` counts)."""
    ups: dict[str, list[LabCable]] = defaultdict(list)
    downs: dict[str, list[LabCable]] = defaultdict(list)
    for cable in fabric_cables(topology):
        ups[cable.a_node].append(cable)
        downs[cable.z_node].append(cable)
    asn = {s.name: s.asn for s in topology.switches}
    found: set[LabCable] = set()
    for first in ups[source]:
        upper = first.z_node
        last = [c for c in downs[upper] if c.a_node == destination]
        if last:
            found.update((first, *last))
        for second in ups[upper]:
            for third in downs[second.z_node]:
                if asn[third.a_node] == asn[upper]:
                    continue
                final = [c for c in downs[third.a_node] if c.a_node == destination]
                if final:
                    found.update((first, second, third, *final))
    return frozenset((c.a_node, c.a_kernel) for c in found)


def leaf_of_address(topology: LabTopology) -> dict[str, str]:
    """Server NIC address -> the leaf it is cabled to."""
    return {nic.address: nic.leaf for server in topology.servers for nic in server.nics if nic.address}
