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

MANAGEMENT_RESERVED = 10
"""First addresses of the management pool left for gateways and infrastructure."""


def ip_int(text: str) -> int:
    return int(ipaddress.IPv4Address(text))


def ipv4(value: int) -> str:
    return f"{(value >> 24) & 255}.{(value >> 16) & 255}.{(value >> 8) & 255}.{value & 255}"


def prefix_base_size(prefix: str) -> tuple[int, int]:
    """'10.0.0.0/24' -> (base as int, number of addresses). Host bits are ignored."""
    network = ipaddress.IPv4Network(prefix, strict=False)
    return int(network.network_address), network.num_addresses


def loopback_offset(role: str, index: int, spine_slots: int) -> int:
    """Spines fill addresses 1..spine_slots of the pool, leaves follow (the .0 stays unused)."""
    return index if role == "spine" else spine_slots + index


def management_offset(role: str, index: int, spine_slots: int) -> int:
    return MANAGEMENT_RESERVED + loopback_offset(role, index, spine_slots)


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
