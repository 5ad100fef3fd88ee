"""How far a fabric can grow: per address pool and per switch tier, in growth units (a leaf, a
scalable unit of rail leaves, or a pod), and the pool sizes a growth target needs.

Allocation derives every address and port from a device's index, so each pool and each
switch's port use grows by the same amount per unit. Rather than repeat the allocation rules
here (they belong to the planner), the planner itself is asked: two small plans of the same
inventory with one and two units (pins left out) give the cost of a unit; today's plan gives
what is used. The small plans cost little at any fabric size.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from fabricgen.core.diagnostics import FabricError
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.build import build_plan
from fabricgen.plan.inputs import Inputs


@dataclass(frozen=True, slots=True)
class Dimension:
    """One way to grow: what a unit is, how many there are, and what one costs."""

    unit: str
    """`leaf`, `unit of 8 rail leaves`, `pod`, or `leaf per pod`."""
    units: str
    """The plural: `leaves`, `units of 8 rail leaves`, `pods`, `leaves per pod`."""
    key: str
    """The inventory key that counts units (`leaves.count`, `pods.count`)."""
    today: int
    leaves: int
    """Leaves per unit."""
    gpus: int
    """GPU (NIC) ports per unit."""
    pool_stride: dict[str, int]
    """Addresses per unit, by pool key."""
    port_stride: dict[str, tuple[int, int]]
    """By tier: (ports per unit on its busiest switch, free ports on that switch today)."""
    key_today: int
    """The value of `key` today: 16 leaves are 2 units of 8 rail leaves."""

    def heading(self) -> str:
        """`leaf (leaves.count, today 4)`, or, where the key does not count units,
        `unit of 8 rail leaves (leaves.count 16: today 2 units of 8 rail leaves)`.

        >>> Dimension("leaf", "leaves", "leaves.count", 4, 1, 8, {}, {}, 4).heading()
        'leaf (leaves.count, today 4)'
        >>> Dimension("unit of 8 rail leaves", "units of 8 rail leaves", "leaves.count", 2, 8, 256, {}, {}, 16).heading()
        'unit of 8 rail leaves (leaves.count 16: today 2 units of 8 rail leaves)'
        """
        if self.key_today == self.today:
            return f"{self.unit} ({self.key}, today {self.today})"
        return f"{self.unit} ({self.key} {self.key_today}: today {self.today} {self.unit if self.today == 1 else self.units})"


@dataclass(frozen=True, slots=True)
class Limit:
    what: str
    per_unit: str
    holds: int


def _role_title(role: str) -> str:
    return {"superspine": "super-spine"}.get(role, role)


def _small(inputs: Inputs, counts: dict[str, int]) -> Inputs:
    """The inventory with tier counts replaced and pinned nodes left out (pins do not scale)."""
    leaves = replace(inputs.leaves, count=counts.get("leaves.count", inputs.leaves.count), nodes=())
    superspines = replace(inputs.superspines, nodes=()) if inputs.superspines else None
    return replace(
        inputs,
        source=SourceMap("growth"),
        spines=replace(inputs.spines, nodes=()),
        leaves=leaves,
        superspines=superspines,
        pods=counts.get("pods.count", inputs.pods),
    )


def _dimension(plan: Plan, inputs: Inputs, unit: tuple[str, str], key: str, today: tuple[int, int], base: dict[str, int]) -> Dimension:
    """Plans with one and two units along `key` (others as in `base`): the cost of a unit.
    `today`: (units today, the value of `key` today)."""
    one = build_plan(_small(inputs, {**base, key: base.get(key, 1)}))
    two = build_plan(_small(inputs, {**base, key: 2 * base.get(key, 1)}))
    needed_one = {p.key: p.needed for p in one.pools}
    pool_stride = {p.key: p.needed - needed_one.get(p.key, 0) for p in two.pools}
    used_one = {d.name: d.ports_used for d in one.devices}
    now = {d.name: d for d in plan.devices}
    port_stride: dict[str, tuple[int, int]] = {}
    for device in two.devices:
        grew = device.ports_used - used_one.get(device.name, device.ports_used)
        current = now.get(device.name)
        if grew <= 0 or current is None:
            continue
        free = current.ports_total - current.ports_used
        role = device.role
        if role not in port_stride or free // grew < port_stride[role][1] // port_stride[role][0]:
            port_stride[role] = (grew, free)
    return Dimension(
        unit=unit[0],
        units=unit[1],
        key=key,
        today=today[0],
        key_today=today[1],
        leaves=sum(1 for d in two.devices if d.role == "leaf") - sum(1 for d in one.devices if d.role == "leaf"),
        gpus=sum(len(s.nics) for s in two.servers) - sum(len(s.nics) for s in one.servers),
        pool_stride=pool_stride,
        port_stride=port_stride,
    )


def dimensions(plan: Plan, inputs: Inputs) -> list[Dimension]:
    """The ways this fabric grows (pods and leaves per pod, or leaves); [] when it cannot be
    worked out (an explicit `nodes` list without a count, InfiniBand)."""
    if plan.transport != "roce":
        return []
    servers = inputs.servers
    step = (servers.rails or servers.ports_per_server or 1) if servers.attachment == "rail" else 1
    leaf_unit = (f"unit of {step} rail leaves", f"units of {step} rail leaves") if step > 1 else ("leaf", "leaves")
    leaves_count, pods = inputs.leaves.count, inputs.pods
    try:
        if pods > 0:
            return [
                _dimension(plan, inputs, ("pod", "pods"), "pods.count", (pods, pods), {"pods.count": 1}),
                _dimension(
                    plan,
                    inputs,
                    (f"{leaf_unit[0]} per pod", f"{leaf_unit[1]} per pod"),
                    "leaves.count",
                    (leaves_count // step, leaves_count),
                    {"pods.count": 1, "leaves.count": step},
                ),
            ]
        if leaves_count == 0:
            return []
        return [_dimension(plan, inputs, leaf_unit, "leaves.count", (leaves_count // step, leaves_count), {"leaves.count": step})]
    except FabricError:
        return []


def limits(plan: Plan, dimension: Dimension) -> list[Limit]:
    """What stops growth along `dimension`: each pool and each tier's ports, in units."""
    found = []
    for pool in plan.pools:
        stride = dimension.pool_stride.get(pool.key, 0)
        if stride > 0:
            holds = dimension.today + (pool.capacity - pool.needed) // stride
            found.append(Limit(f"{pool.key} {pool.prefix}", f"{stride} addresses", holds))
    for role, (grew, free) in sorted(dimension.port_stride.items()):
        found.append(Limit(f"{_role_title(role)} ports", f"{grew} ports", dimension.today + free // grew))
    return found


_TARGET = re.compile(r"^\s*([0-9]+)\s*(leaf|leaves|gpus?|pods?)?\s*$", re.IGNORECASE)


def parse_target(text: str) -> tuple[int, str]:
    """`12 leaves`, `8192gpus`, `16 pods` -> (12, 'leaves'), ...; a bare number counts leaves.

    >>> parse_target("8192 GPUs")
    (8192, 'gpus')
    >>> parse_target("12")
    (12, 'leaves')
    """
    match = _TARGET.match(text)
    if match is None:
        raise ValueError(f"{text!r}: write a target like '12 leaves', '8192 gpus' or '16 pods'")
    unit = (match.group(2) or "leaves").lower()
    unit = "leaves" if unit.startswith("lea") else "gpus" if unit.startswith("gpu") else "pods"
    return int(match.group(1)), unit


def units_for(target: int, kind: str, outer: Dimension, inner: Dimension | None) -> int:
    """Units of `outer` (pods, or leaves / rail units) the target needs, at today's pod size."""
    if kind == "pods":
        return target
    per_unit = outer.leaves if kind == "leaves" else outer.gpus
    return math.ceil(target / per_unit) if per_unit else outer.today


def prefix_for(addresses: int) -> int:
    """Longest prefix length holding `addresses`.

    >>> prefix_for(2048), prefix_for(2049)
    (21, 20)
    """
    return max(32 - (max(addresses, 1) - 1).bit_length(), 0)


def sizing(plan: Plan, dimension: Dimension, units: int) -> list[str]:
    """Per pool and tier: what `units` units need, against what there is."""
    lines = []
    for pool in plan.pools:
        stride = dimension.pool_stride.get(pool.key, 0)
        needed = pool.needed + max(units - dimension.today, 0) * stride
        size = prefix_for(needed)
        verdict = "fits" if needed <= pool.capacity else f"too small: use at least a /{size}"
        lines.append(f"{pool.key}: {needed} addresses needed, {pool.prefix} holds {pool.capacity}: {verdict}")
    for role, (grew, free) in sorted(dimension.port_stride.items()):
        room = dimension.today + free // grew
        verdict = "fits" if units <= room else f"short: ports for {room} {dimension.units} (bigger {_role_title(role)}s or another tier)"
        lines.append(f"{_role_title(role)} ports: {grew} per {dimension.unit}: {verdict}")
    return lines
