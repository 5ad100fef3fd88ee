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
from dataclasses import dataclass
from typing import Any

from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.loader import PathKey, SourceMap
from fabricgen.model import Model, Platform


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class _Scope:
    """What expanding one tier needs to know besides the tier's own section."""

    fabric: str
    transport: str
    catalog: Mapping[str, Model]
    platforms: Mapping[str, Platform]
    source: SourceMap


def expand_tiers(doc: dict[str, Any], catalog: Mapping[str, Model], platforms: Mapping[str, Platform], source: SourceMap) -> Tiers:
    """Spines, leaves and (three tiers) super-spines, or FabricError with every problem."""
    scope = _Scope(doc["fabric"]["name"], doc["fabric"]["transport"], catalog, platforms, source)
    pods = doc.get("pods", {}).get("count", 0)
    pod_ids = tuple(range(1, pods + 1)) if pods else (1,)
    group = "pod" if pods else ""
    problems: list[Diagnostic] = []
    spines = expand_tier(doc["spines"], "spines", "spine", scope, problems, pod_ids, group)
    leaves = expand_tier(doc["leaves"], "leaves", "leaf", scope, problems, pod_ids, group)
    superspines: list[TierNode] = []
    if pods and "superspines" not in doc:
        problems.append(
            source.diagnostic(
                ("pods", "count"),
                "a three-tier fabric (pods.count above 0) needs a `superspines:` section",
                hint="see docs/scale.md; or remove `pods:` for two tiers",
            )
        )
    elif pods:
        planes = tuple(sorted({n.index for n in spines}))
        superspines = expand_tier(doc["superspines"], "superspines", "superspine", scope, problems, planes, "plane")
    if problems:
        raise FabricError(problems)
    return Tiers(tuple(spines), tuple(leaves), tuple(superspines), pods)


def expand_tier(
    tier: dict[str, Any],
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
    count = tier.get("count", 0)
    if group_key and count and f"{{{group_key}" not in tier["name"]:
        problems.append(
            scope.source.diagnostic(
                (key, "name"),
                f"{key}.name {tier['name']!r} must contain {{{group_key}}} (or {{{group_key}:02d}}): names repeat in every {group_key} otherwise",
                hint=f"for example '{{fabric}}-p{{pod:02d}}-{role}{{index:02d}}'" if group_key == "pod" else "",
            )
        )
        return []
    result = []
    for group, index in sorted({(g, i) for g in groups for i in range(1, count + 1)} | set(pins)):
        position, pin = pins.get((group, index), (None, {}))
        pin_path: PathKey = (key, "nodes", position) if position is not None else ()
        hardware, whole_tier = _hardware(tier, key, pin, pin_path, scope, problems)
        if hardware is None:
            if whole_tier or position is None:
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
                management=pin.get("management", ""),
                serial=pin.get("serial", ""),
                guid=pin.get("guid", ""),
                asn=pin.get("asn", 0),
                loopback=pin.get("loopback", ""),
                pod=pod,
                plane=plane,
                pin=pin_path,
            )
        )
    return result


def _name(
    tier: dict[str, Any], key: str, pin: dict[str, Any], scope: _Scope, problems: list[Diagnostic], index: int, group: int
) -> str | None:
    """The pinned name or the tier's pattern filled in; None with a diagnostic for a bad pattern."""
    try:
        name: str = pin.get("name") or tier["name"].format(fabric=scope.fabric, index=index, pod=group, plane=group)
    except (KeyError, ValueError, IndexError, AttributeError) as exc:
        problems.append(scope.source.diagnostic((key, "name"), f"cannot use name pattern {tier['name']!r}: {exc}"))
        return None
    return name


def _pins(
    tier: dict[str, Any], key: str, source: SourceMap, problems: list[Diagnostic], groups: tuple[int, ...], group_key: str
) -> dict[tuple[int, int], tuple[int, dict[str, Any]]]:
    """`nodes:` entries by (group, index), with their position; entries for a group that does
    not exist are diagnostics."""
    pins: dict[tuple[int, int], tuple[int, dict[str, Any]]] = {}
    for place, node in enumerate(tier.get("nodes", [])):
        group = node.get(group_key, 1) if group_key else 1
        if group not in groups:
            where: PathKey = (key, "nodes", place, group_key) if group_key in node else (key, "nodes", place)
            span = f"1..{max(groups)}" if groups else "none"
            problems.append(source.diagnostic(where, f"{group_key} {group} does not exist (there are {span})"))
            continue
        pins[(group, node["index"])] = (place, node)
    return pins


def _hardware(
    tier: dict[str, Any], key: str, pin: dict[str, Any], pin_path: PathKey, scope: _Scope, problems: list[Diagnostic]
) -> tuple[tuple[Model, Platform] | None, bool]:
    """The node's catalog model and platform, or None with a diagnostic and whether the
    problem is the tier's (a platform of the wrong transport) rather than this pin's."""
    source = scope.source
    model_name = pin.get("model", tier["model"])
    model = scope.catalog.get(model_name)
    if model is None:
        where = (*pin_path, "model") if "model" in pin else (key, "model")
        close = difflib.get_close_matches(model_name, list(scope.catalog), n=1, cutoff=0.5)
        hint = f"did you mean '{close[0]}'?" if close else "add it under `models:` or pick one of: " + ", ".join(scope.catalog)
        problems.append(source.diagnostic(where, f"unknown switch model '{model_name}'", hint=hint))
        return None, False
    transport = scope.transport
    platform_name = pin.get("platform") or tier.get("platform") or ("infiniband" if transport == "infiniband" else model.platforms[0])
    platform = scope.platforms[platform_name]
    if platform_name not in model.platforms:
        where = (*pin_path, "platform") if "platform" in pin else (key, "platform")
        problems.append(source.diagnostic(where, f"model {model.name} does not run {platform_name}; it runs {', '.join(model.platforms)}"))
        return None, False
    if platform.transport != transport:
        where = (key, "platform") if "platform" in tier else (key, "model")
        problems.append(
            source.diagnostic(where, f"platform {platform_name} is not a {transport} platform (fabric.transport is {transport})")
        )
        return None, True
    return (model, platform), False
