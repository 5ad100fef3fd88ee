"""Pass: expand every tier's `count` and name pattern into devices, with their pins applied.

A tier is `count` devices per group (pod for leaves and spines of a three-tier fabric, plane
for super-spines, one implicit pod for two tiers) plus any pinned `nodes:` beyond the count.
Each device gets its catalog model and platform objects here, once; later passes read them
from the `TierNode` instead of looking names up again. Unknown models, platforms of the wrong
transport and bad name patterns are diagnostics with the position of the key that caused them.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import field

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.model import Model, Platform
from fabricgen.core.records import record
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.plan.inputs import Inputs, NodePin, TierInput
from fabricgen.plan.passes.port_map import port_map_problems


@record
class TierNode:
    """One device of a tier before allocation: the count/pattern expanded, pins applied.
    Empty strings and 0 mean "not pinned": the addressing pass allocates those."""

    role: str
    index: int
    name: str
    model: Model
    platform: Platform
    management: str = ""
    serial: str = ""
    guid: str = ""
    asn: int = 0
    loopback: str = ""
    pod: int = 1
    plane: int = 0
    pin: PathKey = ()
    """Position of the node's entry under `<tier>.nodes` (empty when it has none)."""


@record
class Tiers:
    """The expanded tiers, each in (group, index) order; no super-spines for two tiers."""

    spines: tuple[TierNode, ...]
    leaves: tuple[TierNode, ...]
    superspines: tuple[TierNode, ...] = ()
    pods: int = 0

    @property
    def three_tier(self) -> bool:
        return self.pods > 0

    @property
    def everything(self) -> tuple[TierNode, ...]:
        return (*self.superspines, *self.spines, *self.leaves)


@record
class _Scope:
    """What expanding one tier needs to know besides the tier's own section."""

    fabric: str
    transport: str
    catalog: Mapping[str, Model]
    platforms: Mapping[str, Platform]
    source: SourceMap
    port_maps_checked: set[tuple[str, str]] = field(default_factory=set)
    """(model, platform) pairs whose port map `port_map_problems` found complete."""


def expand_tiers(inputs: Inputs, catalog: Mapping[str, Model], platforms: Mapping[str, Platform]) -> Tiers:
    """Spines, leaves and (three tiers) super-spines, or FabricError with every problem."""
    source = inputs.source
    scope = _Scope(inputs.fabric.name, inputs.fabric.transport, catalog, platforms, source)
    pods = inputs.pods
    pod_ids = tuple(range(1, pods + 1)) if pods else (1,)
    group = "pod" if pods else ""
    problems: list[Diagnostic] = []
    spines = expand_tier(inputs.spines, "spines", "spine", scope, problems, pod_ids, group)
    leaves = expand_tier(inputs.leaves, "leaves", "leaf", scope, problems, pod_ids, group)
    superspines: list[TierNode] = []
    if pods and inputs.superspines is None:
        problems.append(
            source.diagnostic(
                ("pods", "count"),
                "a three-tier fabric (pods.count above 0) needs a `superspines:` section",
                hint="see docs/scale.md; or remove `pods:` for two tiers",
            )
        )
    elif pods and inputs.superspines is not None:
        planes = tuple(sorted({n.index for n in spines}))
        superspines = expand_tier(inputs.superspines, "superspines", "superspine", scope, problems, planes, "plane")
    if problems:
        raise FabricError(problems)
    return Tiers(tuple(spines), tuple(leaves), tuple(superspines), pods)


def expand_tier(
    tier: TierInput,
    key: str,
    role: str,
    scope: _Scope,
    problems: list[Diagnostic],
    groups: tuple[int, ...] = (1,),
    group_key: str = "",
) -> list[TierNode]:
    """Devices of one tier, in (group, index) order. `group_key` is "pod" for leaves and spines
    of a three-tier fabric, "plane" for super-spines, "" for two tiers (one implicit pod)."""
    pins = _pins(tier, key, scope.source, problems, groups, group_key)
    count = tier.count
    if group_key and count and f"{{{group_key}" not in tier.name:
        problems.append(
            scope.source.diagnostic(
                (key, "name"),
                f"{key}.name {tier.name!r} must contain {{{group_key}}} (or {{{group_key}:02d}}): names repeat in every {group_key} otherwise",
                hint=f"for example '{{fabric}}-p{{pod:02d}}-{role}{{index:02d}}'" if group_key == "pod" else "",
            )
        )
        return []
    result = []
    for group, index in sorted({(g, i) for g in groups for i in range(1, count + 1)} | set(pins)):
        pin = pins.get((group, index))
        pin_path: PathKey = pin.path if pin is not None else ()
        hardware, whole_tier = _hardware(tier, key, pin, pin_path, scope, problems)
        if hardware is None:
            if whole_tier or pin is None:
                return []
            continue
        name = _name(tier, key, pin, scope, problems, index, group)
        if name is None:
            return []
        pod, plane = (0, group) if role == "superspine" else (group, index if role == "spine" and group_key else 0)
        result.append(
            TierNode(
                role=role,
                index=index,
                name=name,
                model=hardware[0],
                platform=hardware[1],
                management=(pin and pin.management) or "",
                serial=(pin and pin.serial) or "",
                guid=(pin and pin.guid) or "",
                asn=(pin and pin.asn) or 0,
                loopback=(pin and pin.loopback) or "",
                pod=pod,
                plane=plane,
                pin=pin_path,
            )
        )
    return result


def _name(tier: TierInput, key: str, pin: NodePin | None, scope: _Scope, problems: list[Diagnostic], index: int, group: int) -> str | None:
    """The pinned name or the tier's pattern filled in; None with a diagnostic for a bad pattern."""
    try:
        name: str = (pin and pin.name) or tier.name.format(fabric=scope.fabric, index=index, pod=group, plane=group)
    except (KeyError, ValueError, IndexError, AttributeError) as exc:
        problems.append(scope.source.diagnostic((key, "name"), f"cannot use name pattern {tier.name!r}: {exc}"))
        return None
    return name


def _pins(
    tier: TierInput, key: str, source: SourceMap, problems: list[Diagnostic], groups: tuple[int, ...], group_key: str
) -> dict[tuple[int, int], NodePin]:
    """`nodes:` entries by (group, index), with their position; entries for a group that does
    not exist are diagnostics."""
    pins: dict[tuple[int, int], NodePin] = {}
    for node in tier.nodes:
        pinned_group = _group_of(node, group_key)
        group = pinned_group or 1
        if group not in groups:
            where: PathKey = (*node.path, group_key) if pinned_group is not None else node.path
            span = f"1..{max(groups)}" if groups else "none"
            problems.append(source.diagnostic(where, f"{group_key} {group} does not exist (there are {span})"))
            continue
        pins[(group, node.index)] = node
    return pins


def _group_of(node: NodePin, group_key: str) -> int | None:
    """The pod or plane a `nodes:` entry pins, None when it pins none (one implicit group)."""
    if group_key == "pod":
        return node.pod
    if group_key == "plane":
        return node.plane
    return None


def _hardware(
    tier: TierInput, key: str, pin: NodePin | None, pin_path: PathKey, scope: _Scope, problems: list[Diagnostic]
) -> tuple[tuple[Model, Platform] | None, bool]:
    """The node's catalog model and platform, or None with a diagnostic and whether the
    problem is the tier's (a platform of the wrong transport) rather than this pin's."""
    source = scope.source
    model_name = pin.model if pin is not None and pin.model is not None else tier.model
    model = scope.catalog.get(model_name)
    if model is None:
        where = (*pin_path, "model") if pin is not None and pin.model is not None else (key, "model")
        close = difflib.get_close_matches(model_name, list(scope.catalog), n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else "add it under `models:` or pick one of: " + ", ".join(scope.catalog)
        problems.append(source.diagnostic(where, f"unknown switch model '{model_name}'", hint=hint))
        return None, False
    transport = scope.transport
    platform_name = (pin and pin.platform) or tier.platform or ("infiniband" if transport == "infiniband" else model.platforms[0])
    platform = scope.platforms[platform_name]
    if platform_name not in model.platforms:
        where = (*pin_path, "platform") if pin is not None and pin.platform is not None else (key, "platform")
        problems.append(source.diagnostic(where, f"model {model.name} does not run {platform_name}; it runs {', '.join(model.platforms)}"))
        return None, False
    if platform.transport != transport:
        where = (key, "platform") if tier.platform is not None else (key, "model")
        problems.append(
            source.diagnostic(where, f"platform {platform_name} is not a {transport} platform (fabric.transport is {transport})")
        )
        return None, True
    if platform.port_map_required and _port_map_refused(model, platform, (key, "model"), scope, problems):
        return None, True
    return (model, platform), False


def _port_map_refused(model: Model, platform: Platform, tier_model: PathKey, scope: _Scope, problems: list[Diagnostic]) -> bool:
    """Whether `model`'s port map stops `platform` (plan/passes/port_map.py), each problem at the
    model's own key under `models:` when the inventory defines it, else at the tier's `model`.
    A pair found complete is not checked again for the tier's next node."""
    if (model.name, platform.name) in scope.port_maps_checked:
        return False
    found = port_map_problems(model, platform.name)
    defined = ("models", model.name) in scope.source.values
    for suffix, message, hint in found:
        problems.append(scope.source.diagnostic(("models", model.name, *suffix) if defined else tier_model, message, hint=hint))
    if not found:
        scope.port_maps_checked.add((model.name, platform.name))
    return bool(found)
