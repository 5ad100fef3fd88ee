"""Allocation: pure functions from (role, index) to addresses, ports and ASNs.

Nothing here looks at the rest of the fabric. An address depends only on the pool, the
device's role and index, and the fixed slot sizes of the tier (derived from the switch models,
not from device counts), so adding a leaf or a server never moves anything that exists.

>>> ipv4(ip_int("10.0.0.0") + 5)
'10.0.0.5'
>>> fabric_link_offset(leaf=2, spine=3, link=1, spine_slots=32, per_spine=1)
68
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field

from fabricgen.core.records import record

MANAGEMENT_RESERVED = 10
"""First addresses of the management pool left for gateways and infrastructure."""


def ip_int(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def ipv4(value: int) -> str:
    """Dotted quad of an address. The first three octets are formatted once per /24: a large
    fabric formats about a million consecutive addresses, and this is twice as fast as
    formatting all four octets each time.

    >>> ipv4(167772161), ipv4(167772161 + 300), ipv4(0)
    ('10.0.0.1', '10.0.1.45', '0.0.0.0')
    """
    network = value >> 8
    prefix = _NETWORKS.get(network)
    if prefix is None:
        if len(_NETWORKS) >= _NETWORKS_KEPT:
            _NETWORKS.clear()
        prefix = _NETWORKS[network] = f"{(value >> 24) & 255}.{(value >> 16) & 255}.{network & 255}."
    return prefix + _OCTETS[value & 255]


def ipv4_pair(value: int) -> tuple[str, str]:
    """Both addresses of the /31 at even `value`, formatted with one lookup of their /24 (a
    5,000-switch fabric has 130,000 switch-to-switch /31s).

    >>> ipv4_pair(167772160 + 254), ipv4_pair(167772160 + 255)
    (('10.0.0.254', '10.0.0.255'), ('10.0.0.255', '10.0.1.0'))
    """
    if value & 1:
        return ipv4(value), ipv4(value + 1)
    prefix = _NETWORKS.get(value >> 8)
    if prefix is None:
        prefix = ipv4(value)[: -len(_OCTETS[value & 255])]
    return prefix + _OCTETS[value & 255], prefix + _OCTETS[(value & 255) | 1]


_NETWORKS: dict[int, str] = {}
"""First three octets (with the dot) by /24, formatted once."""
_NETWORKS_KEPT = 1 << 16
_OCTETS = tuple(str(octet) for octet in range(256))


def prefix_base_size(prefix: str) -> tuple[int, int]:
    """'10.0.0.0/24' -> (base as int, number of addresses). Host bits are ignored."""
    network = ipaddress.IPv4Network(prefix, strict=False)
    return int(network.network_address), network.num_addresses


def fabric_link_offset(*, leaf: int, spine: int, link: int, spine_slots: int, per_spine: int) -> int:
    """Offset of the /31 of parallel link `link` (1-based) between `leaf` and `spine`."""
    return (((leaf - 1) * spine_slots + (spine - 1)) * per_spine + (link - 1)) * 2


def server_block_size(leaf_logical_ports: int, mode: str) -> int:
    """Addresses each leaf owns in the server pool: a /31 per port, or one subnet per leaf."""
    if mode == "p2p":
        return leaf_logical_ports * 2
    size = 4
    while size < leaf_logical_ports + 3:
        size *= 2
    return size


def split_slot(slot: int, per_cage: int, first_cage: int) -> tuple[int, int]:
    """Logical slot (0-based) -> (cage, sub-port), both 1-based."""
    return first_cage + slot // per_cage, slot % per_cage + 1


def cages_for(slots: int, per_cage: int) -> int:
    return -(-slots // per_cage)


@record
class Layout:
    """Fixed slot sizes of every tier, from which all offsets derive.

    Slots come from the switch models (how many leaves a spine can take, how many pods a
    super-spine can take) or from pinned indices, never from the count of another tier, so
    adding a leaf, a spine, a pod or a super-spine never moves an existing address or ASN.
    Two tiers are the special case `leaf_slots = superspine_slots = 0`, one pod: every formula
    below then reduces to the two-tier one above.

    >>> two = Layout(spine_slots=32)
    >>> two.device_offset("spine", 3), two.device_offset("leaf", 2), two.leaf_spine_offset(1, 2, 3, 1)
    (3, 34, 68)
    >>> three = Layout(spine_slots=4, leaf_slots=8, superspine_slots=2, pod_slots=16)
    >>> three.device_offset("superspine", 1, plane=2), three.device_offset("spine", 1, pod=2), three.device_offset("leaf", 1, pod=2)
    (3, 21, 25)
    >>> three.leaf_number(2, 1), three.spine_superspine_offset(plane=1, superspine=1, pod=2, link=1)
    (9, 2)
    """

    spine_slots: int
    leaf_slots: int = 0
    superspine_slots: int = 0
    pod_slots: int = 1
    per_spine: int = 1
    per_superspine: int = 1

    def leaf_number(self, pod: int, index: int) -> int:
        """Fabric-wide leaf number (1-based): leaf ASNs, server blocks and GUIDs derive from it."""
        return (pod - 1) * self.leaf_slots + index

    def spine_number(self, pod: int, index: int) -> int:
        return (pod - 1) * self.spine_slots + index

    def superspine_number(self, plane: int, index: int) -> int:
        return (plane - 1) * self.superspine_slots + index

    def device_offset(self, role: str, index: int, *, pod: int = 1, plane: int = 0) -> int:
        """Loopback offset: super-spines first (plane by plane), then pod by pod its spines and leaves."""
        if role == "superspine":
            return self.superspine_number(plane, index)
        base = self.spine_slots * self.superspine_slots + (pod - 1) * (self.spine_slots + self.leaf_slots)
        return base + (index if role == "spine" else self.spine_slots + index)

    def management_offset(self, role: str, index: int, *, pod: int = 1, plane: int = 0) -> int:
        return MANAGEMENT_RESERVED + self.device_offset(role, index, pod=pod, plane=plane)

    @property
    def superspine_block(self) -> int:
        """Fabric-pool addresses of all spine-super-spine /31s, allocated before the pods' links."""
        return self.spine_slots * self.superspine_slots * self.pod_slots * self.per_superspine * 2

    def spine_superspine_offset(self, *, plane: int, superspine: int, pod: int, link: int) -> int:
        slot = ((plane - 1) * self.superspine_slots + superspine - 1) * self.pod_slots + pod - 1
        return (slot * self.per_superspine + link - 1) * 2

    def leaf_spine_offset(self, pod: int, leaf: int, spine: int, link: int) -> int:
        """The pod's block, then `fabric_link_offset` within it (inlined: once per cable)."""
        spine_slots, per_spine = self.spine_slots, self.per_spine
        pod_base = self.superspine_block + (pod - 1) * self.leaf_slots * spine_slots * per_spine * 2
        return pod_base + (((leaf - 1) * spine_slots + (spine - 1)) * per_spine + (link - 1)) * 2

    def leaf_uplinks(self, pod: int, leaf: int) -> Uplinks:
        """A leaf's cables as one run: `leaf_spine_offset(pod, leaf, spine, link)` is
        `first + (spine - 1) * step + (link - 1) * 2`. WHY: the wiring works out one pair per
        device instead of calling the formula once per cable (131,000 calls at 5,120 switches).

        >>> Layout(spine_slots=4, leaf_slots=8, pod_slots=2, per_spine=2).leaf_uplinks(2, 3)
        (160, 4)
        """
        return self.leaf_spine_offset(pod, leaf, 1, 1), self.per_spine * 2

    def spine_uplinks(self, pod: int, spine: int) -> Uplinks:
        """A spine's cables to the super-spines of its plane (plane = the spine's index) as one
        run: `spine_superspine_offset(plane=spine, superspine=s, pod=pod, link=link)` is
        `first + (s - 1) * step + (link - 1) * 2` (see `leaf_uplinks`).

        >>> Layout(spine_slots=4, leaf_slots=8, superspine_slots=2, pod_slots=16, per_superspine=2).spine_uplinks(3, 2)
        (136, 64)
        """
        return self.spine_superspine_offset(plane=spine, superspine=1, pod=pod, link=1), self.pod_slots * self.per_superspine * 2


Uplinks = tuple[int, int]
"""(offset of a device's /31 on link 1 to the upper device of index 1, addresses from one upper
index to the next): every cable of the device to its upper tier is at a fixed step from the first."""


@dataclass(slots=True)
class PoolTally:
    """How much of each pool a pass allocated: addresses assigned (`used`) and one past the
    highest offset (`needed`). Passes each keep their own and the planner merges them.

    >>> a, b = PoolTally(), PoolTally()
    >>> a.take("fabric", 10, 2); b.take("fabric", 4, 2)
    >>> merged = PoolTally.merge((a, b)); merged.used["fabric"], merged.needed["fabric"]
    (4, 12)
    """

    used: dict[str, int] = field(default_factory=dict)
    needed: dict[str, int] = field(default_factory=dict)

    def take(self, name: str, offset: int, count: int = 1) -> None:
        self.used[name] = self.used.get(name, 0) + count
        self.needed[name] = max(self.needed.get(name, 0), offset + count)

    def take_many(self, name: str, count: int, end: int) -> None:
        """`count` addresses taken at once, the highest offset among them `end - 1`."""
        self.used[name] = self.used.get(name, 0) + count
        self.needed[name] = max(self.needed.get(name, 0), end)

    @classmethod
    def merge(cls, tallies: Iterable[PoolTally]) -> PoolTally:
        total = cls()
        for tally in tallies:
            for name, used in tally.used.items():
                total.used[name] = total.used.get(name, 0) + used
            for name, needed in tally.needed.items():
                total.needed[name] = max(total.needed.get(name, 0), needed)
        return total
