"""Pass: wire one tier to the tier above it (leaf->spine, spine->super-spine), one function.

Every lower device gets `per_pair` cables to every upper device of its group (a leaf to the
spines of its pod; spine j of every pod to super-spine plane j). For each cable the pass
decides both ports, the /31 (upper end .0, lower end .1), both interfaces and, when routed,
both BGP neighbors (in the peer group each end's platform names for the other tier). Ports: a lower device's uplinks fill its last cages (or from
`first_port`), slot (upper index - 1) x per_pair + link; an upper device's downlinks fill its
first cages, slot (lower position - 1) x per_pair + link, where the position is the leaf's
index (leaf->spine) or the spine's pod (spine->super-spine). The /31's offset comes from the
layout. Each lower device only looks at its own group: the cost is linear in the cables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fabricgen.core.model import Endpoint
from fabricgen.plan import allocate
from fabricgen.plan.allocate import PoolTally, ipv4_pair
from fabricgen.plan.passes.expand import TierNode
from fabricgen.plan.passes.ports import LinkDraft, NeighborDraft, PortDraft, PortSlots, SlotsByKind, port_slots


@dataclass(frozen=True, slots=True)
class Stage:
    """One tier-to-tier wiring and its parameters."""

    kind: str
    """Link kind: `leaf-spine` or `spine-superspine`."""
    speed: int
    per_pair: int
    """Parallel cables between each lower/upper pair."""
    length_m: float
    uplink_slots: int
    """Uplink slots every lower device reserves: highest upper index x per_pair."""
    fabric_base: int
    """First address of the fabric pool."""
    routed: bool
    roce: bool
    first_port: int = 0
    """First uplink cage of a lower device; 0: the last cages of its model."""


@dataclass(slots=True)
class Ends:
    """What one device collects from the cables of a stage, in cable order (drafts: the device
    pass builds the final interfaces and neighbors)."""

    interfaces: list[PortDraft] = field(default_factory=list)
    neighbors: list[NeighborDraft] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Wiring:
    """The result of one stage: its cables, every device's ends, the fabric pool it used."""

    links: tuple[LinkDraft, ...]
    ends: Mapping[str, Ends]
    tally: PoolTally


_new = tuple.__new__

Offset = Callable[[TierNode, TierNode, int], int]
"""(lower, upper, link number) -> offset of the cable's /31 in the fabric pool."""


def connect(
    lower: Sequence[TierNode],
    uppers: Callable[[TierNode], Sequence[TierNode]],
    stage: Stage,
    *,
    offset: Offset,
    position: Callable[[TierNode], int],
    asn: Mapping[str, int],
    mtu: Mapping[str, int],
) -> Wiring:
    """Cables from every device of `lower` to each of `uppers(device)`.

    `position(lower device)` places its downlinks on the upper device; `asn` and `mtu` give
    every device's ASN (by name) and MTU (by platform name)."""
    ends: dict[str, Ends] = {}
    links: list[LinkDraft] = []
    kinds: SlotsByKind = {}
    upper: dict[str, _UpperSide] = {}
    highest, speed, roce, routed, length = 0, stage.speed, stage.roce, stage.routed, stage.length_m
    addresses = ("", "", "")
    """(subnet, A address, Z address) of the cable: none when not routed."""
    for low in lower:
        above = uppers(low)
        if not above:
            continue
        per_cage_up = low.model.logical_ports(stage.speed)
        first_up = stage.first_port or low.model.ports - allocate.cages_for(stage.uplink_slots, per_cage_up) + 1
        low_ports = port_slots(kinds, low, per_cage_up, first_up)
        low_ends = ends.setdefault(low.name, Ends())
        low_mtu, low_asn, low_slot = mtu[low.platform.name], asn[low.name], (position(low) - 1) * stage.per_pair - 1
        for up in above:
            known = upper.get(up.name)
            if known is None:
                known = upper[up.name] = _upper_side(up, stage, ends, kinds, asn)
            up_ends, up_ports, up_asn, up_slot = known
            # Both ends of a cable run the largest MTU both platforms support (EOS 9214 against
            # NX-OS 9216 gives 9214 on both), so a frame one end sends the other accepts.
            link_mtu = min(low_mtu, mtu[up.platform.name])
            # Peer group names are platform data: each end names the other tier's group.
            up_group = low.platform.names[f"peer_group_{up.role}"] if routed else ""
            low_group = up.platform.names[f"peer_group_{low.role}"] if routed else ""
            up_name, low_name, kind, base = up.name, low.name, stage.kind, stage.fabric_base
            for link_no in range(1, stage.per_pair + 1):
                subnet = offset(low, up, link_no)
                if subnet + 2 > highest:
                    highest = subnet + 2
                up_addr, low_addr = ipv4_pair(base + subnet)
                low_cage, low_sub, low_if = low_ports[up_slot + link_no]
                up_cage, up_sub, up_if = up_ports[low_slot + link_no]
                # Each end's description names the far end; its BGP neighbor shares the string.
                to_up, to_low = f"{up_name} {up_if}", f"{low_name} {low_if}"
                # Drafts as `tuple.__new__(Draft, values)`: a named tuple's own `__new__` is a Python
                # function, 3x the cost, and this loop drafts five per cable (all fields given).
                low_ends.interfaces.append(
                    _new(PortDraft, (low_if, low_cage, low_sub, speed, "uplink", low_addr, 31, up_name, up_if, to_up, link_mtu, roce, 0))
                )
                up_ends.interfaces.append(
                    _new(PortDraft, (up_if, up_cage, up_sub, speed, "downlink", up_addr, 31, low_name, low_if, to_low, link_mtu, roce, 0))
                )
                if routed:
                    low_ends.neighbors.append(_new(NeighborDraft, (up_addr, up_asn, up_name, up_if, up_group, to_up)))
                    up_ends.neighbors.append(_new(NeighborDraft, (low_addr, low_asn, low_name, low_if, low_group, to_low)))
                    addresses = (f"{up_addr}/31", low_addr, up_addr)
                a, z = Endpoint(low_name, low_if, low_cage), Endpoint(up_name, up_if, up_cage)
                links.append(_new(LinkDraft, (kind, a, z, speed, *addresses, length, link_mtu)))
    tally = PoolTally()
    if links:
        tally.take_many("fabric", 2 * len(links), highest)
    return Wiring(tuple(links), ends, tally)


_UpperSide = tuple[Ends, PortSlots, int, int]
"""What every cable to one upper device shares: its ends, its ports, its ASN, its first slot - 1."""


def _upper_side(up: TierNode, stage: Stage, ends: dict[str, Ends], kinds: SlotsByKind, asn: Mapping[str, int]) -> _UpperSide:
    """Worked out once per upper device, not once per lower device wired to it."""
    up_ends = ends.setdefault(up.name, Ends())
    return up_ends, port_slots(kinds, up, up.model.logical_ports(stage.speed), 1), asn[up.name], (up.index - 1) * stage.per_pair - 1
