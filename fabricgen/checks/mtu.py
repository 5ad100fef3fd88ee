"""MTU along every path (named in `checks/registry.py`).

A frame larger than the MTU of a port it crosses is dropped when it carries DF (RoCEv2 always
does), so the plan's MTUs must agree: both ends of a cable run the same MTU, no cable runs more
than either platform accepts, and servers send nothing larger than the smallest switch-to-switch
cable they may cross. One pass over the interfaces and one over the links.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.inputs import Inputs

_LISTED = 5
"""Mismatched cables listed by name; the rest are counted."""


def check_mtu(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Both ends of every cable at the same MTU, within both platforms' maximum, and the host MTU
    at most the smallest switch-to-switch MTU. Reported at `roce.mtu`, the key that sets it."""
    if plan.roce is None:
        return
    mtu_of = {d.name: {i.name: i.mtu for i in d.interfaces} for d in plan.devices}
    maximum = {p.name: p.mtu_max for p in plan.platforms}
    limit = {d.name: maximum[d.platform] for d in plan.devices if d.platform in maximum}
    host, nothing = plan.host_mtu, dict[str, int]()
    mismatched: list[str] = []
    for link in plan.links:
        a, z = link.a, link.z
        mtu_a, mtu_z = mtu_of.get(a.device, nothing).get(a.interface), mtu_of.get(z.device, nothing).get(z.interface)
        if link.kind == "server-leaf":
            mtu_a, mtu_z = host if mtu_a is None else mtu_a, host if mtu_z is None else mtu_z
        above = (mtu_a is not None and mtu_a > limit.get(a.device, host)) or (mtu_z is not None and mtu_z > limit.get(z.device, host))
        if mtu_a != mtu_z or above:
            mismatched.append(f"{a.device} {a.interface} ({mtu_a}) - {z.device} {z.interface} ({mtu_z})")
    if mismatched:
        shown = ", ".join(mismatched[:_LISTED]) + (f" and {len(mismatched) - _LISTED} more" if len(mismatched) > _LISTED else "")
        yield source.diagnostic(
            ("roce", "mtu"),
            f"{len(mismatched)} cable(s) with different MTUs at their ends or above a platform's maximum: {shown}",
            hint="each cable runs the largest MTU both of its platforms support",
        )
    fabric = [link.mtu for link in plan.links if link.kind != "server-leaf"]
    if fabric and plan.host_mtu > min(fabric):
        yield source.diagnostic(
            ("roce", "mtu"),
            f"host MTU {plan.host_mtu} is above the smallest switch-to-switch MTU {min(fabric)}: "
            "servers' frames of the difference in size are dropped on the way",
        )
