"""Pass: assemble each switch's `Device` from what the earlier passes decided for it.

Interfaces sorted by port (the wiring passes built them, with the platform's `speed` setting
and PFC headroom), broken-out cages derived from the interfaces' speeds, BGP neighbors sorted
by address and their peer groups, the placeholder GUID of an InfiniBand switch without a pin.
"""

from __future__ import annotations

import dataclasses
import operator
from _socket import inet_aton  # `socket.inet_aton` itself, without `socket`'s 5 ms of import
from collections.abc import Iterable, Mapping, Sequence

from fabricgen.core.model import BgpNeighbor, Breakout, Device, Interface, PeerGroup
from fabricgen.core.records import record
from fabricgen.plan.guids import switch_guid
from fabricgen.plan.passes.addressing import DeviceAddresses, Pools
from fabricgen.plan.passes.expand import TierNode

ROLE_ORDER = {"superspine": 0, "spine": 1, "leaf": 2}
"""Device order of the plan: top tier first, then pod by pod."""


@record
class Routing:
    """The BGP intent of one device that the planner decided before assembly."""

    maximum_paths: int
    maximum_routes: int = 0
    """Routes each BGP neighbor may send (0 on InfiniBand)."""
    as_path_multipath_relax: bool = False
    aggregates: tuple[str, ...] = ()
    drained: bool = False
    """Under `drain:` (plan/passes/drain.py): BGP graceful shutdown moves traffic off it."""


Headroom = Mapping[str, Mapping[str, int]]
"""switch -> interface -> PFC headroom of that cable end, for the cables `cabling.overrides`
lengthens or shortens (`headroom.port_headroom`)."""


def assemble(
    node: TierNode,
    addresses: DeviceAddresses,
    pools: Pools,
    mtu: int,
    routing: Routing,
    interfaces: Iterable[Interface],
    neighbors: Iterable[BgpNeighbor],
    advertised: Iterable[str],
    infiniband: InfinibandSwitch | None,
    headroom: Headroom,
) -> Device:
    """The device, from its tier node, what the passes allocated and its cables' ends.
    `infiniband` is set for an InfiniBand fabric (GUIDs instead of loopbacks). Every neighbor is
    built here once, with its final values; `headroom` holds the PFC headroom of the ports whose
    cable length `cabling.overrides` changed (the wiring passes used the stage's length)."""
    drafts = list(interfaces)
    breakouts = _breakouts(drafts, node)
    ports = set(map(_PORT, drafts))
    ifaces = _with_headroom(_by_port(drafts, len(ports)), headroom.get(node.name))
    grouped = _by_address(list(neighbors))
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
        maximum_paths=routing.maximum_paths,
        interfaces=ifaces,
        breakouts=tuple(sorted(breakouts.values(), key=lambda b: b.port)),
        bgp_neighbors=tuple(grouped),
        advertised_prefixes=tuple(dict.fromkeys(advertised)),
        ports_total=node.model.ports,
        ports_used=len(ports - _NONE),
        peer_groups=_peer_groups(grouped),
        vlans=tuple(sorted(set(map(_VLAN, drafts)) - _NONE)),
        queue_keyword=node.platform.queue_keywords.get(node.model.queue_family, ""),
        as_path_multipath_relax=routing.as_path_multipath_relax,
        aggregates=routing.aggregates,
        maximum_routes=routing.maximum_routes,
        plane=node.plane,
        drained=routing.drained,
    )


_PORT_ORDER = operator.attrgetter("port", "sub", "name")
"""Interface order of a device."""
_PORT, _VLAN, _ADDRESS = operator.attrgetter("port"), operator.attrgetter("vlan"), operator.attrgetter("address")
"""`Interface.port`, `Interface.vlan`, `BgpNeighbor.address`, for C-level `map`s over a device's ends."""
_SPEED = operator.attrgetter("speed")
_NONE = frozenset({0})
"""Port 0 (an SVI) and VLAN 0 (no access VLAN) are not counted."""


def _by_port(interfaces: list[Interface], ports: int) -> list[Interface]:
    """The interfaces in (port, sub-port, name) order; `ports`: how many distinct ports they are
    on. WHY: when no two share a port (no broken-out cage: most switches) that is the order of
    their ports alone, and sorting by one int read in C costs less than building a three-field
    key per interface (390,000 at 5,120 switches).

    >>> from fabricgen.core.model import Interface
    >>> ports = [Interface(name=name, port=port, sub=sub, speed=100, role="uplink", address="", prefix_length=31, peer_device="",
    ...                    peer_interface="", description="", mtu=9214, roce=False)
    ...          for name, port, sub in (("e9", 9, 1), ("e1/2", 1, 2), ("e1/1", 1, 1), ("e2", 2, 1))]
    >>> [i.name for i in _by_port(ports, 3)], [i.name for i in _by_port([ports[0], ports[3]], 2)]
    (['e1/1', 'e1/2', 'e2', 'e9'], ['e2', 'e9'])
    """
    return sorted(interfaces, key=_PORT if ports == len(interfaces) else _PORT_ORDER)


def _with_headroom(interfaces: list[Interface], overridden: Mapping[str, int] | None) -> tuple[Interface, ...]:
    """The interfaces, those of RoCE ports whose cable length an override changed with the
    headroom of that length (a few cables of a fabric, if any)."""
    if not overridden:
        return tuple(interfaces)
    return tuple(
        dataclasses.replace(i, pfc_headroom_bytes=overridden[i.name]) if i.roce and i.name in overridden else i for i in interfaces
    )


def _by_address(neighbors: list[BgpNeighbor]) -> list[BgpNeighbor]:
    """The neighbors in address order. Keys are computed in C (`map`), and the list is sorted only
    when it is not in order already (most devices' cables are drafted in address order)."""
    keys = list(map(inet_aton, map(_ADDRESS, neighbors)))
    if keys == sorted(keys):
        return neighbors
    order = sorted(range(len(keys)), key=keys.__getitem__)
    return [neighbors[i] for i in order]


def _breakouts(drafts: Sequence[Interface], node: TierNode) -> dict[int, Breakout]:
    """Broken-out cages by port: the first interface of a cage whose speed splits it decides."""
    breakouts: dict[int, Breakout] = {}
    split = {speed for speed, per_cage in node.model.breakouts.items() if per_cage > 1}
    if split.isdisjoint(map(_SPEED, drafts)):  # no port runs a split speed (most switches): no loop in Python
        return breakouts
    for draft in drafts:
        if draft.speed in split and draft.port and draft.port not in breakouts:
            breakouts[draft.port] = Breakout(draft.port, node.model.logical_ports(draft.speed), draft.speed)
    return breakouts


@record
class InfinibandSwitch:
    """What an InfiniBand switch needs besides its node: the placeholder GUID prefix."""

    prefix: str


def _peer_groups(neighbors: list[BgpNeighbor]) -> tuple[PeerGroup, ...]:
    """One peer group per neighbor group, carrying the remote-as its neighbors inherit (the
    wiring decided that per group: a group holds the peers of one tier, `Ends`)."""
    carried = {n.peer_group: n.remote_asn if n.inherits_remote_as else 0 for n in neighbors}
    return tuple(PeerGroup(name, carried[name]) for name in sorted(carried))
