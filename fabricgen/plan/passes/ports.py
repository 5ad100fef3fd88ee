"""What the wiring passes decide for one end of a cable, before the device is assembled.

`connect` and `attach_servers` decide every port's name, address and peer; the device pass
adds what only the whole device knows (the platform's `speed` setting of broken-out cages, the
PFC headroom from the finished cable, whether a peer group carries the remote AS) and builds
each frozen `Interface` and `BgpNeighbor` once, with its final values. The drafts are plain
named tuples: a 5,000-switch fabric has about a million of them, and building each plan
object once instead of rebuilding it per pass halved the planning time (measured with
cProfile).

`PortSlots` names the ports of a kind of device once, for all devices of that kind.

The port and neighbor drafts' fields are the leading fields of `Interface` and `BgpNeighbor`,
in order, so assembly appends the rest: `Interface(*draft, speed_setting, headroom)`. Cables
are drafted the same way until the media pass.
"""

from __future__ import annotations

from typing import NamedTuple

from fabricgen import allocate
from fabricgen.model import Endpoint, Link
from fabricgen.plan.passes.expand import TierNode


class PortDraft(NamedTuple):
    """An `Interface` without its `speed_setting` and `pfc_headroom_bytes` (same fields, same order)."""

    name: str
    port: int
    sub: int
    speed: int
    role: str
    address: str
    prefix_length: int
    peer_device: str
    peer_interface: str
    description: str
    mtu: int
    roce: bool
    vlan: int = 0


class NeighborDraft(NamedTuple):
    """A `BgpNeighbor` without `inherits_remote_as` (same fields, same order)."""

    address: str
    remote_asn: int
    peer_device: str
    peer_interface: str
    peer_group: str
    description: str


class LinkDraft(NamedTuple):
    """A `Link` before the media pass chooses its `media` (the same fields otherwise; the media
    pass builds each `Link` once, with its media)."""

    kind: str
    a: Endpoint
    z: Endpoint
    speed: int
    subnet: str
    a_address: str
    z_address: str
    length_m: float
    mtu: int = 0


AnyLink = Link | LinkDraft
"""A cable before or after the media pass (the passes that read cables take either)."""


Port = tuple[int, int, str]
"""(cage, sub-port, interface name) of one logical slot of a device."""


class PortSlots(dict[int, Port]):
    """The port of each logical slot (0-based) of one kind of device (platform, model, cage
    split, first cage), named on first use: every device of that kind shares it, so a
    5,000-switch fabric names a million ports from a few hundred distinct slots."""

    def __init__(self, node: TierNode, per_cage: int, first: int) -> None:
        super().__init__()
        self.node, self.per_cage, self.first = node, per_cage, first

    def __missing__(self, slot: int) -> Port:
        cage, sub = allocate.split_slot(slot, self.per_cage, self.first)
        port = self[slot] = (cage, sub, self.node.platform.port_name(cage, sub, self.per_cage, self.node.model.lanes))
        return port


SlotsByKind = dict[tuple[str, str, int, int], PortSlots]
"""PortSlots by (platform, model, logical ports per cage, first cage)."""


def port_slots(known: SlotsByKind, node: TierNode, per_cage: int, first: int) -> PortSlots:
    """The slots of `node`'s kind of device, shared through `known`."""
    key = (node.platform.name, node.model.name, per_cage, first)
    slots = known.get(key)
    if slots is None:
        slots = known[key] = PortSlots(node, per_cage, first)
    return slots
