"""What the wiring passes decide for one end of a cable, before the device is assembled.

`connect` and `attach_servers` decide every port's name, address and peer; the device pass
adds what only the whole device knows (the platform's `speed` setting of broken-out cages, the
PFC headroom from the finished cable, whether a peer group carries the remote AS) and builds
each frozen `Interface` and `BgpNeighbor` once, with its final values. The drafts are plain
named tuples: a 5,000-switch fabric has about a million of them, and building each plan
object once instead of rebuilding it per pass halved the planning time (measured with
cProfile).

Their fields are the leading fields of `Interface` and `BgpNeighbor`, in order, so assembly
appends the rest: `Interface(*draft, speed_setting, headroom)`.
"""

from __future__ import annotations

from typing import NamedTuple


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
