"""Check the PFC headroom each RoCE port needs against what its switch model holds
(docs/render.md, "PFC headroom").

The planner works out per port how many bytes still arrive after the port sends PAUSE
(`Interface.pfc_headroom_bytes`, from the cable's length, speed and MTU); fabricgen renders no
buffer line (no vendor source read here fixes a headroom command's grammar and units), so a
port runs with its model's default headroom. Vendors state that default in one of two ways, and
the catalog (or the inventory's `models:`) carries it with its source:

- in bytes (`pfc_headroom_bytes`): a port that needs more is refused, one error per model, at
  the key that set the figure;
- as the longest cable the default covers (`pfc_headroom_cable_m`; Cisco's Nexus 9000 QoS
  guide: beyond 100 m a pause buffer must be configured): a port on a longer cable needs more
  than the default holds and is refused, one error per length key (`cabling.length.<kind>` or
  the `cabling.overrides` entry) and model, naming the worst port.

A model without either figure is not compared (the Arista models: no public figure was found).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Link, Model, Plan
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.plan.inputs import Inputs

TIERS = {"leaf": "leaves", "spine": "spines", "superspine": "superspines"}

Port = tuple[int, str, str]
"""(headroom needed in bytes, device, interface) of one RoCE port."""


def check_pfc_headroom(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    if plan.roce is None:
        return
    by_bytes = {model.name: model for model in plan.models if model.pfc_headroom_bytes}
    if by_bytes:
        yield from _beyond_bytes(plan, inputs, source, by_bytes)
    by_length = {model.name: model for model in plan.models if model.pfc_headroom_cable_m}
    if by_length:
        yield from _beyond_length(plan, inputs, source, by_length)


def _beyond_bytes(plan: Plan, inputs: Inputs, source: SourceMap, models: Mapping[str, Model]) -> Iterable[Diagnostic]:
    short: dict[str, list[Port]] = {}
    roles: dict[str, set[str]] = {}
    for device in plan.devices:
        model = models.get(device.model)
        if model is None:
            continue
        for interface in device.interfaces:
            if interface.pfc_headroom_bytes > model.pfc_headroom_bytes:
                short.setdefault(model.name, []).append((interface.pfc_headroom_bytes, device.name, interface.name))
                roles.setdefault(model.name, set()).add(device.role)
    for name, ports in sorted(short.items()):
        model = models[name]
        needed, worst_device, worst_port = max(ports)
        yield source.diagnostic(
            _model_key(name, inputs, roles[name]),
            f"{len(ports)} RoCE port(s) of {name} need more PFC headroom than its {model.pfc_headroom_bytes} bytes "
            f"({model.pfc_headroom_source}): {worst_device} {worst_port} needs {needed} bytes for its cable; "
            "the excess of a paused burst would be dropped from the lossless class",
            hint="shorten those cables, lower roce.mtu, or give the no-drop class more buffer through the "
            "platform's buffer profile and state the new figure with its source",
        )


def _beyond_length(plan: Plan, inputs: Inputs, source: SourceMap, models: Mapping[str, Model]) -> Iterable[Diagnostic]:
    """RoCE ports of a model stated by cable length whose cable is longer than its default covers,
    grouped by the key that set the length. Only cables longer than the shortest stated figure
    are looked at, so a fabric within every limit costs one pass over its cables' lengths."""
    shortest = min(model.pfc_headroom_cable_m for model in models.values())
    long_links = [link for link in plan.links if link.length_m > shortest]
    if not long_links:
        return
    ports = {d.name: (models.get(d.model), {i.name: i for i in d.interfaces if i.roce}) for d in plan.devices}
    overridden = {(o.device, o.interface): (*o.path, "length") for o in inputs.cabling.overrides}
    beyond: dict[tuple[PathKey, str], list[tuple[Port, float]]] = {}
    for link in long_links:
        for end in (link.a, link.z):
            model, roce_ports = ports.get(end.device, (None, {}))
            interface = roce_ports.get(end.interface)
            if model is None or interface is None or link.length_m <= model.pfc_headroom_cable_m:
                continue
            key = _length_key(link, overridden)
            beyond.setdefault((key, model.name), []).append(((interface.pfc_headroom_bytes, end.device, end.interface), link.length_m))
    for (key, name), found in sorted(beyond.items()):
        model = models[name]
        (needed, worst_device, worst_port), length = max(found)
        yield source.diagnostic(
            key,
            f"{len(found)} RoCE port(s) of {name} are on cables longer than the {model.pfc_headroom_cable_m:g} m its default "
            f"no-drop buffer covers ({model.pfc_headroom_source}): {worst_device} {worst_port} needs {needed} bytes of PFC headroom "
            f"for its {length:g} m cable, and fabricgen renders no pause buffer; the excess of a paused burst would be "
            "dropped from the lossless class",
            hint=f"keep these cables within {model.pfc_headroom_cable_m:g} m, or configure the no-drop class's pause buffer "
            "yourself and state the longer length the switch then covers in models: with its source",
        )


def _length_key(link: Link, overridden: Mapping[tuple[str, str], PathKey]) -> PathKey:
    """The inventory key that set this cable's length: its `cabling.overrides` entry, else the
    default length of its kind."""
    for end in (link.a, link.z):
        path = overridden.get((end.device, end.interface))
        if path is not None:
            return path
    return ("cabling", "length", link.kind)


def _model_key(name: str, inputs: Inputs, roles: set[str]) -> PathKey:
    """Where the figure was set: the inventory's `models.<name>` entry, else the first tier
    (leaves, spines, super-spines) that uses the bundled model."""
    if name in inputs.models:
        return ("models", name, "pfc_headroom_bytes")
    role = min(roles, key=list(TIERS).index)
    return (TIERS[role], "model")
