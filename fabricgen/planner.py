"""Plan: expand a schema-valid, defaulted inventory into the frozen fabric model.

The planner allocates; it does not judge. Problems that make a plan impossible to build (an
unknown model, a speed a model cannot run) are returned as diagnostics; everything that can be
built but is wrong (pools too small, ports exhausted, oversubscription) is left for
`checks.py`, which reads the finished plan.

Topologies: two tiers (leaves under spines), or three (`pods.count` > 0: pods of leaves and
spines, spine j of every pod under super-spine plane j). Servers attach to one leaf, or
rail-optimised (NIC i of every server of a scalable unit on the unit's rail leaf i). Every
address, port and ASN comes from `allocate.Layout`, whose slot sizes depend on the models and
pins only, so growth never moves what exists. Each device is visited once per link it has:
the cost is linear in the size of the fabric.
"""

from __future__ import annotations

import dataclasses
import difflib
import gc
import operator
import socket
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from fabricgen import allocate
from fabricgen.allocate import Layout, ipv4
from fabricgen.catalog import models_for, nic_models, platforms
from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.infiniband import plan as ib_plan
from fabricgen.loader import SourceMap
from fabricgen.model import (
    BgpNeighbor,
    Breakout,
    Device,
    Endpoint,
    Interface,
    Link,
    Model,
    NicModel,
    Oversubscription,
    PeerGroup,
    Plan,
    Platform,
    PoolUsage,
    QosProfile,
    QosQueue,
    RocePolicy,
    Server,
    ServerNic,
    Services,
)
from fabricgen.units import length_m, size_bytes, speed_gbps

TIERS = (("spines", "spine"), ("leaves", "leaf"))
QUEUES = 8
"""Egress queues (traffic classes 0-7) of the RoCE profile on every Ethernet platform."""
GUID_KIND = {"spine": 1, "leaf": 2, "superspine": 5}
"""Placeholder GUID kinds (3: server nodes, 4: subnet managers)."""


@dataclass(frozen=True, slots=True)
class TierNode:
    """One device of a tier before allocation: the count/pattern expanded, pins applied."""

    role: str
    index: int
    name: str
    model: Model
    platform: Platform
    management: str
    serial: str
    guid: str
    asn: int
    loopback: str
    key: str
    pod: int = 1
    plane: int = 0


@dataclass(slots=True)
class _Pools:
    """Running extents of each pool, for PoolUsage."""

    used: dict[str, int]
    needed: dict[str, int]

    def take(self, name: str, offset: int, count: int = 1) -> None:
        self.used[name] = self.used.get(name, 0) + count
        self.needed[name] = max(self.needed.get(name, 0), offset + count)


@dataclass(slots=True)
class _Ends:
    """What a spine or super-spine collects from the links of the tier below, one link at a time."""

    interfaces: list[Interface] = field(default_factory=list)
    neighbors: list[BgpNeighbor] = field(default_factory=list)


@dataclass(slots=True)
class _RailServer:
    pod: int
    unit: int
    index: int
    node_guid: str
    leaf: str
    nics: list[ServerNic] = field(default_factory=list)


def build_plan(doc: dict[str, Any], source: SourceMap) -> Plan:
    """Expand `doc` (schema-valid, defaults applied) into a Plan, or raise FabricError.

    The cyclic garbage collector is paused meanwhile: the planner allocates millions of small,
    acyclic objects for a large fabric, and every full collection would walk all of them
    again (a quarter of the planning time at 5,000 switches, measured with cProfile)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _build_plan(doc, source)
    finally:
        if enabled:
            gc.enable()


def _build_plan(doc: dict[str, Any], source: SourceMap) -> Plan:
    fabric = doc["fabric"]
    transport = fabric["transport"]
    catalog = models_for(doc.get("models", {}))
    all_platforms = platforms()
    problems: list[Diagnostic] = []
    pod_count = doc.get("pods", {}).get("count", 0)
    three_tier = pod_count > 0
    pod_ids = tuple(range(1, pod_count + 1)) if three_tier else (1,)
    group = "pod" if three_tier else ""
    spines = _expand_tier(doc, "spines", "spine", catalog, all_platforms, transport, source, problems, pod_ids, group)
    leaves = _expand_tier(doc, "leaves", "leaf", catalog, all_platforms, transport, source, problems, pod_ids, group)
    superspines: list[TierNode] = []
    if three_tier and "superspines" not in doc:
        problems.append(
            source.diagnostic(
                ("pods", "count"),
                "a three-tier fabric (pods.count above 0) needs a `superspines:` section",
                hint="see docs/scale.md; or remove `pods:` for two tiers",
            )
        )
    elif three_tier:
        planes = tuple(sorted({n.index for n in spines}))
        superspines = _expand_tier(doc, "superspines", "superspine", catalog, all_platforms, transport, source, problems, planes, "plane")
    if problems:
        raise FabricError(problems)

    leaf_model = leaves[0].model if leaves else next(iter(catalog.values()))
    spine_model = spines[0].model if spines else leaf_model
    uplinks, servers_cfg, bgp = doc["uplinks"], doc["servers"], doc["bgp"]
    ss_cfg = doc.get("superspines", {})
    addressing = doc.get("addressing") or {"loopbacks": "0.0.0.0/32", "fabric": "0.0.0.0/32", "server_mode": "p2p"}
    per_spine = uplinks["per_spine"]
    per_ss = ss_cfg.get("per_spine", 1)
    up_speed = speed_gbps(uplinks["speed"]) if "speed" in uplinks else leaf_model.speed
    down_speed = speed_gbps(servers_cfg["speed"]) if "speed" in servers_cfg else leaf_model.speed
    ss_speed = speed_gbps(ss_cfg["speed"]) if "speed" in ss_cfg else spine_model.speed

    speed_uses = [
        (leaves, up_speed, "uplinks.speed", "uplinks"),
        (spines, up_speed, "uplinks.speed", "downlinks to leaves"),
    ]
    if three_tier:
        speed_uses.append((spines, ss_speed, "superspines.speed", "uplinks to super-spines"))
        speed_uses.append((superspines, ss_speed, "superspines.speed", "downlinks to spines"))
    for nodes, speed, key, what in speed_uses:
        for node in nodes:
            if not node.model.logical_ports(speed):
                problems.append(
                    source.diagnostic(
                        _path(key), f"{node.model.name} ({node.name}) cannot run {what} at {speed}G; it supports {_speeds(node.model)}"
                    )
                )
                break
    if servers_cfg["per_leaf"]:
        for node in leaves:
            if not node.model.logical_ports(down_speed):
                problems.append(
                    source.diagnostic(
                        _path("servers.speed"),
                        f"{node.model.name} ({node.name}) cannot run server ports at {down_speed}G; it supports {_speeds(node.model)}",
                    )
                )
                break
    ports_per_server = servers_cfg["ports_per_server"]
    rail_mode = servers_cfg.get("attachment", "leaf") == "rail"
    rails = (servers_cfg.get("rails") or ports_per_server) if rail_mode else 0
    problems.extend(_check_server_name(servers_cfg, fabric["name"], source))
    nic_model = _nic_model(servers_cfg, source, problems)
    if problems:
        raise FabricError(problems)

    max_spine_index = max((n.index for n in spines), default=0)
    leaf_logical = max((n.model.ports * n.model.logical_ports(up_speed) for n in leaves), default=2)
    spine_slots = max(leaf_logical // 2 // per_spine, max_spine_index)
    uplink_slots = max_spine_index * per_spine
    max_ss_index = max((n.index for n in superspines), default=0)
    if three_tier:
        spine_down = max((n.model.ports * n.model.logical_ports(up_speed) for n in spines), default=2)
        spine_up = max((n.model.ports * n.model.logical_ports(ss_speed) for n in spines), default=2)
        ss_down = max((n.model.ports * n.model.logical_ports(ss_speed) for n in superspines), default=1)
        layout = Layout(
            spine_slots=spine_slots,
            leaf_slots=max(spine_down // 2 // per_spine, max((n.index for n in leaves), default=0), 1),
            superspine_slots=max(spine_up // 2 // per_ss, max_ss_index, 1),
            pod_slots=max(ss_down // per_ss, pod_count),
            per_spine=per_spine,
            per_superspine=per_ss,
        )
    else:
        layout = Layout(spine_slots=spine_slots, per_spine=per_spine)

    roce = _roce_policy(doc, all_platforms) if transport == "roce" else None
    mtu_for = {name: (roce.mtu[name] if roce and name in roce.mtu else p.mtu_default) for name, p in all_platforms.items()}

    pools = _Pools({}, {})
    loop_base, _ = allocate.prefix_base_size(addressing["loopbacks"])
    fabric_base, _ = allocate.prefix_base_size(addressing["fabric"])
    mgmt = addressing.get("management")
    mgmt_base, _mgmt_size = allocate.prefix_base_size(mgmt) if mgmt else (0, 0)
    mgmt_len = int(mgmt.split("/")[1]) if mgmt else 0
    mgmt_gateway = addressing.get("management_gateway") or (ipv4(mgmt_base + 1) if mgmt else "")
    spine_asn_base, leaf_asn_base = bgp["spine_asn"], bgp["leaf_asn"]
    ss_asn_base = bgp.get("superspine_asn", 64900)
    routed = transport == "roce"

    def loopback(node: TierNode) -> str:
        if node.loopback:
            return node.loopback
        offset = layout.device_offset(node.role, node.index, pod=node.pod, plane=node.plane)
        pools.take("loopbacks", offset)
        return ipv4(loop_base + offset)

    def management(node: TierNode) -> str:
        if node.management or not mgmt:
            return node.management
        offset = layout.management_offset(node.role, node.index, pod=node.pod, plane=node.plane)
        pools.take("management", offset)
        return ipv4(mgmt_base + offset)

    def asn(node: TierNode) -> int:
        """Leaves: one ASN each (RFC 7938), whatever the transport (as before); spines: one per
        pod; super-spines: one per plane. Pins win."""
        if node.role == "leaf":
            return node.asn or leaf_asn_base + layout.leaf_number(node.pod, node.index) - 1
        if not routed:
            return 0
        if node.role == "spine":
            return node.asn or spine_asn_base + node.pod - 1
        return node.asn or ss_asn_base + node.plane - 1

    def number(node: TierNode) -> int:
        """Fabric-wide number of a device within its role, for placeholder GUIDs."""
        if node.role == "leaf":
            return layout.leaf_number(node.pod, node.index)
        if node.role == "spine":
            return layout.spine_number(node.pod, node.index)
        return layout.superspine_number(node.plane, node.index)

    lengths = doc["cabling"]["length"]
    leaf_spine_length = length_m(lengths["leaf-spine"])
    server_leaf_length = length_m(lengths["server-leaf"])
    spine_ss_length = length_m(lengths.get("spine-superspine", "100m"))

    spines_by_pod: dict[int, list[TierNode]] = defaultdict(list)
    for node in spines:
        spines_by_pod[node.pod].append(node)
    ss_by_plane: dict[int, list[TierNode]] = defaultdict(list)
    for node in superspines:
        ss_by_plane[node.plane].append(node)
    spine_asn = {(n.pod, n.index): asn(n) for n in spines}
    spine_ends = {(n.pod, n.index): _Ends() for n in spines}
    ss_ends = {(n.plane, n.index): _Ends() for n in superspines}
    unit_first: dict[tuple[int, int], TierNode] = {}
    if rail_mode:
        for leaf in leaves:
            unit_first.setdefault((leaf.pod, (leaf.index - 1) // rails + 1), leaf)

    # Cables and their addresses, leaf by leaf: each leaf only looks at its pod's spines.
    links: list[Link] = []
    servers: list[Server] = []
    rail_servers: dict[str, _RailServer] = {}
    leaf_devices: list[Device] = []
    oversubscription: list[Oversubscription] = []
    server_mode = addressing["server_mode"]
    server_pool = addressing.get("servers")
    server_base = allocate.prefix_base_size(server_pool)[0] if server_pool else 0
    guid_prefix = int(doc.get("guid_prefix", "0x02fab00000000000"), 16)

    for leaf in leaves:
        lp = leaf.platform
        mtu = mtu_for[lp.name]
        leaf_asn = asn(leaf)
        leaf_number = layout.leaf_number(leaf.pod, leaf.index)
        per_cage_up = leaf.model.logical_ports(up_speed)
        per_cage_down = leaf.model.logical_ports(down_speed) or 1
        first_up = uplinks.get("first_port") or leaf.model.ports - allocate.cages_for(uplink_slots, per_cage_up) + 1
        interfaces: list[Interface] = []
        neighbors: list[BgpNeighbor] = []
        breakouts: dict[int, Breakout] = {}
        pod_spines = spines_by_pod[leaf.pod]
        for spine in pod_spines:
            sp = spine.platform
            per_cage_spine = spine.model.logical_ports(up_speed)
            ends = spine_ends[(spine.pod, spine.index)]
            for link_no in range(1, per_spine + 1):
                offset = layout.leaf_spine_offset(leaf.pod, leaf.index, spine.index, link_no)
                pools.take("fabric", offset, 2)
                subnet_base = fabric_base + offset
                spine_addr, leaf_addr = ipv4(subnet_base), ipv4(subnet_base + 1)
                up_slot = (spine.index - 1) * per_spine + link_no - 1
                leaf_cage, leaf_sub = allocate.split_slot(up_slot, per_cage_up, first_up)
                down_slot = (leaf.index - 1) * per_spine + link_no - 1
                spine_cage, spine_sub = allocate.split_slot(down_slot, per_cage_spine, 1)
                leaf_if = lp.port_name(leaf_cage, leaf_sub, per_cage_up, leaf.model.lanes)
                spine_if = sp.port_name(spine_cage, spine_sub, per_cage_spine, spine.model.lanes)
                if per_cage_up > 1:
                    breakouts[leaf_cage] = Breakout(leaf_cage, per_cage_up, up_speed)
                interfaces.append(
                    Interface(
                        leaf_if,
                        leaf_cage,
                        leaf_sub,
                        up_speed,
                        "uplink",
                        leaf_addr,
                        31,
                        spine.name,
                        spine_if,
                        f"{spine.name} {spine_if}",
                        mtu,
                        roce is not None,
                    )
                )
                ends.interfaces.append(
                    Interface(
                        spine_if,
                        spine_cage,
                        spine_sub,
                        up_speed,
                        "downlink",
                        spine_addr,
                        31,
                        leaf.name,
                        leaf_if,
                        f"{leaf.name} {leaf_if}",
                        mtu_for[sp.name],
                        roce is not None,
                    )
                )
                if routed:
                    neighbors.append(
                        BgpNeighbor(
                            spine_addr, spine_asn[(spine.pod, spine.index)], spine.name, spine_if, "SPINES", f"{spine.name} {spine_if}"
                        )
                    )
                    ends.neighbors.append(BgpNeighbor(leaf_addr, leaf_asn, leaf.name, leaf_if, "LEAVES", f"{leaf.name} {leaf_if}"))
                links.append(
                    Link(
                        "leaf-spine",
                        Endpoint(leaf.name, leaf_if, leaf_cage),
                        Endpoint(spine.name, spine_if, spine_cage),
                        up_speed,
                        f"{spine_addr}/31" if routed else "",
                        leaf_addr if routed else "",
                        spine_addr if routed else "",
                        leaf_spine_length,
                    )
                )

        leaf_loopback = loopback(leaf)
        advertised = [f"{leaf_loopback}/32"]
        block = allocate.server_block_size(leaf.model.ports * per_cage_down, server_mode)
        leaf_block = server_base + (leaf_number - 1) * block
        subnet_len = 32 - (block.bit_length() - 1)
        if server_pool and servers_cfg["per_leaf"] and routed:
            if server_mode == "subnet":
                pools.take("servers", (leaf_number - 1) * block, block)
                advertised.append(f"{ipv4(leaf_block)}/{subnet_len}")
            else:
                advertised.append(f"{ipv4(leaf_block)}/{subnet_len} le 31")
        if rail_mode:
            unit, rail = (leaf.index - 1) // rails + 1, (leaf.index - 1) % rails + 1
            first = unit_first[(leaf.pod, unit)]
            leaf_nics = [nic for nic in range(1, ports_per_server + 1) if (nic - 1) % rails + 1 == rail]
        else:
            unit, rail, first = 0, 0, leaf
            leaf_nics = list(range(1, ports_per_server + 1))
        first_number = layout.leaf_number(first.pod, first.index)
        server_slot = 0
        for server_index in range(1, servers_cfg["per_leaf"] + 1):
            server_name = servers_cfg["name"].format(
                fabric=fabric["name"], leaf=first.name, leaf_index=first.index, index=server_index, pod=leaf.pod, unit=unit
            )
            node_guid, port_guids = (
                ib_plan.server_guids(doc, server_name, first_number, server_index, ports_per_server)
                if transport == "infiniband"
                else ("", ())
            )
            nics = []
            for nic in leaf_nics:
                cage, sub = allocate.split_slot(server_slot, per_cage_down, 1)
                if per_cage_down > 1:
                    breakouts[cage] = Breakout(cage, per_cage_down, down_speed)
                leaf_if = lp.port_name(cage, sub, per_cage_down, leaf.model.lanes)
                address = gateway = ""
                length = 31
                if server_pool and routed:
                    if server_mode == "p2p":
                        offset = (leaf_number - 1) * block + server_slot * 2
                        pools.take("servers", offset, 2)
                        gateway, address = ipv4(server_base + offset), ipv4(server_base + offset + 1)
                    else:
                        gateway, address, length = ipv4(leaf_block + 1), ipv4(leaf_block + 2 + server_slot), subnet_len
                port_guid = port_guids[nic - 1] if port_guids else ""
                nics.append(ServerNic(nic, leaf.name, leaf_if, down_speed, address, gateway, length, port_guid, rail))
                interfaces.append(
                    Interface(
                        leaf_if,
                        cage,
                        sub,
                        down_speed,
                        "server" if server_mode == "p2p" else "server-l2",
                        gateway if server_mode == "p2p" else "",
                        length,
                        server_name,
                        f"nic{nic}",
                        f"{server_name} nic{nic}",
                        mtu,
                        roce is not None,
                        vlan=servers_cfg["vlan"] if server_mode == "subnet" else 0,
                    )
                )
                links.append(
                    Link(
                        "server-leaf",
                        Endpoint(server_name, f"nic{nic}", nic),
                        Endpoint(leaf.name, leaf_if, cage),
                        down_speed,
                        f"{gateway}/31" if server_mode == "p2p" and gateway else "",
                        address,
                        gateway,
                        server_leaf_length,
                    )
                )
                server_slot += 1
            if rail_mode:
                entry = rail_servers.get(server_name)
                if entry is None:
                    entry = rail_servers[server_name] = _RailServer(leaf.pod, unit, server_index, node_guid, first.name)
                entry.nics.extend(nics)
            else:
                servers.append(Server(server_name, leaf.name, server_index, node_guid, tuple(nics), leaf.pod, nic_model=nic_model.name))
        if server_mode == "subnet" and server_pool and servers_cfg["per_leaf"] and routed:
            vlan = servers_cfg["vlan"]
            interfaces.append(
                Interface(
                    lp.svi_interface.format(vlan=vlan),
                    0,
                    vlan,
                    down_speed,
                    "svi",
                    ipv4(leaf_block + 1),
                    subnet_len,
                    "",
                    "",
                    f"GPU servers VLAN {vlan}",
                    mtu,
                    False,
                )
            )

        up_count = len(pod_spines) * per_spine
        down_gbps = servers_cfg["per_leaf"] * len(leaf_nics) * down_speed
        oversubscription.append(Oversubscription(leaf.name, down_gbps, up_count * up_speed))
        leaf_devices.append(
            _device(
                leaf,
                leaf_loopback,
                leaf_asn,
                management(leaf),
                mgmt_len,
                mgmt_gateway,
                mtu,
                bgp.get("maximum_paths") or max(up_count, 1),
                interfaces,
                breakouts,
                neighbors,
                advertised,
                transport,
                guid_prefix,
                number(leaf),
            )
        )
    for name, rs in rail_servers.items():
        servers.append(
            Server(name, rs.leaf, rs.index, rs.node_guid, tuple(sorted(rs.nics, key=lambda n: n.nic)), rs.pod, rs.unit, nic_model.name)
        )

    # Spine to super-spine cables, spine by spine: each spine only looks at its plane.
    ss_uplink_slots = max_ss_index * per_ss
    for spine in spines:
        plane_ss = ss_by_plane.get(spine.index, [])
        if not plane_ss:
            continue
        sp = spine.platform
        per_cage_up = spine.model.logical_ports(ss_speed)
        first_up = spine.model.ports - allocate.cages_for(ss_uplink_slots, per_cage_up) + 1
        ends = spine_ends[(spine.pod, spine.index)]
        for ss in plane_ss:
            ssp = ss.platform
            per_cage_ss = ss.model.logical_ports(ss_speed)
            top = ss_ends[(ss.plane, ss.index)]
            top_asn = asn(ss)
            for link_no in range(1, per_ss + 1):
                offset = layout.spine_superspine_offset(plane=ss.plane, superspine=ss.index, pod=spine.pod, link=link_no)
                pools.take("fabric", offset, 2)
                ss_addr, spine_addr = ipv4(fabric_base + offset), ipv4(fabric_base + offset + 1)
                spine_cage, spine_sub = allocate.split_slot((ss.index - 1) * per_ss + link_no - 1, per_cage_up, first_up)
                ss_cage, ss_sub = allocate.split_slot((spine.pod - 1) * per_ss + link_no - 1, per_cage_ss, 1)
                spine_if = sp.port_name(spine_cage, spine_sub, per_cage_up, spine.model.lanes)
                ss_if = ssp.port_name(ss_cage, ss_sub, per_cage_ss, ss.model.lanes)
                ends.interfaces.append(
                    Interface(
                        spine_if,
                        spine_cage,
                        spine_sub,
                        ss_speed,
                        "uplink",
                        spine_addr,
                        31,
                        ss.name,
                        ss_if,
                        f"{ss.name} {ss_if}",
                        mtu_for[sp.name],
                        roce is not None,
                    )
                )
                top.interfaces.append(
                    Interface(
                        ss_if,
                        ss_cage,
                        ss_sub,
                        ss_speed,
                        "downlink",
                        ss_addr,
                        31,
                        spine.name,
                        spine_if,
                        f"{spine.name} {spine_if}",
                        mtu_for[ssp.name],
                        roce is not None,
                    )
                )
                if routed:
                    ends.neighbors.append(BgpNeighbor(ss_addr, top_asn, ss.name, ss_if, "SUPERSPINES", f"{ss.name} {ss_if}"))
                    top.neighbors.append(
                        BgpNeighbor(
                            spine_addr, spine_asn[(spine.pod, spine.index)], spine.name, spine_if, "SPINES", f"{spine.name} {spine_if}"
                        )
                    )
                links.append(
                    Link(
                        "spine-superspine",
                        Endpoint(spine.name, spine_if, spine_cage),
                        Endpoint(ss.name, ss_if, ss_cage),
                        ss_speed,
                        f"{ss_addr}/31" if routed else "",
                        spine_addr if routed else "",
                        ss_addr if routed else "",
                        spine_ss_length,
                    )
                )

    upper_devices = []
    for node in (*spines, *superspines):
        ends = spine_ends[(node.pod, node.index)] if node.role == "spine" else ss_ends[(node.plane, node.index)]
        lo = loopback(node)
        if node.role == "superspine":
            paths = per_ss
        elif three_tier:
            paths = len(ss_by_plane.get(node.index, ())) * per_ss
            up = sum(i.speed for i in ends.interfaces if i.role == "uplink")
            oversubscription.append(Oversubscription(node.name, sum(i.speed for i in ends.interfaces if i.role == "downlink"), up))
        else:
            paths = len(spines) * per_spine
        upper_devices.append(
            _device(
                node,
                lo,
                asn(node),
                management(node),
                mgmt_len,
                mgmt_gateway,
                mtu_for[node.platform.name],
                bgp.get("maximum_paths") or max(paths, 1),
                ends.interfaces,
                {},
                ends.neighbors,
                [f"{lo}/32"],
                transport,
                guid_prefix,
                number(node),
            )
        )

    links = _apply_cable_overrides(links, doc, source)

    pool_usage = []
    for name in ("loopbacks", "fabric", "servers", "management"):
        prefix = addressing.get(name)
        if prefix and routed:
            _, size = allocate.prefix_base_size(prefix)
            pool_usage.append(PoolUsage(name, f"addressing.{name}", prefix, pools.used.get(name, 0), pools.needed.get(name, 0), size))

    everything = (*superspines, *spines, *leaves)
    used_models = sorted({n.model.name for n in everything})
    used_platforms = sorted({n.platform.name for n in everything})
    devices = tuple(sorted((*upper_devices, *leaf_devices), key=lambda d: (_ROLE_ORDER[d.role], d.pod, d.plane, d.index)))
    svc = doc.get("services", {})
    warnings: list[str] = []
    infiniband = None
    if transport == "infiniband":
        devices = ib_plan.pin_switch_guids(devices, doc)
        infiniband, warnings = ib_plan.build_infiniband(doc, devices, servers, source)
    return Plan(
        name=fabric["name"],
        description=fabric.get("description", ""),
        transport=transport,
        source=source.file,
        devices=devices,
        links=tuple(sorted(links, key=lambda lk: (lk.kind, lk.z.device, lk.z.port, lk.z.interface, lk.a.device, lk.a.interface))),
        servers=tuple(servers),
        roce=roce,
        infiniband=infiniband,
        services=Services(
            tuple(svc.get("ntp", [])),
            tuple(svc.get("syslog", [])),
            tuple(svc.get("dns", [])),
            svc.get("domain", ""),
            svc.get("timezone", ""),
        ),
        bfd=bool(bgp["bfd"]),
        bfd_interval_ms=bgp["bfd_interval_ms"],
        bfd_multiplier=bgp["bfd_multiplier"],
        pools=tuple(pool_usage),
        oversubscription=tuple(oversubscription),
        max_oversubscription=float(doc["oversubscription"]["max_ratio"]),
        models=tuple(catalog[m] for m in used_models),
        platforms=tuple(all_platforms[p] for p in used_platforms),
        warnings=tuple(warnings),
        pods=pod_count,
        rails=rails,
        nics=(nic_model,),
    )


def _apply_cable_overrides(links: list[Link], doc: dict[str, Any], source: SourceMap) -> list[Link]:
    """`cabling.overrides`: set the length of single cables, found by either end. An override
    that names no cable of the plan is an error (a typo would otherwise be silently ignored)."""
    overrides = doc["cabling"].get("overrides", [])
    if not overrides:
        return links
    wanted = {(o["device"], o["interface"]): (i, length_m(o["length"])) for i, o in enumerate(overrides)}
    matched: set[int] = set()
    result = []
    for link in links:
        hit = wanted.get((link.a.device, link.a.interface)) or wanted.get((link.z.device, link.z.interface))
        if hit is not None:
            matched.add(hit[0])
            link = replace(link, length_m=hit[1])
        result.append(link)
    problems = [
        source.diagnostic(("cabling", "overrides", i), f"no cable ends at {o['device']} {o['interface']}")
        for i, o in enumerate(overrides)
        if i not in matched
    ]
    if problems:
        raise FabricError(problems)
    return result


_ROLE_ORDER = {"superspine": 0, "spine": 1, "leaf": 2}


def _path(dotted: str) -> tuple[str | int, ...]:
    return tuple(dotted.split("."))


def _speeds(model: Model) -> str:
    return ", ".join(f"{speed}G" for speed in model.breakouts)


def _placeholder_guid(prefix: int, kind: int, number: int) -> str:
    return f"0x{prefix | (kind << 28) | (number << 4):016x}"


def _nic_model(servers_cfg: dict[str, Any], source: SourceMap, problems: list[Diagnostic]) -> NicModel:
    """The catalog NIC model the servers' ports use (`servers.nic`); a diagnostic when unknown."""
    known = nic_models()
    name = servers_cfg["nic"]
    if name not in known:
        problems.append(source.diagnostic(("servers", "nic"), f"unknown NIC model '{name}'", hint=f"known: {', '.join(sorted(known))}"))
        return next(iter(known.values()))
    return known[name]


def _check_server_name(servers_cfg: dict[str, Any], fabric: str, source: SourceMap) -> list[Diagnostic]:
    """A server name pattern with an unknown placeholder is bad input, not a traceback."""
    try:
        servers_cfg["name"].format(fabric=fabric, leaf="leaf", leaf_index=1, index=1, pod=1, unit=1)
    except (KeyError, ValueError, IndexError, AttributeError) as exc:
        return [
            source.diagnostic(
                ("servers", "name"),
                f"cannot use name pattern {servers_cfg['name']!r}: {exc}",
                hint="placeholders: {fabric}, {leaf}, {leaf_index}, {index}, {pod}, {unit}",
            )
        ]
    return []


def _device(
    node: TierNode,
    loopback: str,
    asn: int,
    management: str,
    mgmt_len: int,
    mgmt_gateway: str,
    mtu: int,
    maximum_paths: int,
    interfaces: list[Interface],
    breakouts: dict[int, Breakout],
    neighbors: list[BgpNeighbor],
    advertised: list[str],
    transport: str,
    guid_prefix: int,
    number: int,
) -> Device:
    for iface in interfaces:
        per_cage = node.model.logical_ports(iface.speed)
        if iface.port and iface.port not in breakouts and per_cage > 1:
            breakouts[iface.port] = Breakout(iface.port, per_cage, iface.speed)
    ifaces = tuple(sorted((_with_speed(i, node, breakouts) for i in interfaces), key=lambda i: (i.port, i.sub, i.name)))
    groups, neighbors = _peer_groups(neighbors)
    guid = node.guid or (_placeholder_guid(guid_prefix, GUID_KIND[node.role], number) if transport == "infiniband" else "")
    return Device(
        name=node.name,
        role=node.role,
        index=node.index,
        pod=node.pod,
        platform=node.platform.name,
        model=node.model.name,
        loopback=loopback if transport == "roce" else "",
        asn=asn,
        router_id=loopback if transport == "roce" else "",
        management=management,
        management_prefix_length=mgmt_len if management else 0,
        management_gateway=mgmt_gateway if management else "",
        serial=node.serial,
        guid=guid,
        guid_is_placeholder=transport == "infiniband" and not node.guid,
        mtu=mtu,
        maximum_paths=maximum_paths,
        interfaces=ifaces,
        breakouts=tuple(sorted(breakouts.values(), key=lambda b: b.port)),
        bgp_neighbors=tuple(sorted(neighbors, key=lambda n: socket.inet_aton(n.address))),
        advertised_prefixes=tuple(dict.fromkeys(advertised)),
        ports_total=node.model.ports,
        ports_used=len({i.port for i in ifaces if i.port}),
        peer_groups=groups,
        vlans=tuple(sorted({i.vlan for i in ifaces if i.vlan})),
        queue_keyword=node.platform.queue_keywords.get(node.model.queue_family, ""),
        plane=node.plane,
    )


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


def _expand_tier(
    doc: dict[str, Any],
    key: str,
    role: str,
    catalog: dict[str, Model],
    all_platforms: dict[str, Platform],
    transport: str,
    source: SourceMap,
    problems: list[Diagnostic],
    groups: tuple[int, ...] = (1,),
    group_key: str = "",
) -> list[TierNode]:
    """Devices of one tier, in (group, index) order. `group_key` is "pod" for leaves and spines
    of a three-tier fabric, "plane" for super-spines, "" for two tiers (one implicit pod)."""
    tier = doc[key]
    pins: dict[tuple[int, int], tuple[int | None, dict[str, Any]]] = {}
    where: tuple[str | int, ...]
    for place, node in enumerate(tier.get("nodes", [])):
        group = node.get(group_key, 1) if group_key else 1
        if group not in groups:
            where = (key, "nodes", place, group_key) if group_key in node else (key, "nodes", place)
            span = f"1..{max(groups)}" if groups else "none"
            problems.append(source.diagnostic(where, f"{group_key} {group} does not exist (there are {span})"))
            continue
        pins[(group, node["index"])] = (place, node)
    count = tier.get("count", 0)
    if group_key and count and f"{{{group_key}" not in tier["name"]:
        problems.append(
            source.diagnostic(
                (key, "name"),
                f"{key}.name {tier['name']!r} must contain {{{group_key}}} (or {{{group_key}:02d}}): names repeat in every {group_key} otherwise",
                hint=f"for example '{{fabric}}-p{{pod:02d}}-{role}{{index:02d}}'" if group_key == "pod" else "",
            )
        )
        return []
    keys = sorted({(g, i) for g in groups for i in range(1, count + 1)} | set(pins))
    result = []
    for group, index in keys:
        position, pin = pins.get((group, index), (None, {}))
        pin_path: tuple[str | int, ...]
        pin_path = (key, "nodes", position) if position is not None else (key,)
        model_name = pin.get("model", tier["model"])
        model = catalog.get(model_name)
        if model is None:
            where = (*pin_path, "model") if "model" in pin else (key, "model")
            close = difflib.get_close_matches(model_name, list(catalog), n=1, cutoff=0.5)
            hint = f"did you mean '{close[0]}'?" if close else "add it under `models:` or pick one of: " + ", ".join(catalog)
            problems.append(source.diagnostic(where, f"unknown switch model '{model_name}'", hint=hint))
            if position is None:
                return []
            continue
        platform_name = pin.get("platform") or tier.get("platform") or ("infiniband" if transport == "infiniband" else model.platforms[0])
        platform = all_platforms[platform_name]
        if platform_name not in model.platforms:
            where = (*pin_path, "platform") if "platform" in pin else (key, "platform")
            problems.append(
                source.diagnostic(where, f"model {model.name} does not run {platform_name}; it runs {', '.join(model.platforms)}")
            )
            if position is None:
                return []
            continue
        if platform.transport != transport:
            where = (key, "platform") if "platform" in tier else (key, "model")
            problems.append(
                source.diagnostic(where, f"platform {platform_name} is not a {transport} platform (fabric.transport is {transport})")
            )
            return []
        try:
            name = pin.get("name") or tier["name"].format(fabric=doc["fabric"]["name"], index=index, pod=group, plane=group)
        except (KeyError, ValueError, IndexError, AttributeError) as exc:
            problems.append(source.diagnostic((key, "name"), f"cannot use name pattern {tier['name']!r}: {exc}"))
            return []
        if role == "superspine":
            pod, plane = 0, group
        else:
            pod, plane = group, (index if role == "spine" and group_key else 0)
        result.append(
            TierNode(
                role,
                index,
                name,
                model,
                platform,
                pin.get("management", ""),
                pin.get("serial", ""),
                pin.get("guid", ""),
                pin.get("asn", 0),
                pin.get("loopback", ""),
                key,
                pod,
                plane,
            )
        )
    return result


def _roce_policy(doc: dict[str, Any], all_platforms: dict[str, Platform]) -> RocePolicy:
    roce = doc["roce"]
    ecn, watchdog = roce["ecn"], roce["pfc_watchdog"]
    roce_platforms = {name: p for name, p in all_platforms.items() if p.transport == "roce"}
    cnp_tc = roce.get("cnp_traffic_class")
    return RocePolicy(
        no_drop_priority=roce["no_drop_priority"],
        dscp_data=roce["dscp"]["data"],
        dscp_cnp=roce["dscp"]["cnp"],
        cnp_traffic_class={name: (cnp_tc if cnp_tc is not None else p.cnp_traffic_class_default) for name, p in roce_platforms.items()},
        ecn_enabled=ecn["enabled"],
        ecn_min_bytes=size_bytes(ecn["min"]),
        ecn_max_bytes=size_bytes(ecn["max"]),
        ecn_probability=ecn["probability"],
        pfc_watchdog=watchdog["enabled"],
        watchdog_timeout_ms=watchdog["timeout_ms"],
        watchdog_recovery_ms=watchdog["recovery_ms"],
        watchdog_polling_ms=watchdog["polling_ms"],
        bandwidth_percent=roce["bandwidth_percent"],
        mtu={name: roce.get("mtu") or p.mtu_default for name, p in roce_platforms.items()},
        ecn_min=_threshold(size_bytes(ecn["min"])),
        ecn_max=_threshold(size_bytes(ecn["max"])),
        profiles={
            name: _qos_profile(
                p, roce["no_drop_priority"], cnp_tc if cnp_tc is not None else p.cnp_traffic_class_default, roce, ecn["enabled"]
            )
            for name, p in roce_platforms.items()
        },
    )


def _threshold(size: int) -> str:
    """A buffer threshold in the unit the switches print: kbytes (1 KB = 1000 bytes) when exact."""
    return f"{size // 1000} kbytes" if size % 1000 == 0 else f"{size} bytes"


def _qos_profile(platform: Platform, data_tc: int, cnp_tc: int, roce: dict[str, Any], ecn: bool) -> QosProfile:
    """The RoCE policy in one platform's terms: which queues its config lists, their names and
    scheduler shares (RoCE gets bandwidth_percent, the default queue the rest, CNP is strict)."""
    conv = platform.qos
    shares = dict.fromkeys(range(QUEUES), 0)
    shares[0] += 100 - roce["bandwidth_percent"]
    shares[data_tc] += roce["bandwidth_percent"]
    shares[cnp_tc] = 0

    def queue(tc: int, pattern: str, default: str) -> QosQueue:
        name = (default if tc == 0 else pattern).format(tc=tc)
        return QosQueue(tc, name, shares[tc], tc == cnp_tc, ecn and tc == data_tc, tc == data_tc)

    listed = range(QUEUES - 1, -1, -1) if conv.get("queues") == "all" else sorted({data_tc, cnp_tc})
    queues = tuple(queue(tc, conv.get("queue_name", "{tc}"), conv.get("default_queue_name", "{tc}")) for tc in listed)
    pause: tuple[QosQueue, ...] = ()
    if conv.get("pause_name"):
        pause = tuple(queue(tc, conv["pause_name"], conv["default_pause_name"]) for tc in dict.fromkeys((data_tc, 0)))
    return QosProfile(
        platform=platform.name,
        names=dict(platform.names),
        data_traffic_class=data_tc,
        cnp_traffic_class=cnp_tc,
        mtu=roce.get("mtu") or platform.mtu_default,
        queues=queues,
        pause_queues=pause,
    )
