"""`README.md` of a rendered fabric: what a reviewer needs on one page of a pull request.

Topology as a Mermaid flowchart (`diagram.py`: every switch for a small pod, grouped by pod,
plane and rail otherwise). Then tables: devices, address pools with utilisation, oversubscription, RoCE policy, InfiniBand
partitions. Everything comes from the plan; nothing is recomputed here except sums for display.
"""

from __future__ import annotations

import operator
from collections import Counter

from fabricgen.artifacts.common import md_table
from fabricgen.artifacts.diagram import DETAIL_LIMIT, mermaid
from fabricgen.core.model import SM_LINK, Plan, RocePolicy
from fabricgen.core.units import format_ratio
from fabricgen.render.context import RenderContext


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
    return format_ratio(down / up) if up else "no uplinks"


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
    return f"Limit: {format_ratio(plan.max_oversubscription)}.\n\n{per_tier}\n{per_device}"


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
        ("PFC watchdog (as each platform runs it)", _watchdog(roce, used)),
        ("lossless class bandwidth", f"{roce.bandwidth_percent}%"),
        ("MTU", ", ".join(f"{p}: {m}" for p, m in sorted(roce.mtu.items()) if p in used)),
        ("host MTU (smallest switch-to-switch MTU)", plan.host_mtu),
    ]
    return (
        "## RoCE policy\n\nHosts take the same values from `hosts.csv` (applied per server by `hosts/apply.sh`).\n\n"
        + md_table(("setting", "value"), rows)
        + _headroom(plan)
    )


def _watchdog(roce: RocePolicy, used: set[str]) -> str:
    """The watchdog timers each platform in use runs (plan `QosProfile.watchdog`), not the asked
    ones: a platform that cannot poll as often as asked shows what it does."""
    timers = [(p, profile.watchdog) for p, profile in sorted(roce.profiles.items()) if p in used]
    return "; ".join(
        f"{p}: on, timeout {w.timeout_ms} ms, recovery {w.recovery_ms} ms, polling {w.polling_ms} ms" if w else f"{p}: off"
        for p, w in timers
    )


def _headroom(plan: Plan) -> str:
    """PFC headroom per kind of port: one row per distinct (cable kind, speed, length, MTU,
    headroom), with how many switch ports need it, so a 5,000-switch fabric stays a short table."""
    headroom = {
        d.name: ports for d in plan.devices if (ports := {i.name: i.pfc_headroom_bytes for i in d.interfaces if i.pfc_headroom_bytes})
    }
    rows: Counter[tuple[str, int, float, int, int]] = Counter()
    none: dict[str, int] = {}
    for link in plan.links if headroom else ():  # by device, then port: no key tuple built per link end
        a, z = link.a, link.z
        for bytes_ in (headroom.get(a.device, none).get(a.interface), headroom.get(z.device, none).get(z.interface)):
            if bytes_:
                rows[(link.kind, link.speed, link.length_m, link.mtu, bytes_)] += 1
    if not rows:
        return ""
    table = md_table(
        ("cable", "speed (G)", "length (m)", "MTU", "PFC headroom per port (bytes)", "switch ports"),
        ((k, s, f"{ln:g}", m, h, n) for (k, s, ln, m, h), n in sorted(rows.items())),
    )
    return (
        "\n### PFC headroom\n\nIngress buffer each lossless port needs after it sends PAUSE (two maximum frames, the "
        "cable round trip, the peer's response time; docs/render.md).\n\n" + table + _headroom_per_switch(plan)
    )


_NAME = operator.attrgetter("name")


def _headroom_per_switch(plan: Plan) -> str:
    """The no-drop class's largest need per switch (plan `Device.pfc_headroom`), one row per
    distinct (platform, class, bytes), and per platform what its switches get of it from the
    config (platform data `pfc_headroom_buffer`): no buffer the switch does not get is implied."""
    rows: Counter[tuple[str, int, int]] = Counter()
    for device in plan.devices:
        for need in device.pfc_headroom:
            rows[(device.platform, need.traffic_class, need.headroom_bytes)] += 1
    table = md_table(
        ("platform", "no-drop traffic class", "largest need per switch (bytes)", "switches"),
        ((p, tc, b, n) for (p, tc, b), n in sorted(rows.items())),
    )
    used = {platform for platform, _, _ in rows}
    buffers = "\n".join(
        f"- {p.name}: {p.pfc_headroom_buffer or 'no statement'}." for p in sorted(plan.platforms, key=_NAME) if p.name in used
    )
    return f"\nPer switch, the no-drop class needs the largest figure of its ports:\n\n{table}\nWhat the switches get of it:\n\n{buffers}\n"


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
    switch_links = sum(1 for link in plan.links if not link.to_host)
    sm_links = sum(1 for link in plan.links if link.kind == SM_LINK)
    sm_note = f", {sm_links} to subnet-manager hosts" if sm_links else ""
    sections = [
        f"# Fabric {plan.name}\n",
        f"{plan.description}\n" if plan.description else "",
        f"Generated by fabricgen from `{plan.source}`; do not edit. Transport: {plan.transport}. "
        f"{len(plan.devices)} switches, {len(plan.servers)} servers, {len(plan.links)} cables ({switch_links} between switches{sm_note}).\n",
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


__all__ = ["DETAIL_LIMIT", "fabric_readme", "mermaid"]
