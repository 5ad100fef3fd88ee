"""Pass: the PFC watchdog each platform runs: the planned timers in the shapes its OS accepts.

The inventory asks for a timeout, a recovery time and a polling interval (`roce.pfc_watchdog`).
Operating systems take them in different shapes, which are platform data (`pfc_watchdog` in
platforms/<os>/platform.yml; docs/render.md, "PFC watchdog per platform"):

- `timers: independent`: each timer set on its own, within a range and in steps (EOS: seconds
  with two decimals for timeout and recovery, three for polling);
- `timers: interval-multiples`: one polling interval, and the timeout and the recovery time as
  multiples of it (NX-OS: `watch-dog interval`, `shutdown-multiplier`, `auto-restore multiplier`).

The plan carries what each platform gets (`QosProfile.watchdog`), so the README and the docs
never promise a timer a switch does not run, and `checks/watchdog.py` warns where it differs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabricgen.core.model import WatchdogTimers


def snapped(value: int, limits: Mapping[str, int]) -> int:
    """`value` to the nearest step (halves up), then into [min, max].

    >>> snapped(55, {"min": 10, "max": 60000, "step": 10}), snapped(10, {"min": 100, "max": 1000})
    (60, 100)
    """
    step = int(limits.get("step", 1))
    nearest = (value + step // 2) // step * step
    return max(int(limits["min"]), min(int(limits["max"]), nearest))


def effective_watchdog(timeout_ms: int, recovery_ms: int, polling_ms: int, capability: Mapping[str, Any]) -> WatchdogTimers:
    """The watchdog timers a platform with `capability` runs when asked for these.

    EOS-like (independent timers) keeps 50/1000/10 ms; NX-OS-like polls every 100 ms at least,
    so a 50 ms timeout becomes one interval (100 ms) and 1000 ms of recovery ten intervals:

    >>> independent = {"timers": "independent", "timeout_ms": {"min": 10, "max": 60000, "step": 10},
    ...        "recovery_ms": {"min": 10, "max": 60000, "step": 10}, "polling_ms": {"min": 5, "max": 30000}}
    >>> effective_watchdog(50, 1000, 10, independent)
    WatchdogTimers(timeout_ms=50, recovery_ms=1000, polling_ms=10, timeout_multiplier=0, recovery_multiplier=0)
    >>> multiples = {"timers": "interval-multiples", "polling_ms": {"min": 100, "max": 1000},
    ...         "timeout_multiplier": {"min": 1, "max": 10}, "recovery_multiplier": {"min": 1, "max": 10}}
    >>> effective_watchdog(50, 1000, 10, multiples)
    WatchdogTimers(timeout_ms=100, recovery_ms=1000, polling_ms=100, timeout_multiplier=1, recovery_multiplier=10)
    """
    if not capability:  # a platform that states no limits takes the timers as asked
        return WatchdogTimers(timeout_ms, recovery_ms, polling_ms)
    if capability["timers"] == "independent":
        return WatchdogTimers(
            snapped(timeout_ms, capability["timeout_ms"]),
            snapped(recovery_ms, capability["recovery_ms"]),
            snapped(polling_ms, capability["polling_ms"]),
        )
    interval = snapped(polling_ms, capability["polling_ms"])
    shutdown = snapped(_ratio(timeout_ms, interval), capability["timeout_multiplier"])
    restore = snapped(_ratio(recovery_ms, interval), capability["recovery_multiplier"])
    return WatchdogTimers(interval * shutdown, interval * restore, interval, shutdown, restore)


def _ratio(value: int, interval: int) -> int:
    """`value` in whole intervals, halves up.

    >>> _ratio(1000, 100), _ratio(50, 100), _ratio(149, 100)
    (10, 1, 1)
    """
    return (2 * value + interval) // (2 * interval)
