"""Fan rendering out over processes (`fabricgen render -j N`).

Workers are forked, so they share the parent's plan and its already compiled templates
without pickling either; only the rendered text travels back. Work is split into contiguous
slices and the results are joined in slice order, so the output does not depend on N. Where
fork is unavailable the work runs in this process (same output, one core).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

_TASK: tuple[Callable[[Any, int, int], dict[str, str]], Any] | None = None


def _run_slice(bounds: tuple[int, int]) -> dict[str, str]:
    assert _TASK is not None, "worker forked without a task"
    function, shared = _TASK
    return function(shared, *bounds)


def slices(count: int, jobs: int) -> list[tuple[int, int]]:
    """`count` items in at most `jobs` contiguous, nearly equal slices.

    >>> slices(10, 3)
    [(0, 4), (4, 7), (7, 10)]
    """
    jobs = max(1, min(jobs, count))
    size, extra = divmod(count, jobs)
    bounds, start = [], 0
    for job in range(jobs):
        stop = start + size + (1 if job < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def fan_out(function: Callable[[Any, int, int], dict[str, str]], shared: Any, count: int, jobs: int) -> dict[str, str]:
    """`function(shared, start, stop)` over slices of range(count) in `jobs` processes (this
    one included), merged in slice order."""
    global _TASK
    parts = slices(count, jobs)
    if len(parts) <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return function(shared, 0, count)
    _TASK = (function, shared)
    try:
        with multiprocessing.get_context("fork").Pool(len(parts) - 1) as pool:
            pending = pool.map_async(_run_slice, parts[1:])
            merged = function(shared, *parts[0])
            for result in pending.get():
                merged.update(result)
            pool.close()
            pool.join()
    finally:
        _TASK = None
    return merged


_UNITS: list[Callable[[], dict[str, str]]] = []


def _run_unit(index: int) -> dict[str, str]:
    return _UNITS[index]()


def run_units(units: list[Callable[[], dict[str, str]]], jobs: int, local: list[Callable[[], dict[str, str]]]) -> dict[str, str]:
    """Run `units` in a pool of `jobs` forked workers (handed out one at a time, so a slow unit
    does not hold up the rest) while this process runs `local` (units whose output is too big
    to send back cheaply). Results are merged in list order, `local` first."""
    global _UNITS
    if jobs <= 1 or not units or "fork" not in multiprocessing.get_all_start_methods():
        merged: dict[str, str] = {}
        for unit in (*local, *units):
            merged.update(unit())
        return merged
    _UNITS = list(units)
    try:
        with multiprocessing.get_context("fork").Pool(min(jobs, len(units))) as pool:
            pending = pool.map_async(_run_unit, range(len(units)), chunksize=1)
            merged = {}
            for unit in local:
                merged.update(unit())
            for result in pending.get():
                merged.update(result)
            pool.close()
            pool.join()
    finally:
        _UNITS = []
    return merged
