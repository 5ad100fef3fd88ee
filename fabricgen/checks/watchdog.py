"""Check that every switch runs the PFC watchdog timers the inventory asks for, or say which it
gets instead (docs/render.md, "PFC watchdog per platform").

The planner rounds the asked timers into what each platform's OS accepts (platform data
`pfc_watchdog`, plan `QosProfile.watchdog`); a value a platform in the fabric rounds is
warned at its key, with what that platform runs. A warning, not an error: the watchdog still
works, later or sooner than asked, and the plan, the README and the configs all show the
timers each platform gets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabricgen.core.catalog import platforms
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.common import warning
from fabricgen.plan.inputs import Inputs

TIMERS = {"timeout_ms": "timeout", "recovery_ms": "recovery time", "polling_ms": "polling interval"}


def check_watchdog_timers(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    roce = plan.roce
    if roce is None:
        return
    asked = inputs.roce.pfc_watchdog
    for name in sorted({d.platform for d in plan.devices}):
        profile = roce.profiles.get(name)
        if profile is None or profile.watchdog is None:
            continue
        platform = platforms()[name]
        for timer, label in TIMERS.items():
            want, got = getattr(asked, timer), getattr(profile.watchdog, timer)
            if want != got:
                yield warning(
                    source,
                    ("roce", "pfc_watchdog", timer),
                    f"{platform.title} switches run the PFC watchdog {label} at {got} ms, not the {want} ms asked: "
                    + _accepts(platform.pfc_watchdog),
                    hint="the plan, the fabric README and the configs show what each platform runs; "
                    "choose values every platform of the fabric accepts to run the same timers everywhere",
                )


def _accepts(capability: Mapping[str, Any]) -> str:
    """What a platform's watchdog takes, in words.

    >>> _accepts({"timers": "interval-multiples", "polling_ms": {"min": 100, "max": 1000},
    ...           "timeout_multiplier": {"min": 1, "max": 10}, "recovery_multiplier": {"min": 1, "max": 10}})
    'it polls every 100-1000 ms and sets the timeout as 1-10 and the recovery as 1-10 polling intervals'
    >>> _accepts({"timers": "independent", "timeout_ms": {"min": 10, "max": 60000, "step": 10},
    ...           "recovery_ms": {"min": 10, "max": 60000, "step": 10}, "polling_ms": {"min": 5, "max": 30000}})
    'it takes timeout 10-60000 ms in steps of 10 ms, recovery 10-60000 ms in steps of 10 ms, polling 5-30000 ms in steps of 1 ms'
    """
    if capability["timers"] == "interval-multiples":
        poll, shut, restore = capability["polling_ms"], capability["timeout_multiplier"], capability["recovery_multiplier"]
        return (
            f"it polls every {poll['min']}-{poll['max']} ms and sets the timeout as {shut['min']}-{shut['max']} "
            f"and the recovery as {restore['min']}-{restore['max']} polling intervals"
        )
    ranges = (
        f"{timer.removesuffix('_ms')} {capability[timer]['min']}-{capability[timer]['max']} ms in steps of {capability[timer].get('step', 1)} ms"
        for timer in TIMERS
    )
    return "it takes " + ", ".join(ranges)
