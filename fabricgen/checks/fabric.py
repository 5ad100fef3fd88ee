"""Semantic checks on a finished plan. Each check is a small function returning diagnostics
that name the items involved; `checks/registry.py` runs them all so every problem shows at once.

The checks read the plan (and the typed inputs with their source map, to point at the
inventory key to change, e.g. a pinned `leaves.nodes[0].name`); they never modify anything. Each is linear in the size of the fabric.
"""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict
from collections.abc import Iterable

from fabricgen.core.catalog import platforms
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Pin, Plan
from fabricgen.core.units import format_ratio, format_size
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.plan.allocate import ip_int
from fabricgen.plan.inputs import Inputs, TierInput


def _tier_of(inputs: Inputs, role: str) -> TierInput | None:
    return {"spine": inputs.spines, "leaf": inputs.leaves, "superspine": inputs.superspines}[role]


def _node_path(inputs: Inputs, role: str, index: int, field: str) -> PathKey:
    """The `nodes:` entry (and its `field` when pinned) of device `index` of a tier, else the tier."""
    tier = _tier_of(inputs, role)
    if tier is None:
        return ()
    for node in tier.nodes:
        if node.index == index:
            return (*node.path, field) if getattr(node, field) is not None else node.path
    return tier.path


def check_pools(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    for pool in plan.pools:
        if pool.needed > pool.capacity:
            yield source.diagnostic(
                tuple(pool.key.split(".")),
                f"pool {pool.prefix} is too small: the plan needs {pool.needed} addresses (slots for growth included), the pool has {pool.capacity}",
                hint=f"use at least a /{max(32 - (pool.needed - 1).bit_length(), 0)}",
            )
    prefixes = [(p.key, ipaddress.ip_interface(p.prefix)) for p in plan.pools]
    for i, (key_a, net_a) in enumerate(prefixes):
        for key_b, net_b in prefixes[i + 1 :]:
            if net_a.network.overlaps(net_b.network):
                yield source.diagnostic(tuple(key_b.split(".")), f"pool {net_b} overlaps {key_a} ({net_a})")


MAX_LISTED = 10
"""Repeated findings of one kind beyond this are summarised, so the root cause stays visible."""


def _first_path(source: SourceMap, *candidates: PathKey) -> PathKey:
    """The first candidate key path written in the inventory file (the last one otherwise)."""
    for path in candidates:
        if path in source.keys or path in source.values:
            return path
    return candidates[-1]


def _pinned(plan: Plan, field: str) -> dict[str, Pin]:
    """Device name -> the pin of `field` on it (the plan keeps every pin with its position)."""
    return {pin.device: pin for pin in plan.pins if pin.key == field}


def _pinned_addresses(plan: Plan) -> dict[str, Pin]:
    """Pinned loopback and management address -> its pin."""
    by_name = {d.name: d for d in plan.devices}
    pins: dict[str, Pin] = {}
    for pin in plan.pins:
        if pin.key in ("loopback", "management"):
            device = by_name[pin.device]
            pins[device.loopback if pin.key == "loopback" else device.management] = pin
    return pins


def _at(source: SourceMap, where: PathKey | Pin, message: str, hint: str = "") -> Diagnostic:
    """A diagnostic at a key path, or at a pinned value's own position."""
    if isinstance(where, Pin):
        return Diagnostic(message, where.path, source.file, where.line, where.column, hint)
    return source.diagnostic(where, message, hint=hint)


def check_names(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    by_name: dict[str, list[str]] = defaultdict(list)
    where: dict[str, PathKey] = {}
    for device in plan.devices:
        by_name[device.name].append(f"{device.role} {device.index}")
        path = _node_path(inputs, device.role, device.index, "name")
        if device.name not in where or path[-1] == "name":
            where[device.name] = path
    device_clash = any(len(users) > 1 for users in by_name.values())
    for server in [] if device_clash else plan.servers:
        by_name[server.name].append(f"server on {server.leaf}")
        where.setdefault(server.name, ("servers", "name"))
    for name, users in sorted(by_name.items()):
        if len(users) > 1:
            yield source.diagnostic(where[name], f"duplicate name '{name}' ({', '.join(users)})")


def _addresses_unique(plan: Plan) -> bool:
    """Whether no address is assigned twice: one set over every address, the common case at
    scale; the owners of a clash are only worked out when there is one."""
    addresses = [a for d in plan.devices for a in (d.loopback, d.management) if a]
    addresses += [i.address for d in plan.devices for i in d.interfaces if i.address]
    addresses += [n.address for s in plan.servers for n in s.nics if n.address and n.address != n.gateway]
    return len(set(addresses)) == len(addresses)


def check_duplicates(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    if not _addresses_unique(plan):
        yield from _address_clashes(plan, source)
    yield from _asn_clashes(plan, source)


def _address_clashes(plan: Plan, source: SourceMap) -> Iterable[Diagnostic]:
    pins = _pinned_addresses(plan)
    # One dict entry per address; owners are formatted only for the (rare) clashes: at
    # 5,000 switches there are 600,000 addresses and a string each cost seconds.
    first: dict[str, tuple[str, str]] = {}
    clashing: dict[str, list[tuple[str, str]]] = {}

    def own(address: str, entry: tuple[str, str]) -> None:
        seen = first.setdefault(address, entry)
        if seen is not entry:
            clashing.setdefault(address, [seen]).append(entry)

    for device in plan.devices:
        for address, what in ((device.loopback, "loopback"), (device.management, "management")):
            if address:
                own(address, (device.name, what))
        for iface in device.interfaces:
            if iface.address:
                own(iface.address, (device.name, iface.name))
    for server in plan.servers:
        for nic in server.nics:
            if nic.address and nic.address != nic.gateway:
                own(nic.address, (server.name, f"nic{nic.nic}"))
    leaf_of = {server.name: server.leaf for server in plan.servers}
    yield from _clash_findings(clashing, pins, leaf_of, source)


def _asn_clashes(plan: Plan, source: SourceMap) -> Iterable[Diagnostic]:
    asns: dict[int, list[str]] = defaultdict(list)
    for device in plan.devices:
        if device.role == "leaf" and device.asn:
            asns[device.asn].append(device.name)
    spine_asns = {d.asn for d in plan.devices if d.role == "spine"}
    leaf_asn = {d.name: d.asn for d in plan.devices if d.role == "leaf"}
    asn_pins = {leaf_asn[name]: pin for name, pin in _pinned(plan, "asn").items() if name in leaf_asn}
    for asn, users in sorted(asns.items()):
        if len(users) > 1:
            yield _at(
                source,
                asn_pins.get(asn, ("bgp", "leaf_asn")),
                f"ASN {asn} is used by several leaves: {', '.join(sorted(users))}",
                hint="RFC 7938 gives each leaf its own ASN",
            )
        if asn in spine_asns:
            yield source.diagnostic(("bgp", "leaf_asn"), f"ASN {asn} of {', '.join(users)} equals the spine ASN")


def _clash_findings(
    clashing: dict[str, list[tuple[str, str]]], pins: dict[str, Pin], leaf_of: dict[str, str], source: SourceMap
) -> Iterable[Diagnostic]:
    """One finding per root cause: clashes between the same switches (a server counts as its
    leaf) are one overlap of their address blocks, however many addresses it covers. A pinned
    address keeps its own finding, at the pin's line."""
    overlaps: dict[tuple[str, ...], list[tuple[str, list[str]]]] = defaultdict(list)
    for address, users in sorted(clashing.items(), key=lambda item: ip_int(item[0])):
        owners = [f"{who} {what}" for who, what in users]
        if address in pins:
            yield _at(source, pins[address], f"address {address} is used more than once: {', '.join(sorted(owners))}")
            continue
        overlaps[tuple(sorted({leaf_of.get(who, who) for who, _ in users}))].append((address, sorted(owners)))
    for devices, found in sorted(overlaps.items())[:MAX_LISTED]:
        address, owners = found[0]
        if len(found) == 1:
            yield source.diagnostic(("addressing",), f"address {address} is used more than once: {', '.join(owners)}")
            continue
        yield source.diagnostic(
            ("addressing",),
            f"{len(found)} addresses ({address} to {found[-1][0]}) are used by more than one of {', '.join(devices)} "
            f"(and their servers), e.g. {address}: {', '.join(owners)}",
            hint="their address blocks overlap: a pinned address (a leaf's server block is sized for the largest leaf model of the tier)",
        )
    if len(overlaps) > MAX_LISTED:
        yield source.diagnostic(("addressing",), f"... and {len(overlaps) - MAX_LISTED} more sets of devices with overlapping addresses")


def check_ports(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    exhausted: dict[tuple[str, str, int, int], list[str]] = defaultdict(list)
    collisions: dict[tuple[str, int, int, int], list[str]] = defaultdict(list)
    for device in plan.devices:
        highest = max((i.port for i in device.interfaces), default=0)
        if highest > device.ports_total:
            exhausted[(device.role, device.model, highest, device.ports_total)].append(device.name)
        uplink_cages = {i.port for i in device.interfaces if i.port and i.role == "uplink"}
        if uplink_cages and not uplink_cages.isdisjoint(i.port for i in device.interfaces if i.port and i.role != "uplink"):
            servers = sum(1 for i in device.interfaces if i.role.startswith("server"))
            uplinks = sum(1 for i in device.interfaces if i.role == "uplink")
            collisions[(device.model, servers, uplinks, device.ports_total)].append(device.name)
    for (role, model, highest, total), names in sorted(exhausted.items()):
        key = {"leaf": ("servers", "per_leaf"), "superspine": ("pods", "count")}.get(role, ("leaves",))
        yield source.diagnostic(key, f"{_names(names)} ({model}) run out of ports: the plan needs cage {highest}, the model has {total}")
    for (model, servers, uplinks, total), names in sorted(collisions.items()):
        yield source.diagnostic(
            _first_path(source, ("uplinks", "first_port"), ("servers", "per_leaf")),
            f"{_names(names)} ({model}): {servers} server ports and {uplinks} uplinks do not fit {total} cages; server ports run into the uplink cages",
        )


_NUMBERED = re.compile(r"^(.*?)([0-9]+)$")


def _runs(names: list[str]) -> list[str]:
    """Consecutively numbered names as one range: one finding names 13 leaves in one line.

    >>> _runs(["t1-leaf01", "t1-leaf02", "t1-leaf03", "t1-leaf05", "x"])
    ['t1-leaf01..t1-leaf03', 't1-leaf05', 'x']
    """
    runs: list[list[str]] = []
    for name in names:
        match, last = _NUMBERED.match(name), _NUMBERED.match(runs[-1][-1]) if runs else None
        if (
            match
            and last
            and match.group(1) == last.group(1)
            and len(match.group(2)) == len(last.group(2))
            and int(match.group(2)) == int(last.group(2)) + 1
        ):
            runs[-1].append(name)
        else:
            runs.append([name])
    return [run[0] if len(run) == 1 else f"{run[0]}..{run[-1]}" for run in runs]


def _names(names: list[str]) -> str:
    """Every name, consecutively numbered ones as ranges (`leaf01..leaf13`), at most MAX_LISTED pieces."""
    runs = _runs(names)
    return ", ".join(runs[:MAX_LISTED]) + (f" and {len(runs) - MAX_LISTED} more" if len(runs) > MAX_LISTED else "")


def check_oversubscription(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    groups: dict[tuple[int, int, str, str], list[str]] = defaultdict(list)
    spines = {d.name for d in plan.devices if d.role == "spine"}
    for item in plan.oversubscription:
        if item.ratio > plan.max_oversubscription + 1e-9:
            below, above = ("leaves", "super-spines") if item.device in spines else ("servers", "spines")
            groups[(item.downlink_gbps, item.uplink_gbps, below, above)].append(item.device)
    path = _first_path(source, ("oversubscription", "max_ratio"), ("servers", "per_leaf"))
    allowed = format_ratio(plan.max_oversubscription)
    for (down, up, below, above), devices in sorted(groups.items()):
        names, verb = _names(devices), "is" if len(devices) == 1 else "are"
        bandwidth = f"{down}G to {below}, {up}G to {above}"
        if not up:
            message = f"{names} {verb} without uplinks ({bandwidth}): every byte to {above} is blocked; allowed {allowed}"
        elif down > up:
            message = f"{names} {verb} oversubscribed {format_ratio(down / up)} ({bandwidth}); allowed {allowed}"
        else:  # not oversubscribed, but above a limit below 1:1
            message = f"{names} {'has' if len(devices) == 1 else 'have'} downlink:uplink {format_ratio(down / up)} ({bandwidth}), above the allowed {allowed}"
        yield source.diagnostic(path, message, hint="add spines or parallel uplinks, or attach fewer servers per leaf")


def check_roce(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    roce = plan.roce
    if roce is None:
        return
    if roce.ecn_enabled and roce.ecn_min_bytes >= roce.ecn_max_bytes:
        yield source.diagnostic(
            ("roce", "ecn", "min"),
            f"ECN minimum threshold ({format_size(roce.ecn_min_bytes)}) must be below the maximum ({format_size(roce.ecn_max_bytes)})",
        )
    if roce.no_drop_priority == 0:
        yield source.diagnostic(
            ("roce", "no_drop_priority"),
            "priority 0 carries all default traffic; making it no-drop spreads PFC pauses to everything",
            hint="use 3, as NVIDIA, AMD and Cisco examples do",
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
                ("roce", "cnp_traffic_class") if inputs.roce.cnp_traffic_class is not None else ("roce", "no_drop_priority"),
                f"the CNP traffic class ({tc}) equals the no-drop priority on {name}: CNPs must not share the lossless queue",
            )
    for name, mtu in sorted(roce.mtu.items()):
        limit = platforms()[name].mtu_max
        if name in used and mtu > limit:
            yield source.diagnostic(("roce", "mtu"), f"MTU {mtu} is above the {platforms()[name].title} maximum of {limit}")


def check_asns(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    pins = _pinned(plan, "asn")
    for device in plan.devices:
        if device.asn > 4294967294:
            default: PathKey = ("bgp", f"{device.role}_asn")
            yield _at(source, pins.get(device.name, default), f"{device.name}: ASN {device.asn} is out of range (1-4294967294)")
