"""Pass: wire one tier to the tier above it (leaf->spine, spine->super-spine), one function.

Every lower device gets `per_pair` cables to every upper device of its group (a leaf to the
spines of its pod; spine j of every pod to super-spine plane j). For each cable the pass
decides both ports, the /31 (upper end .0, lower end .1), both interfaces and, when routed,
both BGP neighbors (in the peer group each end's platform names for the other tier; the group
carries the remote-as when the device's peers in it are several and share one ASN). Each
interface and neighbor is built once, final. Ports: a lower device's uplinks fill its last cages (or from
`first_port`), slot (upper index - 1) x per_pair + link; an upper device's downlinks fill its
first cages, slot (lower position - 1) x per_pair + link, where the position is the leaf's
index (leaf->spine) or the spine's pod (spine->super-spine). The /31's offset comes from the
layout. Each lower device only looks at its own group: the cost is linear in the cables.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

from fabricgen.core.model import BgpNeighbor, Endpoint, Interface, Link
from fabricgen.core.records import builder, record
from fabricgen.plan import allocate
from fabricgen.plan.allocate import PoolTally, Uplinks, ipv4_pair
from fabricgen.plan.passes.expand import TierNode
from fabricgen.plan.passes.headroom import cable_headroom
from fabricgen.plan.passes.ports import PortSlots, SlotsByKind, port_slots, speed_setting


@record
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
    """What one device collects from the cables of a stage, in cable order: its final interfaces
    and BGP neighbors (the device pass sorts them)."""

    interfaces: list[Interface] = field(default_factory=list)
    neighbors: list[BgpNeighbor] = field(default_factory=list)


@record
class Wiring:
    """The result of one stage: its cables, every device's ends, the fabric pool it used."""

    links: tuple[Link, ...]
    ends: Mapping[str, Ends]
    tally: PoolTally
    uplinks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Every lower device's upper devices (what AS-path intent walks: one entry per device, not
    per cable)."""


Offset = Callable[[TierNode], Uplinks]
"""Lower device -> its cables' /31s as one run (`allocate.Uplinks`): the cable to the upper device
of index u, link number k, is at `first + (u - 1) * step + (k - 1) * 2` in the fabric pool."""


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
    links: list[Link] = []
    kinds: SlotsByKind = {}
    upper: dict[str, _UpperSide] = {}
    uplinks: dict[str, tuple[str, ...]] = {}
    pairs: dict[tuple[str, str, str, str], _Pair] = {}
    highest, speed, routed, length, kind = 0, stage.speed, stage.routed, stage.length_m, stage.kind
    base = stage.fabric_base
    link_offsets = [(link_no, 2 * link_no) for link_no in range(1, stage.per_pair + 1)]
    for low in lower:
        above = uppers(low)
        if not above:
            continue
        if stage.per_pair:
            uplinks[low.name] = tuple(up.name for up in above)
        per_cage_up = low.model.logical_ports(speed)
        first_up = stage.first_port or low.model.ports - allocate.cages_for(stage.uplink_slots, per_cage_up) + 1
        low_ports = port_slots(kinds, low, per_cage_up, first_up)
        low_ends = ends.setdefault(low.name, Ends())
        low_setting = speed_setting(speed, low.platform, low.model, per_cage_up)
        low_rows: list[_PortRow] = []
        low_peer_rows: list[_NeighborRow] = []
        low_name, low_asn, low_slot = low.name, asn[low.name], (position(low) - 1) * stage.per_pair - 1
        first, step = offset(low)
        first -= step + 2  # the offset of upper index 0, link 0: `up.index * step + 2 * link_no` on top
        for up in above:
            up_name = up.name
            known = upper.get(up_name)
            if known is None:
                known = upper[up.name] = _upper_side(up, stage, ends, kinds, asn)
            up_ports, up_asn, up_slot, up_setting, up_rows, up_peer_rows = known
            key = (low.platform.name, up.platform.name, low.role, up.role)
            pair = pairs.get(key)
            if pair is None:
                pair = pairs[key] = _pair(low, up, stage, mtu)
            link_mtu, low_headroom, up_headroom, up_group, low_group = pair
            up_first = first + up.index * step
            for link_no, link_offset in link_offsets:
                subnet = up_first + link_offset
                if subnet + 2 > highest:
                    highest = subnet + 2
                up_addr, low_addr = ipv4_pair(base + subnet)
                low_cage, low_sub, low_if = low_ports[up_slot + link_no]
                up_cage, up_sub, up_if = up_ports[low_slot + link_no]
                # Each end's description names the far end; its BGP neighbor shares the string.
                to_up, to_low = f"{up_name} {up_if}", f"{low_name} {low_if}"
                low_rows.append((low_if, low_cage, low_sub, low_addr, up_name, up_if, to_up, link_mtu, low_headroom))
                up_rows.append((up_if, up_cage, up_sub, up_addr, low_name, low_if, to_low, link_mtu, up_headroom))
                if routed:
                    low_peer_rows.append((up_addr, up_asn, up_name, up_if, up_group, to_up))
                    up_peer_rows.append((low_addr, low_asn, low_name, low_if, low_group, to_low))
                a, z = _ENDPOINT(low_name, low_if, low_cage), _ENDPOINT(up_name, up_if, up_cage)
                if routed:
                    links.append(_LINK(kind, a, z, speed, length, link_mtu, f"{up_addr}/31", low_addr, up_addr))
                else:
                    links.append(_LINK(kind, a, z, speed, length, link_mtu, "", "", ""))
        _finish(low_ends, _Side("uplink", speed, stage.roce, low_setting), low_rows, low_peer_rows)
    for name, (_, _, _, up_setting, up_rows, up_peer_rows) in upper.items():
        _finish(ends[name], _Side("downlink", speed, stage.roce, up_setting), up_rows, up_peer_rows)
    tally = PoolTally()
    if links:
        tally.take_many("fabric", 2 * len(links), highest)
    return Wiring(tuple(links), ends, tally, uplinks)


_Pair = tuple[int, int, int, str, str]
"""What every cable between two kinds of device shares: its MTU, the PFC headroom of its lower
and upper end, the peer group each end puts the other in."""


def _pair(low: TierNode, up: TierNode, stage: Stage, mtu: Mapping[str, int]) -> _Pair:
    """Worked out once per (platforms, roles) of the two ends, not once per cable."""
    # Both ends of a cable run the largest MTU both platforms support (EOS 9214 against
    # NX-OS 9216 gives 9214 on both), so a frame one end sends the other accepts.
    link_mtu = min(mtu[low.platform.name], mtu[up.platform.name])
    # Each end's headroom covers what the other end keeps sending after its PAUSE.
    low_headroom = cable_headroom(stage.length_m, stage.speed, link_mtu, up.platform.pfc_response_ns) if stage.roce else 0
    up_headroom = cable_headroom(stage.length_m, stage.speed, link_mtu, low.platform.pfc_response_ns) if stage.roce else 0
    # Peer group names are platform data: each end names the other tier's group.
    up_group = low.platform.names[f"peer_group_{up.role}"] if stage.routed else ""
    low_group = up.platform.names[f"peer_group_{low.role}"] if stage.routed else ""
    return link_mtu, low_headroom, up_headroom, up_group, low_group


_ENDPOINT = builder(Endpoint, "device", "interface", "port")
_LINK = builder(Link, "kind", "a", "z", "speed", "length_m", "mtu", "subnet", "a_address", "z_address")
"""A fabric cable: the fields this pass sets, by name (`media` stays None until the media pass)."""
_INTERFACE = builder(
    Interface,
    *("role", "speed", "roce", "speed_setting", "prefix_length"),
    *("name", "port", "sub", "address", "peer_device", "peer_interface", "description", "mtu", "pfc_headroom_bytes"),
)
"""An interface: what a side of a stage shares (`_Side`, and the /31), then a `_PortRow`."""
_NEIGHBOR = builder(
    BgpNeighbor, "inherits_remote_as", "address", "remote_asn", "peer_device", "peer_interface", "peer_group", "description"
)
"""A BGP neighbor: whether its group carries the remote AS, then a `_NeighborRow`."""

_PortRow = tuple[str, int, int, str, str, str, str, int, int]
"""What differs from port to port on one side of a stage: name, cage, sub-port, address, peer
device, peer port, description, MTU and PFC headroom (those two per pair of platforms)."""
_NeighborRow = tuple[str, int, str, str, str, str]
"""What differs from neighbor to neighbor: address, remote AS, peer device, peer port, peer
group, description."""
_ROW_ASN, _ROW_DEVICE = itemgetter(1), itemgetter(2)


@record
class _Side:
    """What every port of one device on one side of a stage shares."""

    role: str
    speed: int
    roce: bool
    speed_setting: str


def _finish(device: Ends, side: _Side, ports: list[_PortRow], neighbors: list[_NeighborRow]) -> None:
    """Build one device's interfaces and neighbors of the stage together, by field name. Its
    neighbors of a stage are its peer group for the other tier (each tier has its own group
    name): the group carries their remote-as when they are several and share one ASN (the
    spines seen from a leaf, not the leaves seen from a spine).

    WHY rows first: objects built one after another lie next to each other in memory, and every
    later reader walks a device's interfaces in a row (checks, renderers). Built per cable, a
    spine's ports were spread between its leaves' objects: walking all interfaces took 2.4x
    the time (measured at 5,000 switches); a plain tuple of what varies per port costs far less."""
    shared = (side.role, side.speed, side.roce, side.speed_setting, 31)
    device.interfaces.extend([_INTERFACE(*shared, *row) for row in ports])
    inherits = len(set(map(_ROW_ASN, neighbors))) == 1 and len(set(map(_ROW_DEVICE, neighbors))) > 1
    device.neighbors.extend([_NEIGHBOR(inherits, *row) for row in neighbors])


_UpperSide = tuple[PortSlots, int, int, str, list[_PortRow], list[_NeighborRow]]
"""What every cable to one upper device shares: its ports, its ASN, its first slot - 1, its
ports' speed setting; and the fields of its ports and neighbors, gathered over the stage."""


def _upper_side(up: TierNode, stage: Stage, ends: dict[str, Ends], kinds: SlotsByKind, asn: Mapping[str, int]) -> _UpperSide:
    """Worked out once per upper device, not once per lower device wired to it."""
    ends.setdefault(up.name, Ends())
    per_cage = up.model.logical_ports(stage.speed)
    slots = port_slots(kinds, up, per_cage, 1)
    return slots, asn[up.name], (up.index - 1) * stage.per_pair - 1, speed_setting(stage.speed, up.platform, up.model, per_cage), [], []
