"""`README.md` of a rendered fabric: what a reviewer needs on one page of a pull request.

Topology as a Mermaid flowchart (renders in GitHub/GitLab views; tiers top to bottom). Small
fabrics show every switch with one edge per switch pair labelled with its bundle; past
`DETAIL_LIMIT` switch pairs the diagram shows tiers as single nodes so it stays readable.
Then tables: devices, address pools with utilisation, oversubscription, RoCE policy, InfiniBand
partitions. Everything comes from the plan; nothing is recomputed here except sums for display.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from fabricgen.artifacts.common import md_table
from fabricgen.context import RenderContext
from fabricgen.model import Plan

DETAIL_LIMIT = 64
"""Most switch-to-switch edges drawn one by one; beyond this the diagram aggregates by tier."""

_ID = re.compile(r"[^A-Za-z0-9_]")


def _node_id(name: str) -> str:
    return "n_" + _ID.sub("_", name)


def _bundle(count: int, speed: int) -> str:
    return f"{count}x{speed}G"


def mermaid(plan: Plan, detail_limit: int = DETAIL_LIMIT) -> str:
    roles = list(dict.fromkeys(d.role for d in plan.devices))
    by_role: dict[str, list[str]] = defaultdict(list)
    role_of: dict[str, str] = {}
    for device in plan.devices:
        by_role[device.role].append(device.name)
        role_of[device.name] = device.role
    pairs: Counter[tuple[str, str, int]] = Counter()
    servers: Counter[tuple[str, int]] = Counter()
    server_names: dict[str, set[str]] = defaultdict(set)
    for link in plan.links:
        if link.a.device in role_of:
            pairs[(link.a.device, link.z.device, link.speed)] += 1
        else:
            servers[(link.z.device, link.speed)] += 1
            server_names[link.z.device].add(link.a.device)
    lines = ["```mermaid", "flowchart TB"]
    if len(pairs) <= detail_limit:
        for role in roles:
            lines.append(f'  subgraph {role}_tier["{role} tier ({len(by_role[role])})"]')
            lines.append("    direction LR")
            lines.extend(f'    {_node_id(name)}["{name}"]' for name in by_role[role])
            lines.append("  end")
        for (a, z, speed), count in sorted(pairs.items()):
            lines.append(f'  {_node_id(z)} ---|"{_bundle(count, speed)}"| {_node_id(a)}')
        for (leaf, speed), count in sorted(servers.items()):
            node = _node_id(leaf) + "_servers"
            lines.append(f'  {node}(["{len(server_names[leaf])} servers"])')
            lines.append(f'  {_node_id(leaf)} ---|"{_bundle(count, speed)}"| {node}')
    else:
        tier_pairs: Counter[tuple[str, str, int]] = Counter()
        for (a, z, speed), count in pairs.items():
            tier_pairs[(role_of[a], role_of[z], speed)] += count
        for role in roles:
            lines.append(f'  {role}_tier["{len(by_role[role])} x {role}"]')
        for (a_role, z_role, speed), count in sorted(tier_pairs.items()):
            lines.append(f'  {z_role}_tier ---|"{_bundle(count, speed)}"| {a_role}_tier')
        tier_servers: Counter[tuple[str, int]] = Counter()
        for (leaf, speed), count in servers.items():
            tier_servers[(role_of[leaf], speed)] += count
        total = len(plan.servers)
        for (role, speed), count in sorted(tier_servers.items()):
            lines.append(f'  servers(["{total} servers"])')
            lines.append(f'  {role}_tier ---|"{_bundle(count, speed)}"| servers')
    lines.append("```")
    return "\n".join(lines) + "\n"


def _devices(plan: Plan) -> str:
    models = {m.name: m for m in plan.models}
    titles = {p.name: p.title for p in plan.platforms}
    if plan.transport == "infiniband":
        return md_table(
            ("device", "role", "model", "platform", "GUID"),
            (
                (
                    d.name,
                    d.role,
                    models[d.model].description,
                    titles[d.platform],
                    d.guid + (" (placeholder)" if d.guid_is_placeholder else ""),
                )
                for d in plan.devices
            ),
        )
    return md_table(
        ("device", "role", "model", "platform", "loopback", "ASN", "management"),
        (
            (
                d.name,
                d.role,
                d.model,
                titles[d.platform],
                d.loopback,
                d.asn,
                f"{d.management}/{d.management_prefix_length}" if d.management else "",
            )
            for d in plan.devices
        ),
    )


def _pools(plan: Plan) -> str:
    return md_table(
        ("pool", "prefix", "addresses used", "addresses reserved", "capacity", "utilisation"),
        ((p.key, p.prefix, p.used, p.needed, p.capacity, f"{100 * p.needed / p.capacity:.1f}%" if p.capacity else "-") for p in plan.pools),
    )


def _ratio(down: int, up: int) -> str:
    return f"{down / up:.2f}:1" if up else "no uplinks"


def _oversubscription(plan: Plan) -> str:
    role_of = {d.name: d.role for d in plan.devices}
    tiers: dict[str, list[int]] = {}
    for o in plan.oversubscription:
        total = tiers.setdefault(role_of.get(o.device, "leaf"), [0, 0])
        total[0] += o.downlink_gbps
        total[1] += o.uplink_gbps
    per_device = md_table(
        ("device", "down (Gbit/s)", "up (Gbit/s)", "ratio"),
        ((o.device, o.downlink_gbps, o.uplink_gbps, _ratio(o.downlink_gbps, o.uplink_gbps)) for o in plan.oversubscription),
    )
    per_tier = md_table(
        ("tier", "down (Gbit/s)", "up (Gbit/s)", "ratio"), ((role, d, u, _ratio(d, u)) for role, (d, u) in sorted(tiers.items()))
    )
    return f"Limit: {plan.max_oversubscription:g}:1.\n\n{per_tier}\n{per_device}"


def _roce(plan: Plan) -> str:
    roce = plan.roce
    if roce is None:
        return ""
    used = {p.name for p in plan.platforms}
    rows = [
        ("lossless (no-drop) priority", roce.no_drop_priority),
        ("RoCE data DSCP", roce.dscp_data),
        ("host ToS (DSCP << 2 | ECT(0))", roce.host_tos),
        ("CNP DSCP", roce.dscp_cnp),
        ("CNP traffic class", ", ".join(f"{p}: {tc}" for p, tc in sorted(roce.cnp_traffic_class.items()) if p in used)),
        ("ECN", f"{'on' if roce.ecn_enabled else 'off'}, {roce.ecn_min_bytes} to {roce.ecn_max_bytes} bytes, max {roce.ecn_probability}%"),
        (
            "PFC watchdog",
            f"on, timeout {roce.watchdog_timeout_ms} ms, recovery {roce.watchdog_recovery_ms} ms, polling {roce.watchdog_polling_ms} ms"
            if roce.pfc_watchdog
            else "off",
        ),
        ("lossless class bandwidth", f"{roce.bandwidth_percent}%"),
        ("MTU", ", ".join(f"{p}: {m}" for p, m in sorted(roce.mtu.items()) if p in used)),
        ("host MTU (smallest switch-to-switch MTU)", plan.host_mtu),
    ]
    return (
        "## RoCE policy\n\nHosts take the same values from `hosts.csv` / `hosts/`.\n\n"
        + md_table(("setting", "value"), rows)
        + _headroom(plan)
    )


def _headroom(plan: Plan) -> str:
    """PFC headroom per kind of port: one row per distinct (cable kind, speed, length, MTU,
    headroom), with how many switch ports need it, so a 5,000-switch fabric stays a short table."""
    kind_of = {(e.device, e.interface): (link.kind, link.speed, link.length_m, link.mtu) for link in plan.links for e in (link.a, link.z)}
    rows: Counter[tuple[str, int, float, int, int]] = Counter()
    for device in plan.devices:
        for interface in device.interfaces:
            if interface.pfc_headroom_bytes and (device.name, interface.name) in kind_of:
                kind, speed, length, mtu = kind_of[(device.name, interface.name)]
                rows[(kind, speed, length, mtu, interface.pfc_headroom_bytes)] += 1
    if not rows:
        return ""
    table = md_table(
        ("cable", "speed (G)", "length (m)", "MTU", "PFC headroom per port (bytes)", "switch ports"),
        ((k, s, f"{ln:g}", m, h, n) for (k, s, ln, m, h), n in sorted(rows.items())),
    )
    return (
        "\n### PFC headroom\n\nIngress buffer each lossless port needs after it sends PAUSE (two maximum frames, the "
        "cable round trip, the peer's response time; docs/render.md). Set it where the platform's buffer profile takes it.\n\n" + table
    )


def _infiniband(plan: Plan) -> str:
    ib = plan.infiniband
    if ib is None:
        return ""
    sms = md_table(("subnet manager", "priority", "GUID"), ((s.host, s.priority, s.port_guid) for s in ib.subnet_managers))
    parts = md_table(
        ("partition", "P_Key", "membership", "IPoIB", "MTU", "rate", "SL", "members"),
        (
            (p.name, f"0x{p.pkey:04x}", p.membership, "yes" if p.ipoib else "no", p.mtu, p.rate or "-", p.sl, ", ".join(p.members))
            for p in ib.partitions
        ),
    )
    return f"## InfiniBand\n\nRouting engine `{ib.routing_engine}`, LMC {ib.lmc}.\n\n{sms}\n### Partitions\n\n{parts}"


def fabric_readme(plan: Plan, context: RenderContext) -> dict[str, str]:
    switch_links = sum(1 for link in plan.links if link.kind != "server-leaf")
    sections = [
        f"# Fabric {plan.name}\n",
        f"{plan.description}\n" if plan.description else "",
        f"Generated by fabricgen from `{plan.source}`; do not edit. Transport: {plan.transport}. "
        f"{len(plan.devices)} switches, {len(plan.servers)} servers, {len(plan.links)} cables ({switch_links} between switches).\n",
        "Also here: [cabling plan](cabling.md) ([NetBox CSV](cabling.csv)), [bill of materials](bom.csv)"
        + (", [host NIC settings](hosts.csv), [containerlab topology](lab/)" if plan.transport == "roce" else "")
        + ".\n",
        "## Topology\n",
        mermaid(plan),
        "## Devices\n",
        _devices(plan),
    ]
    if plan.pools:
        sections += ["## Addressing\n", "`reserved` counts addresses held for growth (up to the highest allocated slot).\n", _pools(plan)]
    if plan.oversubscription:
        sections += ["## Oversubscription\n", _oversubscription(plan)]
    sections += [_roce(plan), _infiniband(plan)]
    if plan.warnings:
        sections += ["## Warnings\n", "".join(f"- {w}\n" for w in plan.warnings)]
    return {"README.md": "\n".join(s for s in sections if s)}
