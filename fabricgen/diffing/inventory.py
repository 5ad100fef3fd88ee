"""`fabricgen diff OLD NEW`: what a change to an inventory does to the fabric.

Compares two plans (and the device configs they render to): devices added, removed and
changed; cables added and removed (a cable is identified by its two ends); loopback, ASN,
management and interface address changes; policy changes by inventory key (`roce.dscp.data:
26 -> 24`, address pools, the oversubscription limit); the host side (hosts.csv: NIC
addresses, gateways, routes, MTU and RoCE settings, grouped by what changed); and a unified
diff of each changed device config. Everything is keyed by name, so the work is linear in the
size of the fabric.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabricgen.configs.devices import config_device, device_configs
from fabricgen.core.model import Device, Link, Plan
from fabricgen.core.units import format_length
from fabricgen.diffing.hostside import host_changes, policy_changes
from fabricgen.plan.allocate import ip_int
from fabricgen.render.context import RenderContext
from fabricgen.render.tidy import tidy

CableKey = tuple[str, str, str, str]


@dataclass(slots=True)
class PlanDiff:
    devices_added: list[str] = field(default_factory=list)
    devices_removed: list[str] = field(default_factory=list)
    devices_changed: list[str] = field(default_factory=list)
    cables_added: list[str] = field(default_factory=list)
    cables_removed: list[str] = field(default_factory=list)
    cables_changed: list[str] = field(default_factory=list)
    values_changed: list[str] = field(default_factory=list)
    policy_changed: list[str] = field(default_factory=list)
    hosts_changed: list[str] = field(default_factory=list)
    """Host-side changes, one line per (hosts.csv column, old value, new value) with its NICs."""
    host_nics_added: list[str] = field(default_factory=list)
    host_nics_removed: list[str] = field(default_factory=list)
    config_diffs: dict[str, str] = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        return any(bool(v) for v in asdict(self).values())

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "differs": self.differs}


def _cable_key(link: Link) -> CableKey:
    return (link.a.device, link.a.interface, link.z.device, link.z.interface)


def _cable_text(key: CableKey) -> str:
    return f"{key[0]} {key[1]} -- {key[2]} {key[3]}"


def _device_values(old: Device, new: Device) -> list[str]:
    changes = [
        f"{new.name} {label}: {getattr(old, attr) or '-'} -> {getattr(new, attr) or '-'}"
        for attr, label in (
            ("loopback", "loopback"),
            ("asn", "ASN"),
            ("management", "management"),
            ("model", "model"),
            ("platform", "platform"),
        )
        if getattr(old, attr) != getattr(new, attr)
    ]
    old_if = {i.name: i for i in old.interfaces}
    for interface in new.interfaces:
        before = old_if.get(interface.name)
        if before is not None and (before.address, before.prefix_length) != (interface.address, interface.prefix_length):
            changes.append(
                f"{new.name} {interface.name} address: {before.address or '-'}/{before.prefix_length} -> {interface.address or '-'}/{interface.prefix_length}"
            )
    old_nb = {n.address: n for n in old.bgp_neighbors}
    new_nb = {n.address: n for n in new.bgp_neighbors}
    for address in sorted(set(old_nb) | set(new_nb), key=ip_int):
        was_nb, now_nb = old_nb.get(address), new_nb.get(address)
        if was_nb is None or now_nb is None or was_nb.remote_asn != now_nb.remote_asn:
            was = f"{was_nb.remote_asn}" if was_nb else "-"
            now = f"{now_nb.remote_asn}" if now_nb else "-"
            changes.append(f"{new.name} BGP neighbor {address} remote ASN: {was} -> {now}")
    return changes


def config_diff(old: Mapping[str, str], new: Mapping[str, str]) -> str:
    """Unified diff of a device's config files (path -> text; one `configs/<name>.cfg`, or the
    files of a platform that takes several), file by file."""
    return "".join(
        "".join(
            difflib.unified_diff(
                old.get(path, "").splitlines(keepends=True), new.get(path, "").splitlines(keepends=True), f"a/{path}", f"b/{path}"
            )
        )
        for path in sorted(set(old) | set(new))
    )


def _configs(plan: Plan, template_dirs: tuple[Path, ...]) -> dict[str, dict[str, str]]:
    """Device name -> its rendered config files (path -> text)."""
    grouped: dict[str, dict[str, str]] = {}
    for path, text in device_configs(plan, RenderContext(template_dirs)).items():
        grouped.setdefault(config_device(path), {})[path] = tidy(text)
    return grouped


def diff_plans(old: Plan, new: Plan, template_dirs: tuple[Path, ...] = ()) -> PlanDiff:
    result = PlanDiff()
    old_devices = {d.name: d for d in old.devices}
    new_devices = {d.name: d for d in new.devices}
    result.devices_added = sorted(set(new_devices) - set(old_devices))
    result.devices_removed = sorted(set(old_devices) - set(new_devices))
    old_configs, new_configs = _configs(old, template_dirs), _configs(new, template_dirs)
    changed = set()
    for name in sorted(set(old_devices) & set(new_devices)):
        if old_devices[name] != new_devices[name]:
            changed.add(name)
            result.values_changed.extend(_device_values(old_devices[name], new_devices[name]))
        if old_configs.get(name, {}) != new_configs.get(name, {}):
            changed.add(name)
            result.config_diffs[name] = config_diff(old_configs.get(name, {}), new_configs.get(name, {}))
    for name in result.devices_added:
        if name in new_configs:
            result.config_diffs[name] = config_diff({}, new_configs[name])
    for name in result.devices_removed:
        if name in old_configs:
            result.config_diffs[name] = config_diff(old_configs[name], {})
    result.devices_changed = sorted(changed)
    result.policy_changed = policy_changes(old, new)
    result.hosts_changed, result.host_nics_added, result.host_nics_removed = host_changes(old, new)
    old_cables = {_cable_key(link): link for link in old.links}
    new_cables = {_cable_key(link): link for link in new.links}
    result.cables_added = [_cable_text(k) for k in sorted(set(new_cables) - set(old_cables))]
    result.cables_removed = [_cable_text(k) for k in sorted(set(old_cables) - set(new_cables))]
    for key in sorted(set(old_cables) & set(new_cables)):
        before, after = old_cables[key], new_cables[key]
        if (before.speed, before.length_m) != (after.speed, after.length_m):
            result.cables_changed.append(
                f"{_cable_text(key)}: {before.speed}G {format_length(before.length_m)} -> {after.speed}G {format_length(after.length_m)}"
            )
    return result


def report(diff: PlanDiff) -> str:
    """The diff as text for a terminal or a pull-request comment."""
    if not diff.differs:
        return "no differences\n"
    lines: list[str] = []
    for title, items, mark in (
        ("devices added", diff.devices_added, "+"),
        ("devices removed", diff.devices_removed, "-"),
        ("devices changed", diff.devices_changed, "~"),
        ("cables added", diff.cables_added, "+"),
        ("cables removed", diff.cables_removed, "-"),
        ("cables changed", diff.cables_changed, "~"),
        ("addresses and ASNs changed", diff.values_changed, "~"),
        ("policy changed", diff.policy_changed, "~"),
        ("host NICs added (hosts.csv)", diff.host_nics_added, "+"),
        ("host NICs removed (hosts.csv)", diff.host_nics_removed, "-"),
        ("host settings changed (hosts.csv)", diff.hosts_changed, "~"),
    ):
        if items:
            lines.append(f"{title} ({len(items)}):")
            lines.extend(f"  {mark} {item}" for item in items)
    text = "\n".join(lines) + "\n"
    for name in sorted(diff.config_diffs):
        text += "\n" + diff.config_diffs[name]
    return text
