"""The write path of `fabricgen render`: every render unit stages (or compares) its own files.

Collecting every file first would hold all of them at once (543 MB of text at 5,120
switches) and, with `-j N`, pickle the workers' texts back to the parent. Here each unit is
rendered, compared with the output and its new or changed files written into the write's
stage by whichever process ran it; only the paths and their status travel back. No process
holds more than the unit it is running, and comparing and writing run in parallel with
rendering. The transaction (claim and recover first, the foreign-path check on the whole list
before anything outside the stage is touched, commit, apply) is `write.write_streamed`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

from fabricgen.render.context import RenderUnit
from fabricgen.render.parallel import run_each
from fabricgen.render.write import Transaction, WriteSummary, compare_part, compared, stage_files, write_streamed


def write_units(
    out: Path,
    units: Sequence[RenderUnit],
    jobs: int,
    *,
    starting: Callable[[str, int, int], None] | None = None,
    keep_unlisted_owned: bool = False,
) -> WriteSummary:
    """Render `units` into `out` over `jobs` processes (this one included), each unit staging its
    own files. `starting(name, index, total)` is called in this process before each unit it runs."""
    announce = None if starting is None else (lambda index: starting(units[index].name, index, len(units)))

    def stage_all(transaction: Transaction) -> list[WriteSummary]:
        staging = [partial(_render_and_stage, transaction, unit.render) for unit in units]
        return run_each(staging, jobs, announce)

    return write_streamed(out, stage_all, keep_unlisted_owned=keep_unlisted_owned)


def compare_units(out: Path, units: Sequence[RenderUnit], jobs: int, *, keep_unlisted_owned: bool = False) -> WriteSummary:
    """What writing `units` into `out` would change, each unit compared where it is rendered;
    nothing is written. With `keep_unlisted_owned` (`--limit`) nothing counts as removed."""
    parts = run_each([partial(_render_and_compare, out, unit.render) for unit in units], jobs)
    return compared(out, parts, keep_unlisted_owned=keep_unlisted_owned)


def _render_and_stage(transaction: Transaction, render: Callable[[], dict[str, str]]) -> WriteSummary:
    """One unit: rendered, staged, and its texts dropped when this returns."""
    return stage_files(transaction, render())


def _render_and_compare(out: Path, render: Callable[[], dict[str, str]]) -> WriteSummary:
    return compare_part(out, render())
