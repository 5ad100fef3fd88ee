"""`build_plan`: a schema-valid, defaulted inventory -> the frozen `Plan`, as a sequence of passes.

The planner allocates; it does not judge. Problems that make a plan impossible to build (an
unknown model, a speed a model cannot run, a cable no medium reaches) are diagnostics raised
as FabricError by the pass that finds them; everything that can be built but is wrong (pools
too small, ports exhausted, oversubscription) is left for `checks/`, which reads the plan.

The passes, in order (one module each under `plan/passes/`, docs/architecture.md):
expand tiers -> link speeds -> layout and device addresses -> RoCE/QoS policy -> connect
(leaves to spines, spines to super-spines) -> attach servers -> cable lengths -> PFC headroom
of overridden cables and AS-path intent -> assemble devices -> InfiniBand parts -> media -> sources (pins, jobs).
Each device is visited once per cable it has: the cost is linear in the size of the fabric.
The wiring passes build each frozen interface and BGP neighbor once, final (the headroom pass
redoes only the ends of cables `cabling.overrides` changed); cables are drafts
(`passes/ports.py`) until the media pass builds each `Link` once.
"""

from __future__ import annotations

import dataclasses
import gc
import operator
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import field
from ipaddress import ip_network

from fabricgen.core.catalog import models_for, platforms
from fabricgen.core.model import (
    BgpNeighbor,
    Device,
    GracefulRestart,
    InfinibandPlan,
    Interface,
    Link,
    Model,
    Oversubscription,
    Plan,
    Platform,
    Services,
    TierLinks,
)
from fabricgen.core.records import record
from fabricgen.core.units import length_m
from fabricgen.plan.allocate import Layout, PoolTally
from fabricgen.plan.guids import server_guids
from fabricgen.plan.inputs import AddressingInput, CableOverride, Inputs, UplinksInput
from fabricgen.plan.media import cables_of
from fabricgen.plan.passes import infiniband as ib_plan
from fabricgen.plan.passes.addressing import DeviceAddresses, Pools, address_devices, layout_for, pool_usage, pools_of
from fabricgen.plan.passes.aspath import relaxing
from fabricgen.plan.passes.cabling import apply_overrides, override_positions
from fabricgen.plan.passes.connect import Ends, Stage, Wiring, connect
from fabricgen.plan.passes.control_plane import control_plane_acls
from fabricgen.plan.passes.devices import ROLE_ORDER, Headroom, InfinibandSwitch, Routing, assemble
from fabricgen.plan.passes.drain import drained_switches
from fabricgen.plan.passes.expand import TierNode, Tiers, expand_tiers
from fabricgen.plan.passes.forwarding import with_forwarding
from fabricgen.plan.passes.headroom import port_headroom
from fabricgen.plan.passes.ib_split import switch_splits
from fabricgen.plan.passes.media import choose_media
from fabricgen.plan.passes.qos import roce_policy
from fabricgen.plan.passes.servers import Attached, ServerGuids, attach_servers, attachment_of, nic_model_of
from fabricgen.plan.passes.sm_links import cable_subnet_managers
from fabricgen.plan.passes.sm_software import sm_software
from fabricgen.plan.passes.sources import jobs_of, pins_of
from fabricgen.plan.passes.speeds import Speeds, link_speeds

_NO_ADDRESSING = AddressingInput("0.0.0.0/32", "0.0.0.0/32", None, "p2p", None, None)
"""An InfiniBand fabric has no `addressing:` section: nothing is allocated from these."""
_NO_ENDS = Ends()


_LINK_ORDER = operator.attrgetter("kind", "z.device", "z.port", "z.interface", "a.device", "a.interface")
"""Order of the plan's links; an attrgetter, not a lambda: it keys 200,000 links at 5,000 switches."""


def build_plan(inputs: Inputs) -> Plan:
    """Expand the typed inputs (`plan/inputs.py`) into a Plan, or raise FabricError.

    The cyclic garbage collector is paused meanwhile: the planner allocates millions of small,
    acyclic objects for a large fabric, and every full collection would walk all of them
    again (a quarter of the planning time at 5,000 switches, measured with cProfile)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _build_plan(inputs)
    finally:
        if enabled:
            gc.enable()


@record
class _Fabric:
    """What the device assembly needs from the earlier passes."""

    tiers: Tiers
    speeds: Speeds
    pools: Pools
    addresses: Mapping[str, DeviceAddresses]
    mtu: Mapping[str, int]
    per_spine: int
    per_superspine: int
    maximum_paths: int
    """`bgp.maximum_paths`; 0: each device's own uplink count."""
    servers_per_leaf: int
    infiniband: InfinibandSwitch | None
    aggregate_server_prefixes: bool = False
    """`bgp.aggregate_server_prefixes`: each leaf summarises its server block."""
    headroom: Headroom = field(default_factory=dict)
    """PFC headroom of the switch ends of cables `cabling.overrides` changed (routed fabrics)."""
    maximum_routes: int = 0
    """Every device's BGP route limit (routed fabrics)."""
    relaxing: frozenset[str] = frozenset()
    """Devices that must relax AS-path multipath (`aspath.relaxing`)."""
    drained: frozenset[str] = frozenset()
    """Switches under `drain:` (`passes/drain.py`)."""


# long: the passes in order, then the one Plan constructor call with a keyword per plan field.
def _build_plan(inputs: Inputs) -> Plan:
    source, transport, routed = inputs.source, inputs.fabric.transport, inputs.routed
    catalog = models_for(dict(inputs.models))
    all_platforms = platforms()
    tiers = expand_tiers(inputs, catalog, all_platforms)
    speeds = link_speeds(inputs, tiers, next(iter(catalog.values())))
    per_spine = inputs.uplinks.per_spine
    per_superspine = inputs.superspines.per_spine or 1 if inputs.superspines and tiers.three_tier else 1
    addressing = inputs.addressing or _NO_ADDRESSING
    layout, pools = layout_for(tiers, speeds, per_spine, per_superspine), pools_of(addressing)
    roce = roce_policy(inputs.roce, all_platforms) if routed else None
    mtu = {name: (roce.mtu[name] if roce and name in roce.mtu else p.mtu_default) for name, p in all_platforms.items()}
    addresses, device_tally = address_devices(tiers.everything, layout, pools, inputs.bgp, routed)
    lengths, overrides = inputs.cabling.length, inputs.cabling.overrides
    leaf_spine, spine_superspine = _wire(tiers, speeds, layout, pools, addresses, mtu, lengths, inputs.uplinks, per_superspine, routed)
    nic = nic_model_of(inputs.servers, source, speeds.server if inputs.servers.per_leaf else 0)
    attachment = attachment_of(inputs.servers, inputs.fabric.name, length_m(lengths["server-leaf"]), speeds.server, routed, routed)
    host_mtu = _host_mtu(tiers, leaf_spine, spine_superspine, mtu)
    attached = attach_servers(tiers.leaves, attachment, layout, pools, host_mtu, _server_guids(inputs))
    links = apply_overrides((*leaf_spine.links, *attached.links, *spine_superspine.links), overrides, source)
    fabric = _Fabric(
        tiers,
        speeds,
        pools,
        addresses,
        mtu,
        per_spine,
        per_superspine,
        inputs.bgp.maximum_paths or 0,
        attachment.per_leaf,
        InfinibandSwitch(inputs.guid_prefix) if not routed else None,
        inputs.bgp.aggregate_server_prefixes,
        headroom=_overridden_headroom(links, overrides, tiers, all_platforms) if routed else {},
        maximum_routes=_route_limit(addressing) if routed else 0,
        relaxing=_relaxing(addresses, leaf_spine, spine_superspine) if routed else frozenset(),
        drained=drained_switches(inputs, tiers.everything) if routed else frozenset(),
    )
    devices, oversubscription = _devices(fabric, leaf_spine, spine_superspine, attached)
    devices = with_forwarding(devices, roce, catalog, all_platforms) if roce else devices
    devices, infiniband, warnings, sm_links = _infiniband(inputs, devices, attached, catalog, all_platforms, speeds.server)
    links.extend(sm_links)
    models = tuple(catalog[m] for m in sorted({n.model.name for n in tiers.everything}))
    hosts = infiniband.subnet_managers if infiniband else ()
    chosen = choose_media(links, devices, models, override_positions(overrides), source, servers=attached.servers, nics=(nic,), hosts=hosts)
    links_in_order, bgp, services = tuple(sorted(chosen, key=_LINK_ORDER)), inputs.bgp, inputs.services
    used = tuple(all_platforms[p] for p in sorted({n.platform.name for n in tiers.everything}))
    return Plan(
        name=inputs.fabric.name,
        description=inputs.fabric.description,
        transport=transport,
        source=source.file,
        devices=devices,
        links=links_in_order,
        servers=attached.servers,
        roce=roce,
        infiniband=infiniband,
        services=Services(services.ntp, services.syslog, services.dns, services.domain or "", services.timezone or ""),
        bfd=bgp.bfd,
        bfd_interval_ms=bgp.bfd_interval_ms,
        bfd_multiplier=bgp.bfd_multiplier,
        pools=pool_usage(addressing, PoolTally.merge((device_tally, leaf_spine.tally, attached.tally, spine_superspine.tally)), routed),
        oversubscription=oversubscription,
        max_oversubscription=inputs.max_oversubscription,
        ratio_during_change=inputs.ratio_during_change,
        models=models,
        platforms=used,
        control_plane=control_plane_acls(inputs.management, inputs.addressing, used) if routed else (),
        warnings=tuple(warnings),
        pods=tiers.pods,
        rails=attachment.rails,
        tier_links=_tier_links(
            (leaf_spine, per_spine, speeds.uplink),
            (spine_superspine, per_superspine, speeds.superspine),
            (attached, attachment.ports_per_server, speeds.server),
            (_Cabled(sm_links), 1, speeds.server),
        ),
        pins=pins_of(tiers.everything, source),
        jobs=jobs_of(inputs.jobs, source),
        nics=(nic,),
        host_mtu=host_mtu if routed else 0,
        graceful_restart=GracefulRestart(bgp.graceful_restart, bgp.graceful_restart_time_s, bgp.graceful_stalepath_time_s),
        cables=cables_of(links_in_order, devices, models, attached.servers, (nic,), hosts),
    )


def _overridden_headroom(
    links: Sequence[Link], overrides: Sequence[CableOverride], tiers: Tiers, all_platforms: Mapping[str, Platform]
) -> dict[str, dict[str, int]]:
    """PFC headroom of the ends of the cables an override lengthens or shortens; the wiring
    passes gave every other end its stage's figure. Looks at the cables only when there are
    overrides."""
    if not overrides:
        return {}
    named = override_positions(overrides)
    changed = [link for link in links if (link.a.device, link.a.interface) in named or (link.z.device, link.z.interface) in named]
    return port_headroom(changed, {n.name: n.platform.name for n in tiers.everything}, all_platforms)


def _relaxing(addresses: Mapping[str, DeviceAddresses], leaf_spine: Wiring, spine_superspine: Wiring) -> frozenset[str]:
    """Devices whose ASN design needs AS-path multipath relaxation, from the wiring's uplinks."""
    uplinks = {**leaf_spine.uplinks, **spine_superspine.uplinks}
    return relaxing(uplinks, {name: a.asn for name, a in addresses.items()})


def _infiniband(
    inputs: Inputs,
    devices: tuple[Device, ...],
    attached: Attached,
    catalog: Mapping[str, Model],
    all_platforms: Mapping[str, Platform],
    speed: int,
) -> tuple[tuple[Device, ...], InfinibandPlan | None, list[str], tuple[Link, ...]]:
    """The InfiniBand part: switch GUID pins, the OpenSM plan, and the dedicated SM hosts' cables
    (plan links of kind `sm-leaf`, their ports added to the leaves); nothing for RoCE."""
    if inputs.fabric.transport != "infiniband":
        return devices, None, [], ()
    devices = ib_plan.pin_switch_guids(devices, inputs.guids)
    infiniband, warnings = ib_plan.build_infiniband(inputs, devices, list(attached.servers), speed)
    lane_rates = {name: model.cage_lane_rate for name, model in catalog.items()}
    infiniband = dataclasses.replace(infiniband, sm_software=sm_software(inputs.opensm, devices, lane_rates))
    length = length_m(inputs.cabling.length["server-leaf"])
    devices, sm_links = cable_subnet_managers(infiniband, devices, catalog, all_platforms, speed, length)
    infiniband = dataclasses.replace(infiniband, switch_splits=switch_splits(devices, catalog, all_platforms))
    return devices, infiniband, warnings, sm_links


def _route_limit(addressing: AddressingInput) -> int:
    """Routes a BGP neighbor may send: the most prefixes the fabric can originate within its pools
    (a /32 per loopback address, a /31 per two server addresses). Sized from the pools, not from
    today's device count, so adding a leaf or a server changes no existing config.

    >>> _route_limit(AddressingInput("10.0.0.0/22", "10.1.0.0/16", "10.2.0.0/16", "p2p", None, None))
    33792
    """
    prefixes = ((addressing.loopbacks, 1), (addressing.servers, 2))
    return sum(ip_network(prefix).num_addresses // per for prefix, per in prefixes if prefix)


def _host_mtu(tiers: Tiers, leaf_spine: Wiring, spine_superspine: Wiring, mtu: Mapping[str, int]) -> int:
    """The MTU every server NIC gets: the smallest switch-to-switch cable MTU (a server's flows
    may cross any spine or super-spine), or its leaves' MTU in a fabric without such cables."""
    fabric = [link.mtu for link in (*leaf_spine.links, *spine_superspine.links)]
    return min(fabric or [mtu[leaf.platform.name] for leaf in tiers.leaves] or [0])


@record
class _Cabled:
    """Cables of a stage that is neither wiring nor server attachment (the SM hosts')."""

    links: tuple[Link, ...]


def _tier_links(*stages: tuple[Wiring | Attached | _Cabled, int, int]) -> tuple[TierLinks, ...]:
    """Cables per kind, for consumers that need counts (analyze, docs) without counting links."""
    result = []
    for stage, per_pair, speed in stages:
        if stage.links:
            result.append(TierLinks(stage.links[0].kind, speed, per_pair, len(stage.links)))
    return tuple(sorted(result, key=lambda t: t.kind))


def _by_group(nodes: Sequence[TierNode], group: str) -> dict[int, list[TierNode]]:
    result: dict[int, list[TierNode]] = defaultdict(list)
    for node in nodes:
        result[getattr(node, group)].append(node)
    return result


def _wire(
    tiers: Tiers,
    speeds: Speeds,
    layout: Layout,
    pools: Pools,
    addresses: Mapping[str, DeviceAddresses],
    mtu: Mapping[str, int],
    lengths: Mapping[str, str],
    uplinks: UplinksInput,
    per_superspine: int,
    routed: bool,
) -> tuple[Wiring, Wiring]:
    """Both tier-to-tier stages through the one `connect`: leaves to the spines of their pod,
    spine j of every pod to super-spine plane j."""
    asn = {name: a.asn for name, a in addresses.items()}
    spines_by_pod, superspines_by_plane = _by_group(tiers.spines, "pod"), _by_group(tiers.superspines, "plane")
    stages = (  # (lower tier, its uppers, stage, where its uplinks start, its place on an upper)
        (
            tiers.leaves,
            lambda leaf: spines_by_pod.get(leaf.pod, ()),
            _stage("leaf-spine", speeds.uplink, uplinks.per_spine, tiers.spines, lengths, pools, routed, uplinks.first_port or 0),
            lambda leaf: layout.leaf_uplinks(leaf.pod, leaf.index),
            lambda leaf: leaf.index,
        ),
        (
            tiers.spines,
            lambda spine: superspines_by_plane.get(spine.index, ()),
            _stage("spine-superspine", speeds.superspine, per_superspine, tiers.superspines, lengths, pools, routed),
            lambda spine: layout.spine_uplinks(spine.pod, spine.index),
            lambda spine: spine.pod,
        ),
    )
    leaf_spine, spine_superspine = (
        connect(lower, above, stage, offset=offset, position=position, asn=asn, mtu=mtu) for lower, above, stage, offset, position in stages
    )
    return leaf_spine, spine_superspine


def _stage(
    kind: str,
    speed: int,
    per_pair: int,
    uppers: Sequence[TierNode],
    lengths: Mapping[str, str],
    pools: Pools,
    routed: bool,
    first_port: int = 0,
) -> Stage:
    """One tier-to-tier stage: its cables' length is `cabling.length.<kind>`, and every lower
    device reserves uplink slots for the highest upper index (growth keeps its ports)."""
    return Stage(
        kind=kind,
        speed=speed,
        per_pair=per_pair,
        length_m=length_m(lengths[kind]),
        uplink_slots=max((n.index for n in uppers), default=0) * per_pair,
        fabric_base=pools.fabric,
        routed=routed,
        roce=routed,
        first_port=first_port,
    )


def _server_guids(inputs: Inputs) -> ServerGuids:
    """HCA GUIDs of an InfiniBand fabric's servers (pinned or placeholders); none for RoCE."""
    if inputs.fabric.transport != "infiniband":
        return lambda name, leaf_number, index: ()
    pins, prefix, ports = inputs.guids, inputs.guid_prefix, inputs.servers.ports_per_server
    return lambda name, leaf_number, index: server_guids(pins, prefix, name, leaf_number, index, ports)


def _devices(
    fabric: _Fabric, leaf_spine: Wiring, spine_superspine: Wiring, attached: Attached
) -> tuple[tuple[Device, ...], tuple[Oversubscription, ...]]:
    """Every switch, top tier first, and the oversubscription of leaves (and of spines with
    super-spines above them), leaves first."""
    tiers, speeds = fabric.tiers, fabric.speeds
    spines_per_pod = {pod: len(nodes) for pod, nodes in _by_group(tiers.spines, "pod").items()}
    superspines_per_plane = {plane: len(nodes) for plane, nodes in _by_group(tiers.superspines, "plane").items()}
    devices: list[Device] = []
    oversubscription: list[Oversubscription] = []
    for leaf in tiers.leaves:
        ends, side = leaf_spine.ends.get(leaf.name, _NO_ENDS), attached.leaves[leaf.name]
        up_count = spines_per_pod.get(leaf.pod, 0) * fabric.per_spine
        down_gbps = fabric.servers_per_leaf * side.nics_per_server * speeds.server
        oversubscription.append(Oversubscription(leaf.name, down_gbps, up_count * speeds.uplink))
        loopback = fabric.addresses[leaf.name].loopback
        # p2p server blocks are advertised as `<block> le 31`: with aggregation each block is summarised.
        aggregates = tuple(p.split()[0] for p in side.advertised if " le " in p) if fabric.aggregate_server_prefixes else ()
        device = _assemble(
            fabric,
            leaf,
            up_count,
            (*ends.interfaces, *side.interfaces),
            ends.neighbors,
            [f"{loopback}/32", *side.advertised],
            aggregates,
        )
        devices.append(device)
    for node in (*tiers.spines, *tiers.superspines):
        below = leaf_spine.ends.get(node.name, _NO_ENDS) if node.role == "spine" else _NO_ENDS
        above = spine_superspine.ends.get(node.name, _NO_ENDS)
        interfaces = (*below.interfaces, *above.interfaces)
        if node.role == "superspine":
            paths = fabric.per_superspine
        elif tiers.three_tier:
            paths = superspines_per_plane.get(node.index, 0) * fabric.per_superspine
            down = sum(i.speed for i in interfaces if i.role == "downlink")
            oversubscription.append(Oversubscription(node.name, down, sum(i.speed for i in interfaces if i.role == "uplink")))
        else:
            paths = len(tiers.spines) * fabric.per_spine
        loopback = fabric.addresses[node.name].loopback
        devices.append(_assemble(fabric, node, paths, interfaces, (*below.neighbors, *above.neighbors), [f"{loopback}/32"]))
    devices.sort(key=lambda d: (ROLE_ORDER[d.role], d.pod, d.plane, d.index))
    return tuple(devices), tuple(oversubscription)


def _assemble(
    fabric: _Fabric,
    node: TierNode,
    paths: int,
    interfaces: Sequence[Interface],
    neighbors: Sequence[BgpNeighbor],
    advertised: list[str],
    aggregates: tuple[str, ...] = (),
) -> Device:
    routing = Routing(
        fabric.maximum_paths or max(paths, 1), fabric.maximum_routes, node.name in fabric.relaxing, aggregates, node.name in fabric.drained
    )
    return assemble(
        node,
        fabric.addresses[node.name],
        fabric.pools,
        fabric.mtu[node.platform.name],
        routing,
        interfaces,
        neighbors,
        advertised,
        fabric.infiniband,
        fabric.headroom,
    )
