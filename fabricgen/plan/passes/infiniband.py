"""Pass: the InfiniBand part of the plan: GUIDs, subnet managers, partitions and QoS.

Runs after the devices are assembled. GUIDs come from pins (`spines.nodes[].guid`,
`subnet_managers[].guid`, the `guids:` section written by `fabricgen ib import-guids`) or are placeholders derived from
`guid_prefix` and the node's (kind, index), so they never move when the fabric grows.
Node and port GUIDs are kept apart: a pinned port GUID is never derived from a node GUID.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections import defaultdict
from collections.abc import Mapping

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.model import SM_ROLE, Device, InfinibandPlan, Interface, NodeName, Partition, Server, SmProtection, SubnetManager
from fabricgen.plan.guids import KIND_SM, placeholder_guid
from fabricgen.plan.inputs import GuidPin, Inputs, default_subnet_manager

SM_DEVICE = "mlx5_0"
"""A dedicated SM host's one HCA, as its node description names it."""
MTU_CODES = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
"""IBTA MTU codes (include/iba/ib_types.h)."""
RATE_CODES = {10: 3, 40: 7, 56: 12, 100: 16, 200: 17, 400: 21}
"""IBTA rate codes in Gb/s (include/iba/ib_types.h)."""
MAX_OP_VLS = {1: 1, 2: 2, 4: 3, 8: 4}
"""OpenSM's max_op_vls is an encoding: 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7."""


Port = tuple[int, int]
"""(cage, logical port in the cage): an InfiniBand port of a leaf."""


def _host_role(role: str) -> bool:
    return role.startswith("server") or role == SM_ROLE


class LeafCages:
    """A leaf's planned interfaces and breakouts by cage, built once per leaf so that looking at
    every cage stays linear in the leaf's ports."""

    def __init__(self, leaf: Device) -> None:
        self.leaf = leaf
        self.interfaces: dict[int, list[Interface]] = defaultdict(list)
        for interface in leaf.interfaces:
            self.interfaces[interface.port].append(interface)
        self.breakouts = {b.port: b for b in leaf.breakouts}

    def free_port(self, cage: int, taken: set[Port], speed: int) -> int:
        """The first logical port of `cage` a dedicated SM host at `speed` can take; 0 when none.

        A cage nothing uses gives its first port. A cage already in use gives a free port only
        when it carries hosts (servers or SM hosts) at the SM's speed: its module or cable is
        then the same kind as the SM's link (a 1:2 splitter's free leg, or a free optical port of
        the same twin-port module), since both ports of a twin-port module are straight or both
        split (docs/infiniband.md). Never a free half of an uplink cage, whose module is of
        another kind.
        """
        on_cage = self.interfaces.get(cage, [])
        used = {i.sub for i in on_cage} | {sub for c, sub in taken if c == cage}
        if not used:
            return 1
        breakout = self.breakouts.get(cage)
        if breakout is None or breakout.speed != speed or not all(_host_role(i.role) for i in on_cage):
            return 0
        return next((sub for sub in range(1, breakout.count + 1) if sub not in used), 0)


def free_leaf_port(leaf: Device, taken: set[Port], speed: int) -> Port:
    """Where a dedicated SM host goes on `leaf`: a free port of a partly used host cage (the
    highest), else the highest cage nothing uses; (cages + 1, 1) when none is free (the checks
    then say the leaf is full).

    Ports, not cages: on a QM9700 whose servers leave the second port of their last cage free,
    the SM host takes that port (and the free leg of the servers' splitter) instead of being
    refused. Counted from the top: servers fill a leaf from cage 1 upwards, so a new server
    lands on the SM's half port only when the last server cage fills; the re-planned SM host then
    moves to the highest free cage (pin `port:` to keep it put). Counted from the planned
    interfaces, not from servers.per_leaf x ports_per_server: on a rail-optimised fabric a leaf
    carries one port per server, whatever each server's NIC count.
    """
    cages = LeafCages(leaf)
    used = set(cages.interfaces) | {cage for cage, _ in taken}
    for cage in range(leaf.ports_total, 0, -1):
        if cage in used:
            sub = cages.free_port(cage, taken, speed)
            if sub:
                return cage, sub
    free = next((cage for cage in range(leaf.ports_total, 0, -1) if cage not in used), leaf.ports_total + 1)
    return free, 1


def pin_switch_guids(devices: tuple[Device, ...], pins: Mapping[str, GuidPin]) -> tuple[Device, ...]:
    """Apply the `guids:` section to switches without a node pin."""
    if not pins:
        return devices
    return tuple(
        dataclasses.replace(d, guid=pins[d.name].node.lower(), guid_is_placeholder=False) if d.guid_is_placeholder and d.name in pins else d
        for d in devices
    )


def build_infiniband(inputs: Inputs, devices: tuple[Device, ...], servers: list[Server], speed: int) -> tuple[InfinibandPlan, list[str]]:
    """The InfinibandPlan and its warnings; FabricError for references that resolve to nothing.
    `speed`: the host links' speed, which a dedicated SM host's link runs too."""
    problems: list[Diagnostic] = []
    by_name = {s.name: s for s in servers}
    sms = _subnet_managers(inputs, by_name, [d for d in devices if d.role == "leaf"], speed, problems)
    partitions = _partitions(inputs, by_name, problems)
    if problems:
        raise FabricError(problems)
    prefix, pins, qos, opensm, default = inputs.guid_prefix, inputs.guids, inputs.qos, inputs.opensm, inputs.default_partition
    max_vls = qos.max_vls
    node_names = [NodeName(d.guid, d.name) for d in devices]
    # One HCA per adapter, named as its node description reads on a real fabric ("<host> mlx5_N").
    node_names += [NodeName(n.node_guid, f"{s.name} {n.device}") for s in servers for n in s.nics]
    node_names += [NodeName(sm.node_guid, f"{sm.host} {SM_DEVICE}") for sm in sms if not sm.server]
    plan = InfinibandPlan(
        subnet_managers=tuple(sms),
        routing_engine=inputs.routing.engine,
        lmc=inputs.routing.lmc,
        partitions=tuple(partitions),
        qos_enabled=qos.enabled,
        qos_max_vls=max_vls,
        qos_sl2vl=qos.sl2vl or tuple(sl % max_vls for sl in range(16)),
        # An empty high-priority table (every weight 0): OpenSM's built-in "0:4" would serve VL0,
        # the default traffic, before every tenant VL in the low table (opensm(8), QOS CONFIGURATION).
        qos_vlarb_high=qos.vlarb_high or ",".join(f"{vl}:0" for vl in range(max_vls)),
        qos_vlarb_low=qos.vlarb_low or ",".join(f"{vl}:64" for vl in range(max_vls)),
        guid_prefix=prefix,
        no_fallback=inputs.routing.no_fallback,
        qos_high_limit=qos.high_limit,
        max_op_vls=MAX_OP_VLS[max_vls],
        default_membership=default.membership or ("limited" if partitions else "full"),
        default_ipoib=default.ipoib,
        default_mtu_code=MTU_CODES.get(min((d.mtu for d in devices), default=0), 0),
        root_guids=tuple(d.guid for d in devices if d.role == "spine"),
        cn_guids=tuple(n.port_guid for s in servers for n in s.nics),
        node_names=tuple(node_names),
        placeholder_hosts=tuple(
            [s.name for s in servers if _placeholder_adapters(s, pins)]
            + [sm.host for sm in sms if sm.guid_is_placeholder and not sm.server]
        ),
        config_dir=opensm.config_dir.rstrip("/") or "/",
        log_dir=opensm.log_dir.rstrip("/") or "/",
        log_flags=opensm.log_flags,
        sweep_interval=opensm.sweep_interval,
        sminfo_polling_timeout=opensm.sminfo_polling_timeout,
        polling_retry_number=opensm.polling_retry_number,
        # Congestion control is rendered for upstream OpenSM; SHARP and adaptive routing are intent only.
        congestion_control=opensm.congestion_control,
        cc_threshold=opensm.cc_threshold,
        cc_marking_rate=opensm.cc_marking_rate,
        sharp_enabled=opensm.sharp,
        adaptive_routing_engine=opensm.adaptive_routing_engine if opensm.adaptive_routing else "",
        protection=SmProtection(opensm.protection, opensm.m_key_protection_level, opensm.m_key_lease_period),
    )
    return plan, _placeholder_warnings(devices, servers, sms, pins, prefix)


def _subnet_managers(
    inputs: Inputs, by_name: dict[str, Server], leaves: list[Device], speed: int, problems: list[Diagnostic]
) -> list[SubnetManager]:
    """Where each OpenSM runs: on a planned server's HCA, or on a dedicated host (with the servers'
    HCA model) cabled to a leaf (alternately the first and the last leaf unless `leaf:` is given)
    on its free port (`free_leaf_port`), or the first free port of cage `port:` when given."""
    prefix, pins, source = inputs.guid_prefix, inputs.guids, inputs.source
    leaf_names = {d.name for d in leaves}
    sms: list[SubnetManager] = []
    taken: dict[str, set[Port]] = {}
    dedicated = 0
    for sm in inputs.subnet_managers or (default_subnet_manager(inputs.fabric.name),):
        host, priority = sm.host, sm.priority
        server = by_name.get(host)
        if server is not None:
            port_guid = (sm.guid or server.nics[0].port_guid).lower()
            adapter = next((n for n in server.nics if n.port_guid == port_guid), None)
            if adapter is None:
                problems.append(source.diagnostic((*sm.path, "guid"), f"{port_guid} is not a port GUID of server {host}'s HCAs"))
                continue
            sms.append(
                SubnetManager(host, priority, port_guid, adapter.node_guid, host not in pins, host, server.leaf, 0, server.nic_model)
            )
            continue
        dedicated += 1
        if not leaves:
            problems.append(source.diagnostic(sm.path, f"no leaf to cable subnet manager {host} to"))
            continue
        leaf = sm.leaf or (leaves[0].name if dedicated % 2 else leaves[-1].name)
        if leaf not in leaf_names:
            problems.append(source.diagnostic((*sm.path, "leaf"), f"unknown leaf '{leaf}' for subnet manager {host}"))
            continue
        device, on_leaf = next(d for d in leaves if d.name == leaf), taken.setdefault(leaf, set())
        if sm.port:
            port, sub = sm.port, LeafCages(device).free_port(sm.port, on_leaf, speed)
        else:
            port, sub = free_leaf_port(device, on_leaf, speed)
        on_leaf.add((port, sub))
        pin = pins.get(host)
        node_guid = (sm.node_guid or (pin and pin.node) or placeholder_guid(prefix, KIND_SM, dedicated)).lower()
        pinned_ports = pin.ports if pin else ()
        port_guid = (sm.guid or (pinned_ports[0] if pinned_ports else "") or f"0x{int(node_guid, 16) + 1:016x}").lower()
        placeholder = not (sm.node_guid or pin or sm.guid)
        sms.append(SubnetManager(host, priority, port_guid, node_guid, placeholder, "", leaf, port, inputs.servers.nic, sub))
    return sms


def _partitions(inputs: Inputs, by_name: dict[str, Server], problems: list[Diagnostic]) -> list[Partition]:
    """Tenant partitions with their member patterns resolved to servers and port GUIDs."""
    partitions = []
    names = list(by_name)
    for part in inputs.partitions:
        hosts: dict[str, None] = {}
        for m_pos, pattern in enumerate(part.members):
            matched = [pattern] if pattern in by_name else fnmatch.filter(names, pattern)
            if not matched:
                problems.append(
                    inputs.source.diagnostic(
                        (*part.path, "members", m_pos), f"'{pattern}' matches no server of the plan", hint="e.g. ib1-gpu01*"
                    )
                )
            hosts.update(dict.fromkeys(matched))
        member_servers = [by_name[h] for h in hosts]
        partitions.append(
            Partition(
                part.name,
                part.pkey,
                part.membership,
                part.ipoib,
                part.mtu,
                part.rate or 0,
                part.sl or 0,
                part.members,
                tuple(sorted(hosts)),
                tuple(sorted(n.port_guid for s in member_servers for n in s.nics)),
                MTU_CODES[part.mtu],
                RATE_CODES.get(part.rate or 0, 0),
                (part.sl or 0) if inputs.qos.enabled else 0,
            )
        )
    return partitions


def _placeholder_adapters(server: Server, pins: Mapping[str, GuidPin]) -> int:
    """How many of `server`'s adapters (one per NIC) have no imported node GUID."""
    pin = pins.get(server.name)
    imported = (len(pin.nodes) or 1) if pin else 0
    return max(len(server.nics) - imported, 0)


def _placeholder_warnings(
    devices: tuple[Device, ...], servers: list[Server], sms: list[SubnetManager], pins: Mapping[str, GuidPin], prefix: str
) -> list[str]:
    warnings = []
    counts = (
        ("switch", sum(1 for d in devices if d.guid_is_placeholder)),
        ("server HCA", sum(_placeholder_adapters(s, pins) for s in servers)),
        ("subnet manager HCA", sum(1 for sm in sms if sm.guid_is_placeholder and not sm.server)),
    )
    found = [f"{n} {what}" for what, n in counts if n]
    if found:
        warnings.append(
            f"GUIDs of {', '.join(found)} node(s) are placeholders derived from guid_prefix {prefix}; "
            "import the real ones (ibnetdiscover > fabric.ibnet; fabricgen ib import-guids INVENTORY fabric.ibnet) before a change window"
        )
    return warnings
