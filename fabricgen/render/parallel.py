"""Fan rendering out over processes (`fabricgen render -j N`): `run_each`, the one way.

Workers are forked, so they share the parent's plan and its already compiled templates
without pickling either. `run_each` runs units in this process and N - 1 workers that each
take the next unit left; results come back in unit order, so the output does not depend on N.
`render` (fabricgen.render.stream) keeps the results small: each unit writes its own files.
`producers.render_files` gets the rendered text back, except from the units it keeps in this process
(`local`: the plan fragments, too large to send back cheaply). Where fork is unavailable the
work runs in this process (same output, one core).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from multiprocessing.context import ForkContext

T = TypeVar("T")


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


_SHARED: tuple[Sequence[Callable[[], Any]], Any] | None = None
"""The units of `run_each` and the shared counter of the next unit to take (inherited by fork)."""


def run_each(units: Sequence[Callable[[], T]], jobs: int, starting: Callable[[int], None] | None = None, *, local: int = 0) -> list[T]:
    """Every unit's result, in unit order, from `jobs` processes: this one and `jobs - 1` forked
    workers, each taking the next unit nobody has taken yet (a counter in shared memory), so
    no process waits while work is left and a slow unit holds up nobody. Results travel back
    pickled, except those of the first `local` units, which this process runs itself before it
    takes any other (their results are too large to send back cheaply). `starting(index)` is
    called in this process before each unit it runs (a progress bar). If a unit fails, no
    process takes another one, and the first failure is raised.

    >>> run_each([lambda: 1, lambda: 2], jobs=1)
    [1, 2]
    """
    global _SHARED
    context = None if jobs <= 1 or len(units) <= max(local, 1) else _fork()
    if context is None:
        return [result for _index, result in _drain_in_order(units, iter(range(len(units))), starting)]
    counter = context.Value("q", local)
    _SHARED = (units, counter)
    workers = min(jobs - 1, len(units) - max(local, 1))
    try:
        with context.Pool(workers) as pool:
            pending = pool.map_async(_drain_shared, range(workers), chunksize=1)
            done = _drain_in_order(units, _here(local, counter, len(units)), starting, counter)
            for part in pending.get():
                done += part
            pool.close()
            pool.join()
    finally:
        _SHARED = None
    return [result for _index, result in sorted(done, key=lambda pair: pair[0])]


def _here(local: int, counter: Any, count: int) -> Iterator[int]:
    """The indexes this process runs: its `local` units first, then its share of the others."""
    yield from range(local)
    yield from _taken(counter, count)


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
