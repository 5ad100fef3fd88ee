"""Plan: expand a schema-valid, defaulted inventory into the frozen fabric model.

The planner allocates; it does not judge. Problems that make a plan impossible to build (an
unknown model, a speed a model cannot run) are returned as diagnostics; everything that can be
built but is wrong (pools too small, ports exhausted, oversubscription) is left for
`checks.py`, which reads the finished plan.
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, replace
from typing import Any

from fabricgen import allocate
from fabricgen.allocate import ipv4
from fabricgen.catalog import models_for, platforms
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


@dataclass(slots=True)
class _Pools:
    """Running extents of each pool, for PoolUsage."""

    used: dict[str, int]
    needed: dict[str, int]

    def take(self, name: str, offset: int, count: int = 1) -> None:
        self.used[name] = self.used.get(name, 0) + count
        self.needed[name] = max(self.needed.get(name, 0), offset + count)


def build_plan(doc: dict[str, Any], source: SourceMap) -> Plan:
    """Expand `doc` (schema-valid, defaults applied) into a Plan, or raise FabricError."""
    fabric = doc["fabric"]
    transport = fabric["transport"]
    catalog = models_for(doc.get("models", {}))
    all_platforms = platforms()
    problems: list[Diagnostic] = []
    tiers = {role: _expand_tier(doc, key, role, catalog, all_platforms, transport, source, problems) for key, role in TIERS}
    if problems:
        raise FabricError(problems)

    spines, leaves = tiers["spine"], tiers["leaf"]
    leaf_model = leaves[0].model if leaves else next(iter(catalog.values()))
    uplinks, servers_cfg, bgp = doc["uplinks"], doc["servers"], doc["bgp"]
    addressing = doc.get("addressing") or {"loopbacks": "0.0.0.0/32", "fabric": "0.0.0.0/32", "server_mode": "p2p"}
    per_spine = uplinks["per_spine"]
    up_speed = speed_gbps(uplinks["speed"]) if "speed" in uplinks else leaf_model.speed
    down_speed = speed_gbps(servers_cfg["speed"]) if "speed" in servers_cfg else leaf_model.speed

    for nodes, speed, key, what in (
        (leaves, up_speed, "uplinks.speed", "uplinks"),
        (spines, up_speed, "uplinks.speed", "downlinks to leaves"),
    ):
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
    if problems:
        raise FabricError(problems)

    max_spine_index = max((n.index for n in spines), default=0)
    leaf_logical = max((n.model.ports * n.model.logical_ports(up_speed) for n in leaves), default=2)
    spine_slots = max(leaf_logical // 2 // per_spine, max_spine_index)
    uplink_slots = max_spine_index * per_spine

    roce = _roce_policy(doc, all_platforms) if transport == "roce" else None
    mtu_for = {name: (roce.mtu[name] if roce and name in roce.mtu else p.mtu_default) for name, p in all_platforms.items()}

    pools = _Pools({}, {})
    loop_base, _ = allocate.prefix_base_size(addressing["loopbacks"])
    fabric_base, _ = allocate.prefix_base_size(addressing["fabric"])
    mgmt = addressing.get("management")
    mgmt_base, _mgmt_size = allocate.prefix_base_size(mgmt) if mgmt else (0, 0)
    mgmt_len = int(mgmt.split("/")[1]) if mgmt else 0
    mgmt_gateway = addressing.get("management_gateway") or (ipv4(mgmt_base + 1) if mgmt else "")
    spine_asn, leaf_asn_base = bgp["spine_asn"], bgp["leaf_asn"]

    def loopback(node: TierNode) -> str:
        if node.loopback:
            return node.loopback
        offset = allocate.loopback_offset(node.role, node.index, spine_slots)
        pools.take("loopbacks", offset)
        return ipv4(loop_base + offset)

    def management(node: TierNode) -> str:
        if node.management or not mgmt:
            return node.management
        offset = allocate.management_offset(node.role, node.index, spine_slots)
        pools.take("management", offset)
        return ipv4(mgmt_base + offset)

    leaf_asn = {n.index: (n.asn or leaf_asn_base + n.index - 1) for n in leaves}
    lengths = doc["cabling"]["length"]
    leaf_spine_length = length_m(lengths["leaf-spine"])
    server_leaf_length = length_m(lengths["server-leaf"])

    # Cables and their addresses, leaf by leaf: each leaf only looks at the spine list.
    spine_ifaces: dict[int, list[Interface]] = {n.index: [] for n in spines}
    spine_neighbors: dict[int, list[BgpNeighbor]] = {n.index: [] for n in spines}
    links: list[Link] = []
    servers: list[Server] = []
    leaf_devices: list[Device] = []
    oversubscription: list[Oversubscription] = []
    per_cage_up_leaf = {n.index: n.model.logical_ports(up_speed) for n in leaves}
    server_mode = addressing["server_mode"]
    server_pool = addressing.get("servers")
    server_base = allocate.prefix_base_size(server_pool)[0] if server_pool else 0
    guid_prefix = int(doc.get("guid_prefix", "0x02fab00000000000"), 16)

    for leaf in leaves:
        lp = leaf.platform
        mtu = mtu_for[lp.name]
        per_cage_up = per_cage_up_leaf[leaf.index]
        per_cage_down = leaf.model.logical_ports(down_speed) or 1
        first_up = uplinks.get("first_port") or leaf.model.ports - allocate.cages_for(uplink_slots, per_cage_up) + 1
        interfaces: list[Interface] = []
        neighbors: list[BgpNeighbor] = []
        breakouts: dict[int, Breakout] = {}
        for spine in spines:
            sp = spine.platform
            per_cage_spine = spine.model.logical_ports(up_speed)
            for link_no in range(1, per_spine + 1):
                offset = allocate.fabric_link_offset(
                    leaf=leaf.index, spine=spine.index, link=link_no, spine_slots=spine_slots, per_spine=per_spine
                )
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
                spine_ifaces[spine.index].append(
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
                if transport == "roce":
                    neighbors.append(BgpNeighbor(spine_addr, spine_asn, spine.name, spine_if, "SPINES", f"{spine.name} {spine_if}"))
                    spine_neighbors[spine.index].append(
                        BgpNeighbor(leaf_addr, leaf_asn[leaf.index], leaf.name, leaf_if, "LEAVES", f"{leaf.name} {leaf_if}")
                    )
                links.append(
                    Link(
                        "leaf-spine",
                        Endpoint(leaf.name, leaf_if, leaf_cage),
                        Endpoint(spine.name, spine_if, spine_cage),
                        up_speed,
                        f"{spine_addr}/31" if transport == "roce" else "",
                        leaf_addr if transport == "roce" else "",
                        spine_addr if transport == "roce" else "",
                        leaf_spine_length,
                    )
                )

        advertised = [f"{loopback(leaf)}/32"]
        block = allocate.server_block_size(leaf.model.ports * per_cage_down, server_mode)
        leaf_block = server_base + (leaf.index - 1) * block
        subnet_len = 32 - (block.bit_length() - 1)
        if server_pool and servers_cfg["per_leaf"] and transport == "roce":
            if server_mode == "subnet":
                pools.take("servers", (leaf.index - 1) * block, block)
                advertised.append(f"{ipv4(leaf_block)}/{subnet_len}")
            else:
                advertised.append(f"{ipv4(leaf_block)}/{subnet_len} le 31")
        server_slot = 0
        for server_index in range(1, servers_cfg["per_leaf"] + 1):
            server_name = servers_cfg["name"].format(fabric=fabric["name"], leaf=leaf.name, leaf_index=leaf.index, index=server_index)
            node_guid, port_guids = (
                ib_plan.server_guids(doc, server_name, leaf.index, server_index, servers_cfg["ports_per_server"])
                if transport == "infiniband"
                else ("", ())
            )
            nics = []
            for nic in range(1, servers_cfg["ports_per_server"] + 1):
                cage, sub = allocate.split_slot(server_slot, per_cage_down, 1)
                if per_cage_down > 1:
                    breakouts[cage] = Breakout(cage, per_cage_down, down_speed)
                leaf_if = lp.port_name(cage, sub, per_cage_down, leaf.model.lanes)
                address = gateway = ""
                length = 31
                if server_pool and transport == "roce":
                    if server_mode == "p2p":
                        offset = (leaf.index - 1) * block + server_slot * 2
                        pools.take("servers", offset, 2)
                        gateway, address = ipv4(server_base + offset), ipv4(server_base + offset + 1)
                    else:
                        gateway, address, length = ipv4(leaf_block + 1), ipv4(leaf_block + 2 + server_slot), subnet_len
                port_guid = port_guids[nic - 1] if port_guids else ""
                nics.append(ServerNic(nic, leaf.name, leaf_if, down_speed, address, gateway, length, port_guid))
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
            servers.append(Server(server_name, leaf.name, server_index, node_guid, tuple(nics)))
        if server_mode == "subnet" and server_pool and servers_cfg["per_leaf"] and transport == "roce":
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

        up_count = len(spines) * per_spine
        down_gbps = servers_cfg["per_leaf"] * servers_cfg["ports_per_server"] * down_speed
        oversubscription.append(Oversubscription(leaf.name, down_gbps, up_count * up_speed))
        leaf_devices.append(
            _device(
                leaf,
                loopback(leaf),
                leaf_asn[leaf.index],
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
            )
        )

    spine_devices = []
    for spine in spines:
        per_cage = spine.model.logical_ports(up_speed)
        ifaces = sorted(spine_ifaces[spine.index], key=lambda i: (i.port, i.sub))
        breakouts = {i.port: Breakout(i.port, per_cage, up_speed) for i in ifaces if per_cage > 1}
        lo = loopback(spine)
        spine_devices.append(
            _device(
                spine,
                lo,
                spine_asn if transport == "roce" else 0,
                management(spine),
                mgmt_len,
                mgmt_gateway,
                mtu_for[spine.platform.name],
                bgp.get("maximum_paths") or max(len(spines) * per_spine, 1),
                ifaces,
                breakouts,
                spine_neighbors[spine.index],
                [f"{lo}/32"],
                transport,
                guid_prefix,
            )
        )

    links = _apply_cable_overrides(links, doc, source)

    pool_usage = []
    for name in ("loopbacks", "fabric", "servers", "management"):
        prefix = addressing.get(name)
        if prefix and transport == "roce":
            _, size = allocate.prefix_base_size(prefix)
            pool_usage.append(PoolUsage(name, f"addressing.{name}", prefix, pools.used.get(name, 0), pools.needed.get(name, 0), size))

    used_models = sorted({n.model.name for n in (*spines, *leaves)})
    used_platforms = sorted({n.platform.name for n in (*spines, *leaves)})
    devices = tuple(sorted((*spine_devices, *leaf_devices), key=lambda d: (_ROLE_ORDER[d.role], d.index)))
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
) -> Device:
    ifaces = tuple(sorted((_with_speed(i, node, breakouts) for i in interfaces), key=lambda i: (i.port, i.sub, i.name)))
    groups, neighbors = _peer_groups(neighbors)
    guid = node.guid or (_placeholder_guid(guid_prefix, 1 if node.role == "spine" else 2, node.index) if transport == "infiniband" else "")
    return Device(
        name=node.name,
        role=node.role,
        index=node.index,
        pod=1,
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
        bgp_neighbors=tuple(sorted(neighbors, key=lambda n: allocate.ip_int(n.address))),
        advertised_prefixes=tuple(dict.fromkeys(advertised)),
        ports_total=node.model.ports,
        ports_used=len({i.port for i in ifaces if i.port}),
        peer_groups=groups,
        vlans=tuple(sorted({i.vlan for i in ifaces if i.vlan})),
        queue_keyword=node.platform.queue_keywords.get(node.model.queue_family, ""),
    )


def _with_speed(interface: Interface, node: TierNode, breakouts: dict[int, Breakout]) -> Interface:
    """Fill in the platform's `speed` value of a front-panel port (platform data decides the format)."""
    if not interface.port:
        return interface
    breakout = breakouts.get(interface.port)
    pattern = node.platform.breakout_speed_format if breakout else node.platform.speed_format
    lanes = node.model.lanes // breakout.count if breakout else node.model.lanes
    setting = pattern.format(speed=interface.speed, mbps=interface.speed * 1000, lanes=max(lanes, 1))
    return dataclasses.replace(interface, speed_setting=setting)


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
    return groups, [dataclasses.replace(n, inherits_remote_as=n.peer_group in shared) for n in neighbors]


def _expand_tier(
    doc: dict[str, Any],
    key: str,
    role: str,
    catalog: dict[str, Model],
    all_platforms: dict[str, Platform],
    transport: str,
    source: SourceMap,
    problems: list[Diagnostic],
) -> list[TierNode]:
    tier = doc[key]
    pins: dict[int, tuple[int | None, dict[str, Any]]] = {node["index"]: (i, node) for i, node in enumerate(tier.get("nodes", []))}
    indices = sorted(set(range(1, tier.get("count", 0) + 1)) | set(pins))
    result = []
    for index in indices:
        position, pin = pins.get(index, (None, {}))
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
        name = pin.get("name") or tier["name"].format(fabric=doc["fabric"]["name"], index=index)
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
