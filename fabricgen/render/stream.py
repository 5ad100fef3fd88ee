"""`fabricgen render`'s write path: every render unit stages its own files.

`render_files` returns one mapping of every file (543 MB of text at 5,120 switches) and
`write_tree` then compares and stages it; with `-j N` the workers' texts are pickled back to
the parent first. Here each unit (`producers.render_units`) is rendered, compared with the
output and its new or changed files written into the write's stage by whichever process ran
it; only the paths and their status travel back. No process ever holds more than the unit it
is running, nothing large crosses between processes (so the plan fragments run in a worker
too), and comparing and writing run in parallel with rendering. The transaction (claim and
recover first, the foreign-path check on the whole list before anything outside the stage is
touched, commit, apply) is `write.write_streamed`'s; the bytes are the same as
`write_tree(out, render_files(plan, context))` for any number of processes.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

from fabricgen.core.model import Plan
from fabricgen.render.context import RenderContext
from fabricgen.render.parallel import run_each
from fabricgen.render.producers import PRODUCERS, Producer, render_units
from fabricgen.render.write import Transaction, WriteSummary, stage_files, write_streamed

SLICES_PER_JOB = 4
"""Device configs and device plan fragments go out in this many slices per process each (at
least 8): small enough that no process holds a large share of them at once, and that the last
slices even out the finish."""


def write_rendered(
    out: Path,
    plan: Plan,
    context: RenderContext,
    producers: tuple[Producer, ...] = PRODUCERS,
    *,
    starting: Callable[[str, int, int], None] | None = None,
) -> WriteSummary:
    """Render `plan` into `out` over `context.jobs` processes (this one included), unit by unit.
    `starting(name, index, total)` is called in this process before each unit it runs."""
    units = render_units(plan, context, producers, pieces=max(8, context.jobs * SLICES_PER_JOB))
    announce = None if starting is None else (lambda index: starting(units[index].name, index, len(units)))

    def stage_all(transaction: Transaction) -> list[WriteSummary]:
        staging = [partial(_render_and_stage, transaction, unit.render) for unit in units]
        return run_each(staging, context.jobs, announce)

    return write_streamed(out, stage_all)


def _render_and_stage(transaction: Transaction, render: Callable[[], dict[str, str]]) -> WriteSummary:
    """One unit: rendered, staged, and its texts dropped when this returns."""
    return stage_files(transaction, render())
