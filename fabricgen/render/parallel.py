"""Fan rendering out over processes (`fabricgen render -j N`).

Workers are forked, so they share the parent's plan and its already compiled templates
without pickling either. `run_each` (what `render` uses) runs units in this process and N - 1
workers that each take the next unit left, and only small results travel back: each unit
writes its own files (fabricgen.render.stream). `fan_out` and `run_units` (what
`device_configs` and `producers.render_files` use) send the rendered text back, split into contiguous slices joined in
slice order. Either way the output does not depend on N. Where fork is unavailable the work
runs in this process (same output, one core).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext

T = TypeVar("T")

_TASK: tuple[Callable[[Any, int, int], dict[str, str]], Any] | None = None


def _run_slice(bounds: tuple[int, int]) -> dict[str, str]:
    assert _TASK is not None, "worker forked without a task"
    function, shared = _TASK
    return function(shared, *bounds)


def _fork() -> ForkContext | None:
    """The fork start method, or None where there is none. `multiprocessing` is imported here,
    when more than one process is asked for, not by every `render -j 1` (about 3 ms of its
    start-up, with `signal`, `selectors` and `threading`)."""
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        return None
    return multiprocessing.get_context("fork")


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
    fork = None if len(parts) <= 1 else _fork()
    if fork is None:
        return function(shared, 0, count)
    _TASK = (function, shared)
    try:
        with fork.Pool(len(parts) - 1) as pool:
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
    fork = None if jobs <= 1 or not units else _fork()
    if fork is None:
        merged: dict[str, str] = {}
        for unit in (*local, *units):
            merged.update(unit())
        return merged
    _UNITS = list(units)
    try:
        with fork.Pool(min(jobs, len(units))) as pool:
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


_SHARED: tuple[Sequence[Callable[[], Any]], Any] | None = None
"""The units of `run_each` and the shared counter of the next unit to take (inherited by fork)."""


def run_each(units: Sequence[Callable[[], T]], jobs: int, starting: Callable[[int], None] | None = None) -> list[T]:
    """Every unit's result, in unit order, from `jobs` processes: this one and `jobs - 1` forked
    workers, each taking the next unit nobody has taken yet (a counter in shared memory), so
    no process waits while work is left and a slow unit holds up nobody. Results travel back
    pickled: meant for small ones (a unit writes its output itself). `starting(index)` is
    called in this process before each unit it runs (a progress bar). If a unit fails, no
    process takes another one, and the first failure is raised.

    >>> run_each([lambda: 1, lambda: 2], jobs=1)
    [1, 2]
    """
    global _SHARED
    context = None if jobs <= 1 or len(units) <= 1 else _fork()
    if context is None:
        return [result for _index, result in _drain_in_order(units, iter(range(len(units))), starting)]
    counter = context.Value("q", 0)
    _SHARED = (units, counter)
    workers = min(jobs, len(units)) - 1
    try:
        with context.Pool(workers) as pool:
            pending = pool.map_async(_drain_shared, range(workers), chunksize=1)
            done = _drain_in_order(units, _taken(counter, len(units)), starting, counter)
            for part in pending.get():
                done += part
            pool.close()
            pool.join()
    finally:
        _SHARED = None
    return [result for _index, result in sorted(done, key=lambda pair: pair[0])]


def _taken(counter: Any, count: int) -> Iterator[int]:
    """The indexes this process takes from the shared counter, until none is left."""
    while True:
        with counter.get_lock():
            index = counter.value
            counter.value = index + 1
        if index >= count:
            return
        yield index


def _drain_in_order(
    units: Sequence[Callable[[], T]], indexes: Iterator[int], starting: Callable[[int], None] | None, counter: Any = None
) -> list[tuple[int, T]]:
    done: list[tuple[int, T]] = []
    try:
        for index in indexes:
            if starting is not None:
                starting(index)
            done.append((index, units[index]()))
    except BaseException:
        if counter is not None:
            with counter.get_lock():
                counter.value = len(units)  # the others take nothing more
        raise
    return done


def _drain_shared(_worker: int) -> list[tuple[int, Any]]:
    assert _SHARED is not None, "worker forked without units"
    units, counter = _SHARED
    return _drain_in_order(units, _taken(counter, len(units)), None, counter)
