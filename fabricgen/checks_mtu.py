"""MTU along every path (registered in `checks.CHECKS`).

A frame larger than the MTU of a port it crosses is dropped when it carries DF (RoCEv2 always
does), so the plan's MTUs must agree: both ends of a cable run the same MTU, no cable runs more
than either platform accepts, and servers send nothing larger than the smallest switch-to-switch
cable they may cross. One pass over the interfaces and one over the links.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.diagnostics import Diagnostic
from fabricgen.loader import SourceMap
from fabricgen.model import Plan
from fabricgen.plan.inputs import Inputs

_LISTED = 5
"""Mismatched cables listed by name; the rest are counted."""


def check_mtu(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Both ends of every cable at the same MTU, within both platforms' maximum, and the host MTU
    at most the smallest switch-to-switch MTU. Reported at `roce.mtu`, the key that sets it."""
    if plan.roce is None:
        return
    mtu_of = {(d.name, i.name): i.mtu for d in plan.devices for i in d.interfaces}
    limit = {d.name: p.mtu_max for d in plan.devices for p in plan.platforms if p.name == d.platform}
    mismatched: list[str] = []
    for link in plan.links:
        ends = [mtu_of.get((e.device, e.interface)) for e in (link.a, link.z)]
        ends = [plan.host_mtu if m is None and link.kind == "server-leaf" else m for m in ends]
        maxima = [limit.get(e.device, plan.host_mtu) for e in (link.a, link.z)]
        if ends[0] != ends[1] or any(m is not None and m > cap for m, cap in zip(ends, maxima, strict=True)):
            mismatched.append(f"{link.a.device} {link.a.interface} ({ends[0]}) - {link.z.device} {link.z.interface} ({ends[1]})")
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
