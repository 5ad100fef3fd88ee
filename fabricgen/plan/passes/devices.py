"""Pass: assemble each switch's `Device` from what the earlier passes decided for it.

Interfaces sorted by port, broken-out cages derived from the interfaces' speeds, the
platform's `speed` setting per port, BGP neighbors sorted by address and grouped into peer
groups, the placeholder GUID of an InfiniBand switch without a pin.
"""

from __future__ import annotations

import dataclasses
import operator
import socket
from collections.abc import Iterable
from typing import Any, TypeVar

from fabricgen.model import BgpNeighbor, Breakout, Device, Interface, PeerGroup
from fabricgen.plan.guids import switch_guid
from fabricgen.plan.passes.addressing import DeviceAddresses, Pools
from fabricgen.plan.passes.expand import TierNode

ROLE_ORDER = {"superspine": 0, "spine": 1, "leaf": 2}
"""Device order of the plan: top tier first, then pod by pod."""


def assemble(
    node: TierNode,
    addresses: DeviceAddresses,
    pools: Pools,
    mtu: int,
    maximum_paths: int,
    interfaces: Iterable[Interface],
    neighbors: Iterable[BgpNeighbor],
    advertised: Iterable[str],
    infiniband: InfinibandSwitch | None,
) -> Device:
    """The device, from its tier node, what the passes allocated and its cables' ends.
    `infiniband` is set for an InfiniBand fabric (GUIDs instead of loopbacks)."""
    breakouts: dict[int, Breakout] = {}
    interfaces = list(interfaces)
    for iface in interfaces:
        per_cage = node.model.logical_ports(iface.speed)
        if iface.port and iface.port not in breakouts and per_cage > 1:
            breakouts[iface.port] = Breakout(iface.port, per_cage, iface.speed)
    ifaces = tuple(sorted((_with_speed(i, node, breakouts) for i in interfaces), key=lambda i: (i.port, i.sub, i.name)))
    groups, grouped = _peer_groups(list(neighbors))
    routed = infiniband is None
    guid = ""
    if infiniband is not None:
        guid = node.guid or switch_guid(infiniband.prefix, node.role, addresses.number)
    management = addresses.management
    return Device(
        name=node.name,
        role=node.role,
        index=node.index,
        pod=node.pod,
        platform=node.platform.name,
        model=node.model.name,
        loopback=addresses.loopback if routed else "",
        asn=addresses.asn,
        router_id=addresses.loopback if routed else "",
        management=management,
        management_prefix_length=pools.management_length if management else 0,
        management_gateway=pools.management_gateway if management else "",
        serial=node.serial,
        guid=guid,
        guid_is_placeholder=infiniband is not None and not node.guid,
        mtu=mtu,
        maximum_paths=maximum_paths,
        interfaces=ifaces,
        breakouts=tuple(sorted(breakouts.values(), key=lambda b: b.port)),
        bgp_neighbors=tuple(sorted(grouped, key=lambda n: socket.inet_aton(n.address))),
        advertised_prefixes=tuple(dict.fromkeys(advertised)),
        ports_total=node.model.ports,
        ports_used=len({i.port for i in ifaces if i.port}),
        peer_groups=groups,
        vlans=tuple(sorted({i.vlan for i in ifaces if i.vlan})),
        queue_keyword=node.platform.queue_keywords.get(node.model.queue_family, ""),
        plane=node.plane,
    )


@dataclasses.dataclass(frozen=True, slots=True)
class InfinibandSwitch:
    """What an InfiniBand switch needs besides its node: the placeholder GUID prefix."""

    prefix: str


def _with_speed(interface: Interface, node: TierNode, breakouts: dict[int, Breakout]) -> Interface:
    """Fill in the platform's `speed` value of a front-panel port (platform data decides the format)."""
    if not interface.port:
        return interface
    breakout = breakouts.get(interface.port)
    pattern = node.platform.breakout_speed_format if breakout else node.platform.speed_format
    lanes = node.model.lanes // breakout.count if breakout else node.model.lanes
    key = (pattern, interface.speed, max(lanes, 1))
    setting = _SPEED_SETTINGS.get(key)
    if setting is None:
        setting = _SPEED_SETTINGS[key] = pattern.format(speed=key[1], mbps=key[1] * 1000, lanes=key[2])
    return _replace(interface, speed_setting=setting)


_T = TypeVar("_T")
_SPEED_SETTINGS: dict[tuple[str, int, int], str] = {}
"""Formatted speed settings by (pattern, speed, lanes): a few distinct values, a million ports at scale."""
_FIELDS: dict[type, tuple[operator.attrgetter[Any], dict[str, int]]] = {}


def _replace(obj: _T, **changes: Any) -> _T:
    """`dataclasses.replace` for the plan's dataclasses (every field an init field, none
    keyword-only), built positionally: at 5,000 switches it runs for every port and BGP
    neighbor, about half a million times, and dataclasses.replace took twice as long per call."""
    cls = type(obj)
    known = _FIELDS.get(cls)
    if known is None:
        fields = dataclasses.fields(cls)  # type: ignore[arg-type]
        assert len(fields) > 1 and all(f.init and not f.kw_only for f in fields), cls
        names = tuple(f.name for f in fields)
        known = _FIELDS[cls] = (operator.attrgetter(*names), {name: i for i, name in enumerate(names)})
    getter, index = known
    values = list(getter(obj))
    for name, value in changes.items():
        values[index[name]] = value
    return cls(*values)


def _peer_groups(neighbors: list[BgpNeighbor]) -> tuple[tuple[PeerGroup, ...], list[BgpNeighbor]]:
    """One peer group per neighbor group; it carries remote-as when all its peers share one ASN
    (the spine tier seen from a leaf), otherwise each neighbor states its own (one ASN per leaf)."""
    asns: dict[str, set[int]] = {}
    peers: dict[str, set[str]] = {}
    for neighbor in neighbors:
        asns.setdefault(neighbor.peer_group, set()).add(neighbor.remote_asn)
        peers.setdefault(neighbor.peer_group, set()).add(neighbor.peer_device)
    shared = {name: min(values) for name, values in asns.items() if len(values) == 1 and len(peers[name]) > 1}
    groups = tuple(PeerGroup(name, shared.get(name, 0)) for name in sorted(asns))
    return groups, [_replace(n, inherits_remote_as=n.peer_group in shared) for n in neighbors]
