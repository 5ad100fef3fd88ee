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
from dataclasses import asdict, dataclass, field, fields
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
    cables_moved: list[str] = field(default_factory=list)
    """Cables with one end on another port of the same device (re-patched): `a -- z old -> new`."""
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


IDENTITY = (
    ("loopback", "loopback"),
    ("asn", "ASN"),
    ("management", "management"),
    ("model", "model"),
    ("platform", "platform"),
    ("serial", "serial"),
)
"""Device values the report names one by one (a replaced switch changes only `serial`)."""
REPORTED = {"name", "interfaces", "bgp_neighbors", *(attr for attr, _ in IDENTITY)}


def _device_values(old: Device, new: Device) -> list[str]:
    changes = [
        f"{new.name} {label}: {getattr(old, attr) or '-'} -> {getattr(new, attr) or '-'}"
        for attr, label in IDENTITY
        if getattr(old, attr) != getattr(new, attr)
    ]
    changes += _interface_changes(old, new)
    old_nb = {n.address: n for n in old.bgp_neighbors}
    new_nb = {n.address: n for n in new.bgp_neighbors}
    for address in sorted(set(old_nb) | set(new_nb), key=ip_int):
        was_nb, now_nb = old_nb.get(address), new_nb.get(address)
        if was_nb is None or now_nb is None or was_nb.remote_asn != now_nb.remote_asn:
            was = f"{was_nb.remote_asn}" if was_nb else "-"
            now = f"{now_nb.remote_asn}" if now_nb else "-"
            changes.append(f"{new.name} BGP neighbor {address} remote ASN: {was} -> {now}")
    return changes


def _unexplained(old: Device, new: Device) -> list[str]:
    """Planned fields that changed where neither a listed value nor the config shows it: the
    report never lists a changed device without saying what changed."""
    return [
        f"{new.name} {f.name}: changed" for f in fields(Device) if f.name not in REPORTED and getattr(old, f.name) != getattr(new, f.name)
    ]


def _interface_changes(old: Device, new: Device) -> list[str]:
    """Addresses that moved to another port (a new model's port map: `10.1.0.18/31 moves: Ethernet2/1 ->
    Ethernet1/5`), then ports whose address changed for another reason."""
    old_at = {i.address: i.name for i in old.interfaces if i.address}
    new_at = {i.address: i.name for i in new.interfaces if i.address}
    moved = {a for a in old_at.keys() & new_at.keys() if old_at[a] != new_at[a]}
    prefix = {i.address: i.prefix_length for i in new.interfaces}
    changes = [f"{new.name} {a}/{prefix[a]} moves: {old_at[a]} -> {new_at[a]}" for a in sorted(moved, key=ip_int)]
    old_if = {i.name: i for i in old.interfaces}
    for interface in new.interfaces:
        before = old_if.get(interface.name)
        if before is None or (before.address, before.prefix_length) == (interface.address, interface.prefix_length):
            continue
        if before.address in moved or interface.address in moved:
            continue
        changes.append(
            f"{new.name} {interface.name} address: {before.address or '-'}/{before.prefix_length} -> {interface.address or '-'}/{interface.prefix_length}"
        )
    return changes


def config_diff(old: Mapping[str, str], new: Mapping[str, str]) -> str:
    """Unified diff of a device's config files (path -> text: one `configs/<name>.cfg`, or the
    files of a platform that takes several), file by file."""
    return "".join(_file_diff(path, old.get(path, ""), new.get(path, "")) for path in sorted(set(old) | set(new)))


def _file_diff(path: str, old: str, new: str) -> str:
    """Unified diff of one config file. difflib's default matcher treats lines that repeat in
    every interface block (`mtu 9214`) as junk and can then pair the wrong blocks, showing a
    port's unchanged address as removed and added again; when a diff shows one line both ways,
    it is matched again without that heuristic (slower, so only then)."""
    before, after = old.splitlines(keepends=True), new.splitlines(keepends=True)
    text = _unified(path, before, after, autojunk=True)
    removed = {line[1:] for line in text.splitlines() if line.startswith("-") and not line.startswith("---")}
    if any(line[1:] in removed for line in text.splitlines() if line.startswith("+") and not line.startswith("+++")):
        text = _unified(path, before, after, autojunk=False)
    return text


def _unified(path: str, before: list[str], after: list[str], autojunk: bool) -> str:
    """`difflib.unified_diff` with 3 lines of context, with the matcher's junk heuristic chosen."""
    lines = []
    for group in difflib.SequenceMatcher(None, before, after, autojunk=autojunk).get_grouped_opcodes(3):
        lines.append(f"@@ -{_hunk_range(group[0][1], group[-1][2])} +{_hunk_range(group[0][3], group[-1][4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [f" {line}" for line in before[i1:i2]]
                continue
            lines += [f"-{line}" for line in before[i1:i2]]
            lines += [f"+{line}" for line in after[j1:j2]]
    if not lines:
        return ""
    return f"--- a/{path}\n+++ b/{path}\n" + "".join(lines)


def _hunk_range(start: int, stop: int) -> str:
    """A hunk's line range as unified diffs write it (as difflib does).

    >>> _hunk_range(0, 0), _hunk_range(4, 5), _hunk_range(4, 9)
    ('0,0', '5', '5,5')
    """
    length = stop - start
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"


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
        was, now = old_devices[name], new_devices[name]
        values = _device_values(was, now) if was != now else []
        if old_configs.get(name, {}) != new_configs.get(name, {}):
            result.config_diffs[name] = config_diff(old_configs.get(name, {}), new_configs.get(name, {}))
        elif was != now and not values:
            values = _unexplained(was, now)
        if was != now or name in result.config_diffs:
            changed.add(name)
            result.values_changed.extend(values)
    for name in result.devices_added:
        if name in new_configs:
            result.config_diffs[name] = config_diff({}, new_configs[name])
    for name in result.devices_removed:
        if name in old_configs:
            result.config_diffs[name] = config_diff(old_configs[name], {})
    result.devices_changed = sorted(changed)
    result.policy_changed = policy_changes(old, new)
    result.hosts_changed, result.host_nics_added, result.host_nics_removed = host_changes(old, new)
    _cable_changes(old, new, result)
    return result


def _cable_changes(old: Plan, new: Plan, result: PlanDiff) -> None:
    """Cables added, removed, re-patched (one end on another port of the same device: a new
    model's port map) and changed in speed or length."""
    old_cables = {_cable_key(link): link for link in old.links}
    new_cables = {_cable_key(link): link for link in new.links}
    added, removed = set(new_cables) - set(old_cables), set(old_cables) - set(new_cables)
    by_end = {end: key for key in removed for end in ((key[0], key[1], key[2]), (key[2], key[3], key[0]))}
    for key in sorted(added):
        same_a = by_end.get((key[0], key[1], key[2]))
        same_z = by_end.get((key[2], key[3], key[0]))
        if same_a is not None and same_a in removed:
            result.cables_moved.append(f"{key[0]} {key[1]} -- {key[2]} {same_a[3]} -> {key[3]}")
            removed.discard(same_a)
        elif same_z is not None and same_z in removed:
            result.cables_moved.append(f"{key[0]} {same_z[1]} -> {key[1]} -- {key[2]} {key[3]}")
            removed.discard(same_z)
        else:
            continue
        added.discard(key)
    result.cables_added = [_cable_text(k) for k in sorted(added)]
    result.cables_removed = [_cable_text(k) for k in sorted(removed)]
    for key in sorted(set(old_cables) & set(new_cables)):
        before, after = old_cables[key], new_cables[key]
        if (before.speed, before.length_m) != (after.speed, after.length_m):
            result.cables_changed.append(
                f"{_cable_text(key)}: {before.speed}G {format_length(before.length_m)} -> {after.speed}G {format_length(after.length_m)}"
            )


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
        ("cables re-patched (one end moves)", diff.cables_moved, "~"),
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
