"""Pass: the speed of each kind of link, checked against every model that must run it.

A speed the inventory leaves out is the model's native speed (the leaf's for leaf links, the
spine's for spine-super-spine links). A model that cannot run a speed at all (no breakout
mode for it in the catalog) makes the plan impossible: a diagnostic at the speed's key,
once per kind of port.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.model import Model
from fabricgen.core.records import record
from fabricgen.core.units import speed_gbps
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.inputs import Inputs
from fabricgen.plan.passes.expand import TierNode, Tiers


@record
class Speeds:
    """Gbit/s of leaf-spine links (`uplink`), server ports (`server`) and spine-super-spine links."""

    uplink: int
    server: int
    superspine: int


def link_speeds(inputs: Inputs, tiers: Tiers, fallback: Model) -> Speeds:
    """The speeds, or FabricError when a model cannot run one (or the server name pattern is bad).
    `fallback` stands in for the leaf model of a fabric without leaves."""
    leaf_model = tiers.leaves[0].model if tiers.leaves else fallback
    spine_model = tiers.spines[0].model if tiers.spines else leaf_model
    source, servers, superspines = inputs.source, inputs.servers, inputs.superspines
    speeds = Speeds(
        uplink=_speed(inputs.uplinks.speed, leaf_model),
        server=_speed(servers.speed, leaf_model),
        superspine=_speed(superspines.speed if superspines else None, spine_model),
    )
    uses = [
        (tiers.leaves, speeds.uplink, "uplinks.speed", "uplinks"),
        (tiers.spines, speeds.uplink, "uplinks.speed", "downlinks to leaves"),
    ]
    if tiers.three_tier:
        uses.append((tiers.spines, speeds.superspine, "superspines.speed", "uplinks to super-spines"))
        uses.append((tiers.superspines, speeds.superspine, "superspines.speed", "downlinks to spines"))
    if servers.per_leaf:
        uses.append((tiers.leaves, speeds.server, "servers.speed", "server ports"))
    problems = [problem for nodes, speed, key, what in uses for problem in _unable(nodes, speed, key, what, source)]
    problems.extend(_check_server_name(servers.name, inputs.fabric.name, source))
    if problems:
        raise FabricError(problems)
    return speeds


def _speed(speed: str | None, model: Model) -> int:
    return speed_gbps(speed) if speed is not None else model.speed


def _unable(nodes: Iterable[TierNode], speed: int, key: str, what: str, source: SourceMap) -> list[Diagnostic]:
    """The first node whose model cannot run `speed` (one diagnostic per kind of port is enough)."""
    for node in nodes:
        if not node.model.logical_ports(speed):
            supported = ", ".join(f"{s}G" for s in node.model.breakouts)
            return [
                source.diagnostic(
                    tuple(key.split(".")), f"{node.model.name} ({node.name}) cannot run {what} at {speed}G; it supports {supported}"
                )
            ]
    return []


def _check_server_name(pattern: str, fabric: str, source: SourceMap) -> list[Diagnostic]:
    """A server name pattern with an unknown placeholder is bad input, not a traceback."""
    try:
        pattern.format(fabric=fabric, leaf="leaf", leaf_index=1, index=1, pod=1, unit=1)
    except (KeyError, ValueError, IndexError, AttributeError) as exc:
        return [
            source.diagnostic(
                ("servers", "name"),
                f"cannot use name pattern {pattern!r}: {exc}",
                hint="placeholders: {fabric}, {leaf}, {leaf_index}, {index}, {pod}, {unit}",
            )
        ]
    return []
