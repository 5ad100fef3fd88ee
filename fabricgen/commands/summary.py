"""`fabricgen plan`: the plan as a few rich tables a reviewer can read in a terminal."""

from __future__ import annotations

from collections import Counter, defaultdict

from rich.console import Console
from rich.table import Table

from fabricgen.core.model import Plan
from fabricgen.core.units import format_ratio, format_size
from fabricgen.plan.inputs import Inputs


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold")
    for column in columns:
        table.add_column(
            column, justify="right" if column[:1].islower() is False and column in {"count", "used", "free", "cables", "ports"} else "left"
        )
    return table


def print_summary(plan: Plan, console: Console) -> None:
    """The plan at a glance: one table per section, each from the plan only."""
    console.print(f"[bold]{plan.name}[/bold] ({plan.transport}) {plan.description}")
    _print_devices(plan, console)
    _print_cables(plan, console)
    _print_pools(plan, console)
    _print_asns(plan, console)
    _print_oversubscription(plan, console)
    _print_policy(plan, console)


def _print_devices(plan: Plan, console: Console) -> None:
    tiers = _table("Devices", "role", "model", "platform", "count", "ports used", "ports free")
    groups: dict[tuple[str, str, str], list[int]] = defaultdict(list)
    totals: dict[tuple[str, str, str], int] = {}
    for device in plan.devices:
        key = (device.role, device.model, device.platform)
        groups[key].append(device.ports_used)
        totals[key] = device.ports_total
    for (role, model, platform), used in groups.items():
        tiers.add_row(
            role,
            model,
            platform,
            str(len(used)),
            f"{min(used)}-{max(used)}" if min(used) != max(used) else str(used[0]),
            str(totals[(role, model, platform)] - max(used)),
        )
    console.print(tiers)


def _print_cables(plan: Plan, console: Console) -> None:
    cables = _table("Cables", "tier", "speed", "count", "length")
    counts = Counter((link.kind, link.speed, link.length_m) for link in plan.links)
    for (kind, speed, length), count in sorted(counts.items()):
        cables.add_row(kind, f"{speed}G", str(count), f"{length:g} m")
    console.print(cables)

    nics = sum(len(server.nics) for server in plan.servers)
    console.print(f"GPU/NIC endpoints: {len(plan.servers)} servers, {nics} NIC ports")


def _print_pools(plan: Plan, console: Console) -> None:
    if plan.pools:
        pools = _table("Address pools", "pool", "prefix", "used", "reserved", "size", "utilisation")
        for pool in plan.pools:
            pools.add_row(
                pool.name, pool.prefix, str(pool.used), str(pool.needed), str(pool.capacity), f"{100 * pool.needed / pool.capacity:.1f} %"
            )
        console.print(pools)


def _print_asns(plan: Plan, console: Console) -> None:
    if plan.transport == "roce":
        asns = _table("ASNs", "role", "ASN")
        superspine_asns = sorted({d.asn for d in plan.devices if d.role == "superspine"})
        spine_asns = sorted({d.asn for d in plan.devices if d.role == "spine"})
        leaf_asns = sorted(d.asn for d in plan.devices if d.role == "leaf")
        if superspine_asns:
            asns.add_row("superspine", ", ".join(map(str, superspine_asns)))
        asns.add_row("spine", ", ".join(map(str, spine_asns)))
        if leaf_asns:
            asns.add_row("leaf", f"{leaf_asns[0]}-{leaf_asns[-1]} ({len(leaf_asns)})")
        console.print(asns)


def _print_oversubscription(plan: Plan, console: Console) -> None:
    over = _table("Oversubscription", "device", "down", "up", "ratio")
    for item in plan.oversubscription:
        over.add_row(item.device, f"{item.downlink_gbps}G", f"{item.uplink_gbps}G", format_ratio(item.ratio))
    roles = {d.name: d.role for d in plan.devices}
    for role in ("leaf", "spine"):
        tier = [o for o in plan.oversubscription if roles.get(o.device) == role]
        if tier:
            down = sum(o.downlink_gbps for o in tier)
            up = sum(o.uplink_gbps for o in tier)
            over.add_row(f"[bold]{role} tier[/bold]", f"{down}G", f"{up}G", format_ratio(down / up) if up else "-")
    console.print(over)
    console.print(f"allowed: {format_ratio(plan.max_oversubscription)}")


def _print_policy(plan: Plan, console: Console) -> None:
    if plan.roce:
        r = plan.roce
        policy = _table("RoCEv2 policy", "setting", "value")
        policy.add_row("no-drop priority (PFC)", str(r.no_drop_priority))
        policy.add_row("DSCP data / CNP", f"{r.dscp_data} / {r.dscp_cnp} (host ToS {r.host_tos})")
        policy.add_row("CNP traffic class", ", ".join(f"{k} {v}" for k, v in sorted(r.cnp_traffic_class.items())))
        policy.add_row(
            "ECN", f"{format_size(r.ecn_min_bytes)} - {format_size(r.ecn_max_bytes)}, {r.ecn_probability} %" if r.ecn_enabled else "off"
        )
        used = {p.name for p in plan.platforms}
        policy.add_row(
            "PFC watchdog (as run)",
            ", ".join(
                f"{k} {w.timeout_ms} ms timeout, {w.recovery_ms} ms recovery, {w.polling_ms} ms polling" if w else f"{k} off"
                for k, w in ((k, p.watchdog) for k, p in sorted(r.profiles.items()) if k in used)
            ),
        )
        policy.add_row("PFC headroom needed per switch", _headroom_needed(plan))
        policy.add_row("MTU", ", ".join(f"{k} {v}" for k, v in sorted(r.mtu.items())))
        console.print(policy)
    if plan.infiniband:
        ib = plan.infiniband
        console.print(
            f"routing {ib.routing_engine}, lmc {ib.lmc}, {len(ib.partitions)} partition(s), QoS {'on' if ib.qos_enabled else 'off'}"
        )
        for sm in ib.subnet_managers:
            console.print(f"subnet manager {sm.host} priority {sm.priority}")


def _headroom_needed(plan: Plan) -> str:
    """The largest PFC headroom a switch of each platform needs for its no-drop class (plan
    `Device.pfc_headroom`), and that no buffer line carries it (docs/render.md, "PFC headroom")."""
    largest: dict[str, int] = {}
    for device in plan.devices:
        for need in device.pfc_headroom:
            largest[device.platform] = max(largest.get(device.platform, 0), need.headroom_bytes)
    shown = ", ".join(f"{p} up to {b:,} B" for p, b in sorted(largest.items()))
    return f"{shown} (not configured: the switches run their default buffer; README)" if shown else "-"


def print_growth(plan: Plan, inputs: Inputs, console: Console, target: tuple[int, str] | None = None) -> None:
    """Growth headroom per pool and tier (`fabricgen.checks.growth`), and with `target` what it needs."""
    from fabricgen.checks.growth import dimensions, limits, sizing, units_for

    found = dimensions(plan, inputs)
    if not found:
        return
    for dimension in found:
        table = _table(f"Growth headroom: by {dimension.heading()}", "limit", "per unit", "holds")
        for limit in limits(plan, dimension):
            table.add_row(limit.what, limit.per_unit, f"{limit.holds} {dimension.units}")
        console.print(table)
    outer = found[0]
    console.print(
        f"one {outer.unit} adds {outer.leaves} {'leaf' if outer.leaves == 1 else 'leaves'} and {outer.gpus} GPU ports; the smallest 'holds' is the limit"
    )
    if target is None:
        return
    count, kind = target
    units = units_for(count, kind, outer, found[1] if len(found) > 1 else None)
    console.print(f"[bold]to grow to {count} {kind}[/bold]: {units} {outer.units} ({outer.key})")
    for line in sizing(plan, outer, units):
        console.print(f"  {line}", markup=False, soft_wrap=True)
