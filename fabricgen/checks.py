"""Semantic checks on a finished plan. Each check is a small function returning diagnostics
that name the items involved; `check_plan` runs them all so every problem shows at once.

The checks read the plan (and the source map, to point at the inventory key to change); they
never modify anything. Each is linear in the size of the fabric.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import netaddr

from fabricgen.catalog import platforms
from fabricgen.diagnostics import Diagnostic, Severity
from fabricgen.loader import PathKey, SourceMap
from fabricgen.model import Plan

Check = Callable[[Plan, dict[str, Any], SourceMap], Iterable[Diagnostic]]


def _tier_key(role: str) -> str:
    return {"spine": "spines", "leaf": "leaves"}.get(role, role)


def _node_path(doc: dict[str, Any], role: str, index: int, field: str) -> PathKey:
    key = _tier_key(role)
    for position, node in enumerate(doc.get(key, {}).get("nodes", [])):
        if node.get("index") == index:
            return (key, "nodes", position, field) if field in node else (key, "nodes", position)
    return (key,)


def check_pools(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    for pool in plan.pools:
        if pool.needed > pool.capacity:
            yield source.diagnostic(
                tuple(pool.key.split(".")),
                f"pool {pool.prefix} is too small: the plan needs {pool.needed} addresses (slots for growth included), the pool has {pool.capacity}",
                hint=f"use at least a /{max(32 - (pool.needed - 1).bit_length(), 0)}",
            )
    prefixes = [(p.key, netaddr.IPNetwork(p.prefix)) for p in plan.pools]
    for i, (key_a, net_a) in enumerate(prefixes):
        for key_b, net_b in prefixes[i + 1 :]:
            if net_a.first <= net_b.last and net_b.first <= net_a.last:
                yield source.diagnostic(tuple(key_b.split(".")), f"pool {net_b} overlaps {key_a} ({net_a})")


def check_duplicates(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    names = Counter(d.name for d in plan.devices)
    names.update(s.name for s in plan.servers)
    for device in plan.devices:
        if names[device.name] > 1:
            names[device.name] = 0
            yield source.diagnostic(_node_path(doc, device.role, device.index, "name"), f"duplicate name '{device.name}'")
    owners: dict[str, list[str]] = defaultdict(list)
    for device in plan.devices:
        for address, what in ((device.loopback, "loopback"), (device.management, "management")):
            if address:
                owners[address].append(f"{device.name} {what}")
        for iface in device.interfaces:
            if iface.address:
                owners[iface.address].append(f"{device.name} {iface.name}")
    for server in plan.servers:
        for nic in server.nics:
            if nic.address and nic.address != nic.gateway:
                owners[nic.address].append(f"{server.name} nic{nic.nic}")
    for address, users in sorted(owners.items()):
        if len(users) > 1:
            yield Diagnostic(
                f"address {address} is used more than once: {', '.join(sorted(users))}",
                "addressing",
                source.file,
                *source.locate(("addressing",)),
            )
    asns: dict[int, list[str]] = defaultdict(list)
    for device in plan.devices:
        if device.role == "leaf" and device.asn:
            asns[device.asn].append(device.name)
    spine_asns = {d.asn for d in plan.devices if d.role == "spine"}
    for asn, users in sorted(asns.items()):
        if len(users) > 1:
            yield source.diagnostic(
                ("bgp", "leaf_asn"),
                f"ASN {asn} is used by several leaves: {', '.join(sorted(users))}",
                hint="RFC 7938 gives each leaf its own ASN",
            )
        if asn in spine_asns:
            yield source.diagnostic(("bgp", "leaf_asn"), f"ASN {asn} of {', '.join(users)} equals the spine ASN")


def check_ports(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    for device in plan.devices:
        over = [i for i in device.interfaces if i.port > device.ports_total]
        if over:
            key = ("servers", "per_leaf") if device.role == "leaf" else ("leaves",)
            yield source.diagnostic(
                key, f"{device.name} ({device.model}) runs out of ports: it needs cage {max(i.port for i in over)} of {device.ports_total}"
            )
        cages: dict[int, set[str]] = defaultdict(set)
        for iface in device.interfaces:
            if iface.port:
                cages[iface.port].add(iface.role)
        clash = sorted(port for port, roles in cages.items() if "uplink" in roles and len(roles) > 1)
        if clash:
            yield source.diagnostic(
                ("uplinks",),
                f"{device.name}: server ports and uplinks collide on cage(s) {', '.join(map(str, clash))}: {sum(1 for i in device.interfaces if i.role.startswith('server'))} server ports and {sum(1 for i in device.interfaces if i.role == 'uplink')} uplinks do not fit {device.ports_total} cages",
            )


def check_oversubscription(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    for item in plan.oversubscription:
        if item.ratio > plan.max_oversubscription + 1e-9:
            yield source.diagnostic(
                ("oversubscription", "max_ratio"),
                f"{item.device} is oversubscribed {item.ratio:.2f}:1 ({item.downlink_gbps}G to servers, {item.uplink_gbps}G to spines); allowed {plan.max_oversubscription:g}:1",
                hint="add spines or parallel uplinks, or attach fewer servers per leaf",
            )


def check_roce(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    roce = plan.roce
    if roce is None:
        return
    if roce.ecn_enabled and roce.ecn_min_bytes >= roce.ecn_max_bytes:
        yield source.diagnostic(
            ("roce", "ecn", "min"),
            f"ECN minimum threshold ({roce.ecn_min_bytes} bytes) must be below the maximum ({roce.ecn_max_bytes} bytes)",
        )
    if roce.dscp_data == roce.dscp_cnp:
        yield source.diagnostic(
            ("roce", "dscp", "cnp"),
            f"RoCE data and CNP use the same DSCP {roce.dscp_data}",
            hint="CNPs need their own strict-priority class (default DSCP 48)",
        )
    used = {d.platform for d in plan.devices}
    for name, tc in sorted(roce.cnp_traffic_class.items()):
        if name in used and tc == roce.no_drop_priority:
            yield source.diagnostic(
                ("roce", "cnp_traffic_class") if "cnp_traffic_class" in doc.get("roce", {}) else ("roce", "no_drop_priority"),
                f"the CNP traffic class ({tc}) equals the no-drop priority on {name}: CNPs must not share the lossless queue",
            )
    for name, mtu in sorted(roce.mtu.items()):
        limit = platforms()[name].mtu_max
        if name in used and mtu > limit:
            yield source.diagnostic(("roce", "mtu"), f"MTU {mtu} is above the {platforms()[name].title} maximum of {limit}")


def check_asns(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    for device in plan.devices:
        if device.asn > 4294967294:
            yield source.diagnostic(
                _node_path(doc, device.role, device.index, "asn") if device.role == "leaf" else ("bgp", "spine_asn"),
                f"{device.name}: ASN {device.asn} is out of range (1-4294967294)",
            )


def check_speeds(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    # Speeds a model cannot run are refused by the planner, which needs them to number ports.
    return ()


def check_infiniband(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
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
    for message in plan.warnings:
        yield Diagnostic(message, "guid_prefix", source.file, *source.locate(()), severity=Severity.WARNING)


CHECKS: tuple[Check, ...] = (
    check_pools,
    check_duplicates,
    check_ports,
    check_oversubscription,
    check_roce,
    check_asns,
    check_speeds,
    check_infiniband,
)


def check_plan(plan: Plan, doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for check in CHECKS:
        found.extend(check(plan, doc, source))
    return found
