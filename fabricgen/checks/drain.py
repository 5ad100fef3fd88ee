"""Drains the plan may hold (`drain:` and `--drain`, docs/drain.md).

A drained switch carries no transit traffic, so its neighbours' capacity shrinks by the cables
to it. A drain is refused, naming the drained switch that breaks it, when some switch would run
above `oversubscription.during_change` (two of four spines drained leave their leaves at 2:1),
or when a server would lose every leaf it is cabled to unless `drain:` lists that server too
(the job scheduler has drained it). Draining a rail leaf cuts one NIC of each server of its unit:
a job-scheduler decision the tool reports (a warning naming them), not one it makes.
Each rule looks only at the drained switches' own cables and at the servers once.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from difflib import get_close_matches

from fabricgen.core.capacity import Bandwidth, first_breaking, starved
from fabricgen.core.diagnostics import Diagnostic, Severity
from fabricgen.core.model import Plan
from fabricgen.core.units import format_ratio
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.common import warning
from fabricgen.plan.inputs import DrainInput, Inputs

_LISTED = 8
"""Names listed in one message before `and N more`."""


def check_drain(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Unknown names, drains that isolate servers or pass `during_change`, leaves that cut servers."""
    if not inputs.drain:
        return
    names = {device.name for device in plan.devices} | {server.name for server in plan.servers}
    entries = {entry.name: entry for entry in inputs.drain}
    for entry in inputs.drain:
        if entry.name not in names:
            close = get_close_matches(entry.name, names, n=1)
            yield _at(
                source, entry, f"{entry.name} is no switch or server of fabric {plan.name}", f"did you mean {close[0]}?" if close else ""
            )
    if plan.infiniband is not None and set(entries) & names:
        yield source.diagnostic(("drain",), "drain is BGP graceful shutdown: an InfiniBand fabric's routes are the subnet manager's")
        return
    yield from _servers_cut(plan, entries, source)
    yield from _capacity(plan, inputs, entries, source)


def _at(source: SourceMap, entry: DrainInput, message: str, hint: str = "", *, warn: bool = False) -> Diagnostic:
    """A diagnostic at the entry's `drain[i]`, or on `--drain` when the command line named it."""
    if not entry.path:
        return Diagnostic(message, "--drain", hint=hint, severity=Severity.WARNING if warn else Severity.ERROR)
    return warning(source, entry.path, message, hint=hint) if warn else source.diagnostic(entry.path, message, hint=hint)


def _listed(names: Iterable[str]) -> str:
    ordered = sorted(names)
    more = f" and {len(ordered) - _LISTED} more" if len(ordered) > _LISTED else ""
    return ", ".join(ordered[:_LISTED]) + more


def _servers_cut(plan: Plan, entries: Mapping[str, DrainInput], source: SourceMap) -> Iterable[Diagnostic]:
    """Per drained leaf, the servers it cuts off (warning) and those left with no leaf (error)."""
    cut: dict[str, list[str]] = defaultdict(list)
    isolated: dict[str, list[str]] = defaultdict(list)
    for server in plan.servers:
        leaves = sorted({nic.leaf for nic in server.nics})
        drained = [leaf for leaf in leaves if leaf in entries]
        if not drained or server.name in entries:
            continue
        if len(drained) == len(leaves):
            isolated[drained[-1]].append(server.name)
        else:
            for leaf in drained:
                cut[leaf].append(server.name)
    for leaf, servers in sorted(isolated.items()):
        message = (
            f"draining {leaf} isolates {len(servers)} server(s) whose every NIC it or another drained leaf carries: {_listed(servers)}"
        )
        hint = "drain these servers in the job scheduler first, then list them under drain: too"
        yield _at(source, entries[leaf], message, hint)
    for leaf, servers in sorted(cut.items()):
        message = f"draining {leaf} cuts the NICs it carries on {len(servers)} server(s): {_listed(servers)}"
        yield _at(source, entries[leaf], message, "a job-scheduler decision: move the jobs off these servers first", warn=True)


def _capacity(plan: Plan, inputs: Inputs, entries: Mapping[str, DrainInput], source: SourceMap) -> Iterable[Diagnostic]:
    """Switches whose uplinks to drained switches leave them above `during_change` (core/capacity.py)."""
    ratio = inputs.during_change
    if ratio is None:
        return
    below: dict[str, dict[str, int]] = {}
    for device in plan.devices:
        if device.name in entries:
            for interface in device.interfaces:
                if interface.role == "downlink":
                    lower = below.setdefault(device.name, {})
                    lower[interface.peer_device] = lower.get(interface.peer_device, 0) + interface.speed
    bandwidth = {item.device: Bandwidth(item.downlink_gbps, item.uplink_gbps) for item in plan.oversubscription}
    groups: dict[tuple[tuple[str, ...], int, int], list[str]] = defaultdict(list)
    for item in starved(below, below, bandwidth, ratio):
        groups[(item.by, item.downlink, item.left)].append(item.device)
    allowed = format_ratio(ratio)
    for (drained, down, left), devices in sorted(groups.items()):
        now = format_ratio(down / left) if left > 0 else "no uplink"
        breaking = first_breaking([name for name in entries if name in drained], below, bandwidth, ratio) or drained[-1]
        message = (
            f"draining {_listed(drained)} leaves {_listed(devices)} at {now} ({down}G down, {left}G up), above"
            f" oversubscription.during_change {allowed}: {breaking} would break it"
        )
        yield _at(source, entries[breaking], message, "drain fewer switches at once (one batch each), or raise during_change")
