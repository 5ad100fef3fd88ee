"""Pass: the InfiniBand part of the plan: GUIDs, subnet managers, partitions and QoS.

Runs after the devices are assembled. GUIDs come from pins (`spines.nodes[].guid`,
`subnet_managers[].guid`, the `guids:` section written by `fabricgen ib import-guids`) or are placeholders derived from
`guid_prefix` and the node's (kind, index), so they never move when the fabric grows.
Node and port GUIDs are kept apart: a pinned port GUID is never derived from a node GUID.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from typing import Any

from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.loader import SourceMap
from fabricgen.model import Device, InfinibandPlan, NodeName, Partition, Server, SubnetManager
from fabricgen.plan.guids import KIND_SM, placeholder_guid

MTU_CODES = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
"""IBTA MTU codes (include/iba/ib_types.h)."""
RATE_CODES = {10: 3, 40: 7, 56: 12, 100: 16, 200: 17, 400: 21}
"""IBTA rate codes in Gb/s (include/iba/ib_types.h)."""
MAX_OP_VLS = {1: 1, 2: 2, 4: 3, 8: 4}
"""OpenSM's max_op_vls is an encoding: 1 = VL0, 2 = VL0-1, 3 = VL0-3, 4 = VL0-7."""


def first_free_port(leaf: Device, taken: set[int]) -> int:
    """The lowest port of `leaf` no server, uplink or earlier SM host uses; one past the last
    port when none is free (the checks then say the leaf is full).

    Counting from the planned interfaces, not from servers.per_leaf x ports_per_server: on a
    rail-optimised fabric a leaf carries one port per server, whatever each server's NIC count.
    """
    used = {i.port for i in leaf.interfaces} | taken
    return next((port for port in range(1, leaf.ports_total + 1) if port not in used), leaf.ports_total + 1)


def pin_switch_guids(devices: tuple[Device, ...], doc: dict[str, Any]) -> tuple[Device, ...]:
    """Apply the `guids:` section to switches without a node pin."""
    pins = doc.get("guids", {})
    if not pins:
        return devices
    return tuple(
        dataclasses.replace(d, guid=pins[d.name]["node"].lower(), guid_is_placeholder=False)
        if d.guid_is_placeholder and d.name in pins
        else d
        for d in devices
    )


def build_infiniband(
    doc: dict[str, Any], devices: tuple[Device, ...], servers: list[Server], source: SourceMap
) -> tuple[InfinibandPlan, list[str]]:
    """The InfinibandPlan and its warnings; FabricError for references that resolve to nothing."""
    problems: list[Diagnostic] = []
    by_name = {s.name: s for s in servers}
    sms = _subnet_managers(doc, by_name, [d for d in devices if d.role == "leaf"], source, problems)
    partitions = _partitions(doc, by_name, source, problems)
    if problems:
        raise FabricError(problems)
    prefix = doc["guid_prefix"]
    pins = doc.get("guids", {})
    qos = doc.get("qos", {})
    max_vls = qos.get("max_vls", 8)
    opensm = doc.get("opensm", {})
    default = doc.get("default_partition", {})
    node_names = [NodeName(d.guid, d.name) for d in devices]
    node_names += [NodeName(s.node_guid, s.name) for s in servers]
    node_names += [NodeName(sm.node_guid, sm.host) for sm in sms if not sm.server]
    plan = InfinibandPlan(
        subnet_managers=tuple(sms),
        routing_engine=doc.get("routing", {}).get("engine", "ftree"),
        lmc=doc.get("routing", {}).get("lmc", 0),
        partitions=tuple(partitions),
        qos_enabled=qos.get("enabled", False),
        qos_max_vls=max_vls,
        qos_sl2vl=tuple(qos.get("sl2vl") or [sl % max_vls for sl in range(16)]),
        # An empty high-priority table (every weight 0): OpenSM's built-in "0:4" would serve VL0,
        # the default traffic, before every tenant VL in the low table (opensm(8), QOS CONFIGURATION).
        qos_vlarb_high=qos.get("vlarb_high") or ",".join(f"{vl}:0" for vl in range(max_vls)),
        qos_vlarb_low=qos.get("vlarb_low") or ",".join(f"{vl}:64" for vl in range(max_vls)),
        guid_prefix=prefix,
        no_fallback=doc.get("routing", {}).get("no_fallback", False),
        qos_high_limit=qos.get("high_limit", 0),
        max_op_vls=MAX_OP_VLS[max_vls],
        default_membership=default.get("membership") or ("limited" if partitions else "full"),
        default_ipoib=default.get("ipoib", True),
        root_guids=tuple(d.guid for d in devices if d.role == "spine"),
        cn_guids=tuple(n.port_guid for s in servers for n in s.nics),
        node_names=tuple(node_names),
        placeholder_hosts=tuple(
            [s.name for s in servers if s.name not in pins] + [sm.host for sm in sms if sm.guid_is_placeholder and not sm.server]
        ),
        config_dir=opensm.get("config_dir", "/etc/opensm").rstrip("/") or "/",
        log_dir=opensm.get("log_dir", "/var/log").rstrip("/") or "/",
        log_flags=opensm.get("log_flags", 3),
        sweep_interval=opensm.get("sweep_interval", 10),
        sminfo_polling_timeout=opensm.get("sminfo_polling_timeout", 10000),
        polling_retry_number=opensm.get("polling_retry_number", 4),
        **_vendor_features(opensm),
    )
    return plan, _placeholder_warnings(devices, servers, sms, pins, prefix)


def _vendor_features(opensm: dict[str, Any]) -> dict[str, Any]:
    """Congestion control (rendered for upstream OpenSM), SHARP and adaptive routing (intent only)."""
    cc = opensm.get("congestion_control", {})
    ar = opensm.get("adaptive_routing", {})
    return {
        "congestion_control": cc.get("enabled", False),
        "cc_threshold": cc.get("threshold", 0),
        "cc_marking_rate": cc.get("marking_rate", 0),
        "sharp_enabled": opensm.get("sharp", {}).get("enabled", False),
        "adaptive_routing_engine": ar.get("engine", "ar_updn") if ar.get("enabled", False) else "",
    }


def _subnet_managers(
    doc: dict[str, Any], by_name: dict[str, Server], leaves: list[Device], source: SourceMap, problems: list[Diagnostic]
) -> list[SubnetManager]:
    """Where each OpenSM runs: on a planned server's HCA, or on a dedicated host cabled to a
    leaf (alternately the first and the last leaf unless `leaf:` is given) on its first free port."""
    prefix, pins = doc["guid_prefix"], doc.get("guids", {})
    leaf_names = {d.name for d in leaves}
    sms: list[SubnetManager] = []
    taken: dict[str, set[int]] = {}
    dedicated = 0
    for position, sm in enumerate(doc.get("subnet_managers") or [{"host": f"{doc['fabric']['name']}-sm1"}]):
        host, priority = sm["host"], sm.get("priority", 15)
        server = by_name.get(host)
        if server is not None:
            port_guid = sm.get("guid", server.nics[0].port_guid).lower()
            if port_guid not in {n.port_guid for n in server.nics}:
                problems.append(
                    source.diagnostic(("subnet_managers", position, "guid"), f"{port_guid} is not a port GUID of server {host}'s HCA")
                )
            sms.append(SubnetManager(host, priority, port_guid, server.node_guid, host not in pins, host, server.leaf, 0))
            continue
        dedicated += 1
        if not leaves:
            problems.append(source.diagnostic(("subnet_managers", position), f"no leaf to cable subnet manager {host} to"))
            continue
        leaf = sm.get("leaf") or (leaves[0].name if dedicated % 2 else leaves[-1].name)
        if leaf not in leaf_names:
            problems.append(source.diagnostic(("subnet_managers", position, "leaf"), f"unknown leaf '{leaf}' for subnet manager {host}"))
            continue
        port = sm.get("port") or first_free_port(next(d for d in leaves if d.name == leaf), taken.get(leaf, set()))
        taken.setdefault(leaf, set()).add(port)
        pin = pins.get(host, {})
        node_guid = (sm.get("node_guid") or pin.get("node") or placeholder_guid(prefix, KIND_SM, dedicated)).lower()
        pinned_ports = pin.get("ports", [])
        port_guid = (sm.get("guid") or (pinned_ports[0] if pinned_ports else "") or f"0x{int(node_guid, 16) + 1:016x}").lower()
        placeholder = not (sm.get("node_guid") or pin or sm.get("guid"))
        sms.append(SubnetManager(host, priority, port_guid, node_guid, placeholder, "", leaf, port))
    return sms


def _partitions(doc: dict[str, Any], by_name: dict[str, Server], source: SourceMap, problems: list[Diagnostic]) -> list[Partition]:
    """Tenant partitions with their member patterns resolved to servers and port GUIDs."""
    partitions = []
    names = list(by_name)
    for position, part in enumerate(doc.get("partitions", [])):
        hosts: dict[str, None] = {}
        for m_pos, pattern in enumerate(part["members"]):
            matched = [pattern] if pattern in by_name else fnmatch.filter(names, pattern)
            if not matched:
                problems.append(
                    source.diagnostic(
                        ("partitions", position, "members", m_pos), f"'{pattern}' matches no server of the plan", hint="e.g. ib1-gpu01*"
                    )
                )
            hosts.update(dict.fromkeys(matched))
        member_servers = [by_name[h] for h in hosts]
        partitions.append(
            Partition(
                part["name"],
                part["pkey"],
                part.get("membership", "full"),
                part.get("ipoib", False),
                part.get("mtu", 4096),
                part.get("rate", 0),
                part.get("sl", 0),
                tuple(part["members"]),
                tuple(sorted(hosts)),
                tuple(sorted(n.port_guid for s in member_servers for n in s.nics)),
                MTU_CODES[part.get("mtu", 4096)],
                RATE_CODES.get(part.get("rate", 0), 0),
            )
        )
    return partitions


def _placeholder_warnings(
    devices: tuple[Device, ...], servers: list[Server], sms: list[SubnetManager], pins: dict[str, Any], prefix: str
) -> list[str]:
    warnings = []
    counts = (
        ("switch", sum(1 for d in devices if d.guid_is_placeholder)),
        ("server HCA", sum(1 for s in servers if s.name not in pins)),
        ("subnet manager HCA", sum(1 for sm in sms if sm.guid_is_placeholder and not sm.server)),
    )
    found = [f"{n} {what}" for what, n in counts if n]
    if found:
        warnings.append(
            f"GUIDs of {', '.join(found)} node(s) are placeholders derived from guid_prefix {prefix}; "
            "import the real ones (ibnetdiscover > fabric.ibnet; fabricgen ib import-guids INVENTORY fabric.ibnet) before a change window"
        )
    return warnings
