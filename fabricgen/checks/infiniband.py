"""Checks of an InfiniBand plan: leaf ports and spine radix, subnet-manager placement, GUIDs,
partitions, QoS tables and what only NVIDIA's SM can do.

Each rule that OpenSM or NVIDIA documents cites its source in docs/infiniband.md.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic, Severity
from fabricgen.core.model import SM_ROLE, Device, Plan, SubnetManager
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.common import warning
from fabricgen.plan.inputs import Inputs
from fabricgen.plan.passes.infiniband import LeafCages


def check_infiniband(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    ib = plan.infiniband
    if ib is None:
        return
    pkeys = Counter(p.pkey for p in ib.partitions)
    for position, partition in enumerate(ib.partitions):
        if pkeys[partition.pkey] > 1:
            yield source.diagnostic(
                ("partitions", position, "pkey"),
                f"P_Key 0x{partition.pkey:04x} of partition '{partition.name}' is used by another partition",
            )
    if ib.lmc and ib.routing_engine == "ftree":
        yield source.diagnostic(("routing", "lmc"), "ftree routing needs lmc 0; OpenSM silently falls back to minhop otherwise")
    yield from _ib_fat_tree(plan, inputs, source)
    yield from _ib_route_balance(plan, source)
    yield from _ib_partition_rates(plan, source)
    yield from _ib_guids(plan, inputs, source)
    yield from _ib_qos(plan, inputs, source)
    yield from _ib_isolated_hosts(plan, source)
    yield from _ib_vendor_features(plan, source)
    for message in plan.warnings:
        yield Diagnostic(message, "guid_prefix", source.file, *source.locate(()), severity=Severity.WARNING)


def _ib_fat_tree(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Spine radix and the dedicated SM hosts' leaf ports. 1:1 is bandwidth, not ports: the
    generic oversubscription check compares each leaf's server Gb/s (SM hosts are not compute)
    with its uplink Gb/s; ftree itself routes any CBB ratio (doc/current-routing.txt)."""
    ib = plan.infiniband
    assert ib is not None
    positions = {sm.host: i for i, sm in enumerate(ib.subnet_managers)}
    for sm in ib.subnet_managers:
        if sm.server and ib.partitions:
            yield warning(
                source,
                ("subnet_managers", positions[sm.host], "host"),
                f"the SM runs on server {sm.host}, whose port becomes a full member of every partition (SELF=full): tenants are not isolated from it",
                hint=_dedicated_sm_hint(plan),
            )
    for device in plan.devices:
        if device.role == "leaf":
            cabled = {i.peer_device for i in device.interfaces if i.role == SM_ROLE}
            for sm in ib.subnet_managers:
                if sm.leaf == device.name and not sm.server and sm.host not in cabled:
                    yield source.diagnostic(("subnet_managers", positions[sm.host]), _sm_port_problem(sm, device), hint=_sm_port_hint(plan))
        elif device.role == "spine":
            down = sum(1 for i in device.interfaces if i.role == "downlink")
            radix = device.ports_total * max((b.count for b in device.breakouts), default=1)
            if down > radix:
                yield source.diagnostic(
                    ("leaves",),
                    f"{device.name} ({device.model}, radix {radix}) would need {down} leaf-facing ports: a two-tier fat tree of radix {radix} holds at most {radix} leaf links per spine",
                    hint="use fewer leaves or uplinks.per_spine, or a three-tier fabric",
                )


def _ib_route_balance(plan: Plan, source: SourceMap) -> Iterable[Diagnostic]:
    """One warning for the leaves whose compute ports are not a whole multiple of their uplinks.

    ftree "supports trees with non-integer CBB ratio, [but] the routing will not be as balanced"
    (OpenSM doc/current-routing.txt): with p compute ports per uplink, some uplinks carry the
    routes of ceil(p) hosts and others floor(p). Under one port per uplink every host has an
    uplink of its own and nothing is uneven, so only p > 1 is reported.
    """
    uneven: list[str] = []
    for device in plan.devices:
        if device.role != "leaf":
            continue
        uplinks = sum(1 for i in device.interfaces if i.role == "uplink")
        compute = sum(1 for i in device.interfaces if i.role.startswith("server"))
        if uplinks and compute > uplinks and compute % uplinks:
            uneven.append(f"{device.name} ({compute} compute ports / {uplinks} uplinks = {compute / uplinks:.2f})")
    if uneven:
        yield warning(
            source,
            ("servers", "per_leaf"),
            f"{len(uneven)} leaf/leaves carry a non-whole number of compute ports per uplink, {', '.join(uneven[:3])}"
            f"{' ...' if len(uneven) > 3 else ''}: ftree routes a non-integer CBB ratio less evenly, some uplinks carry one host's routes more than others",
            hint="make servers.per_leaf x ports_per_server a multiple of the uplinks per leaf",
        )


def _ib_partition_rates(plan: Plan, source: SourceMap) -> Iterable[Diagnostic]:
    """A partition's IPoIB group rate above a member's link speed: OpenSM refuses that port's
    join (`validate_port_caps` in opensm/osm_sa_mcmember_record.c: "Port's RATE %x is less
    than %x"), so the tenant's IPoIB never comes up there."""
    ib = plan.infiniband
    assert ib is not None
    speed = {s.name: min(n.speed for n in s.nics) for s in plan.servers if s.nics}
    for position, part in enumerate(ib.partitions):
        slow = sorted(h for h in part.hosts if part.rate and speed.get(h, part.rate) < part.rate)
        if slow:
            yield source.diagnostic(
                ("partitions", position, "rate"),
                f"partition {part.name}: rate {part.rate}G is above the {speed[slow[0]]}G links of {len(slow)} member(s) "
                f"({', '.join(slow[:3])}{' ...' if len(slow) > 3 else ''}): OpenSM refuses their multicast joins (validate_port_caps)",
                hint=f"set rate to at most {min(speed[h] for h in slow)}, or leave it unset",
            )


def _sm_port_problem(sm: SubnetManager, leaf: Device) -> str:
    """Why the planner left a dedicated SM host uncabled (plan/passes/sm_links.py). A leaf's ports
    are InfiniBand ports in cages: a twin-port (or split) cage holds several."""
    cages = f"{leaf.ports_total} {'cages' if any(b.count > 1 for b in leaf.breakouts) else 'ports'}"
    if sm.leaf_port == leaf.ports_total + 1:
        return f"subnet manager {sm.host}: {leaf.name} has no free port ({cages}, all used by servers and uplinks)"
    if sm.leaf_port > leaf.ports_total:
        what = f"does not exist ({cages})"
    elif sm.leaf_sub == 0 and _has_free_port(leaf, sm.leaf_port):
        what = "has a free port an SM host cannot share: its module is the uplinks', or runs another speed (both ports of a twin-port module are the same kind)"
    else:
        what = "is taken by a server or an uplink"
    return f"subnet manager {sm.host}: port {sm.leaf_port} of {leaf.name} {what}"


def _has_free_port(leaf: Device, cage: int) -> bool:
    breakout = next((b for b in leaf.breakouts if b.port == cage), None)
    return breakout is not None and sum(1 for i in leaf.interfaces if i.port == cage) < breakout.count


def _free_leaf_ports(plan: Plan) -> dict[str, list[int]]:
    """Leaf name -> cages with a port a dedicated SM host can take (a free cage, or a free port of
    a cage of hosts at the servers' speed: plan/passes/infiniband.py `LeafCages.free_port`)."""
    ib = plan.infiniband
    taken: dict[str, set[tuple[int, int]]] = defaultdict(set)
    for sm in ib.subnet_managers if ib else ():
        if not sm.server:
            taken[sm.leaf].add((sm.leaf_port, sm.leaf_sub))
    free = {}
    for device in plan.devices:
        if device.role == "leaf":
            speed = next((i.speed for i in device.interfaces if i.role.startswith("server")), 0)
            cages = LeafCages(device)
            ports = [p for p in range(1, device.ports_total + 1) if cages.free_port(p, taken[device.name], speed)]
            if ports:
                free[device.name] = ports
    return free


def _sm_port_hint(plan: Plan) -> str:
    """Where a dedicated SM host can go, or, when no leaf has a free port, the SM-on-a-server way."""
    free = _free_leaf_ports(plan)
    server = plan.servers[0].name if plan.servers else "<server name>"
    if free:
        leaf, ports = sorted(free.items())[0]
        return (
            f"free leaf ports: {', '.join(f'{n} {p[0]}' for n, p in sorted(free.items())[:4])}; "
            f"set subnet_managers[].leaf/port (e.g. leaf: {leaf}, port: {ports[0]}), or run the SM on a server (host: {server})"
        )
    return (
        f"no leaf has a free port: run the SM on a server's HCA (host: {server}; ib verify accepts it), "
        "or lower servers.per_leaf / uplinks to free a port for a dedicated host"
    )


def _dedicated_sm_hint(plan: Plan) -> str:
    free = _free_leaf_ports(plan)
    if free:
        leaf, ports = sorted(free.items())[0]
        return f"to isolate tenants from the SM, run it on a dedicated host on a free leaf port (subnet_managers[]: leaf: {leaf}, port: {ports[0]})"
    return (
        "no leaf has a free port for a dedicated SM host; to isolate tenants from the SM, lower servers.per_leaf "
        "or the uplinks by one on a leaf and give the SM that port (subnet_managers[].leaf/port); otherwise keep it on the server"
    )


def _ib_guids(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Every node GUID and port GUID once: OpenSM keys everything by GUID."""
    ib = plan.infiniband
    assert ib is not None
    owners: dict[str, list[str]] = defaultdict(list)
    for device in plan.devices:
        owners[device.guid].append(device.name)
    for server in plan.servers:
        for nic in server.nics:  # every NIC is its own adapter (HCA) with its own node GUID
            owners[nic.node_guid].append(f"{server.name} {nic.device}")
            if nic.port_guid != nic.node_guid:
                owners[nic.port_guid].append(f"{server.name} {nic.device} port 1")
    for sm in ib.subnet_managers:
        if not sm.server:
            owners[sm.node_guid].append(sm.host)
            if sm.port_guid != sm.node_guid:
                owners[sm.port_guid].append(f"{sm.host} port 1")
    for guid, users in sorted(owners.items()):
        if len(users) > 1:
            yield source.diagnostic(("guids",) if inputs.guids else ("guid_prefix",), f"GUID {guid} is used by {', '.join(users)}")
    known = {d.name for d in plan.devices} | {s.name for s in plan.servers} | {sm.host for sm in ib.subnet_managers}
    for name in sorted(set(inputs.guids) - known):
        yield warning(source, ("guids", name), f"'{name}' is not a switch, server or SM host of the plan: its GUIDs are not used", key=True)


def _ib_vendor_features(plan: Plan, source: SourceMap) -> Iterable[Diagnostic]:
    """SHARP and adaptive routing exist only in NVIDIA's MLNX OpenSM / UFM: say what is (not) rendered."""
    ib = plan.infiniband
    assert ib is not None
    if ib.sharp_enabled:
        yield warning(
            source,
            ("opensm", "sharp", "enabled"),
            "SHARP needs NVIDIA MLNX OpenSM (sharp_enabled 2) or UFM and the Aggregation Manager (sharp_am) on the master SM's host; "
            "upstream OpenSM, which fabricgen renders and verifies, has neither: nothing is rendered for it",
            hint="fabricgen already provides what the AM needs from the SM: the SM on a host (not a switch), "
            "ftree with root_guids.conf; enable SHARP in UFM or MLNX OpenSM",
        )
    if ib.adaptive_routing_engine:
        yield warning(
            source,
            ("opensm", "adaptive_routing", "enabled"),
            f"adaptive routing ({ib.adaptive_routing_engine}) needs NVIDIA MLNX OpenSM or UFM; upstream OpenSM 3.3.x has no AR "
            f"engine and rejects the name: routing_engine stays {ib.routing_engine}",
            hint="set routing_engine in MLNX OpenSM / UFM; fabricgen's root_guids.conf works for ar_updn and ar_ftree",
        )
    if ib.congestion_control and ib.cc_threshold == 0:
        yield warning(
            source,
            ("opensm", "congestion_control", "threshold"),
            "congestion control is enabled with threshold 0: switches mark no packet, so HCAs never throttle",
            hint="set opensm.congestion_control.threshold (1 loose ... 15 aggressive)",
        )


def _ib_isolated_hosts(plan: Plan, source: SourceMap) -> Iterable[Diagnostic]:
    """Hosts in no tenant while Default is limited: limited members talk only to full members
    (opensm(8), PARTITION CONFIGURATION), so these hosts reach the SM and nothing else."""
    ib = plan.infiniband
    assert ib is not None
    if ib.default_membership != "limited":
        return
    in_tenant = {h for p in ib.partitions for h in p.hosts}
    alone = [s.name for s in plan.servers if s.name not in in_tenant]
    if alone:
        yield warning(
            source,
            ("default_partition", "membership") if ("default_partition",) in source.values else ("partitions",),
            f"{len(alone)} server(s) in no tenant partition and only limited members of Default ({', '.join(alone[:4])}"
            f"{' ...' if len(alone) > 4 else ''}): limited members cannot talk to each other, only to full members such as the SM",
            hint="add them to a partition, or set default_partition.membership: full",
        )


CREDIT_BYTES = 64
"""VL arbitration weights count 64-byte credits (IBTA Vol. 1 §7.6.9; MLNX_OFED manual, OpenSM QoS)."""


def _vlarb_pairs(table: str) -> list[tuple[int, int]]:
    return [(int(vl), int(weight)) for vl, weight in (pair.split(":") for pair in table.split(",") if pair)]


def _ib_vlarb_warnings(plan: Plan, source: SourceMap) -> Iterable[Diagnostic]:
    """Weights that cannot work as written, and a high-priority table that serves default VLs
    before the tenants' VLs."""
    ib = plan.infiniband
    assert ib is not None
    mtu = max((p.mtu for p in ib.partitions), default=4096)
    packet = mtu // CREDIT_BYTES
    for key, table in (("vlarb_high", ib.qos_vlarb_high), ("vlarb_low", ib.qos_vlarb_low)):
        small = [f"VL{vl}:{weight}" for vl, weight in _vlarb_pairs(table) if 0 < weight < packet]
        if small:
            yield warning(
                source,
                ("qos", key),
                f"weights {', '.join(small)} are below {packet} credits, one {mtu}-byte packet: a packet in flight is always "
                f"completed, so every weight from 1 to {packet} sends exactly one packet per turn and these weights have no effect",
                hint=f"use multiples of {packet} (e.g. {packet} and {2 * packet} for a 1:2 share)",
            )
    tenant_vls = {ib.qos_sl2vl[p.sl] for p in ib.partitions if p.sl}
    high = {vl for vl, weight in _vlarb_pairs(ib.qos_vlarb_high) if weight}
    ahead = sorted(high - tenant_vls)
    if tenant_vls and ahead and not tenant_vls <= high:
        yield warning(
            source,
            ("qos", "vlarb_high"),
            f"the high-priority table serves VL(s) {', '.join(map(str, ahead))} before the tenant VL(s) "
            f"{', '.join(map(str, sorted(tenant_vls - high)))} of the low table",
            hint="leave qos.vlarb_high unset (every weight 0) or list the tenant VLs there",
        )


def _ib_qos(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    ib = plan.infiniband
    assert ib is not None
    bad = sorted({vl for vl in ib.qos_sl2vl if vl >= ib.qos_max_vls and vl != 15})
    if bad:
        yield source.diagnostic(
            ("qos", "sl2vl"), f"VL(s) {', '.join(map(str, bad))} are not below qos.max_vls {ib.qos_max_vls} (15 = drop)"
        )
    for key, table in (("vlarb_high", ib.qos_vlarb_high), ("vlarb_low", ib.qos_vlarb_low)):
        vls = sorted({int(pair.split(":")[0]) for pair in table.split(",") if pair})
        if any(vl >= ib.qos_max_vls for vl in vls):
            yield source.diagnostic(("qos", key), f"{table} names a VL not below qos.max_vls {ib.qos_max_vls}")
        if any(int(pair.split(":")[1]) > 255 for pair in table.split(",") if pair):
            yield source.diagnostic(("qos", key), f"{table}: a weight is above 255")
    if ib.qos_enabled:
        yield from _ib_vlarb_warnings(plan, source)
    for position, part in enumerate(ib.partitions):
        if inputs.partitions[position].sl is None:
            continue
        if not ib.qos_enabled:
            yield warning(
                source,
                ("partitions", position, "sl"),
                f"partition {part.name} sets sl {part.sl} but qos.enabled is false: OpenSM ignores it",
            )
        elif ib.qos_sl2vl[part.sl] == 15:
            yield source.diagnostic(("partitions", position, "sl"), f"partition {part.name}: SL {part.sl} maps to VL15 (drop) in qos.sl2vl")
