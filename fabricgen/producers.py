"""Every producer of `build/<fabric>/`, and the render split into units any process can run.

A producer is a function `(plan, context) -> {path: text}` with one job (device configs, the
plan fragments, Ansible inventory, review artifacts, OpenSM files); producers only read the
plan. This module sits above them all, so the engine below (`render/`: templating,
serialisers, the writer) never imports a producer. `render_units` is the one definition of
what a render is; `write_rendered` streams those units into the output folder (or compares
them with it, `--check`), `render_files` collects their text (`ib verify`, tests).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

from fabricgen.artifacts import ARTIFACT_PRODUCERS
from fabricgen.configs.ansible import ansible_host_vars, ansible_inventory
from fabricgen.configs.devices import chosen_devices, device_configs, render_devices
from fabricgen.core.model import Plan
from fabricgen.infiniband.render import opensm_files
from fabricgen.infiniband.switches import switch_split_files
from fabricgen.render.context import Producer, RenderContext, RenderUnit
from fabricgen.render.parallel import run_each, slices
from fabricgen.render.serialize import device_fragments, fabric_fragment, plan_fragments, split_fragments
from fabricgen.render.stream import compare_units, write_units
from fabricgen.render.tidy import tidy
from fabricgen.render.write import WriteSummary


def plan_file(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`plan/fabric.json` and `plan/devices/<name>.json` (see fabricgen.render.serialize): a change to
    one device rewrites its fragment and its neighbours', not the whole plan."""
    return plan_fragments(plan)


PRODUCERS: tuple[Producer, ...] = (
    device_configs,
    plan_file,
    ansible_inventory,
    ansible_host_vars,
    *ARTIFACT_PRODUCERS,
    opensm_files,
    switch_split_files,
)
_TIDY_BY_CONSTRUCTION: frozenset[Producer] = frozenset({plan_file})
"""Producers whose text is tidy by construction (orjson never writes trailing blanks): at
5,000 switches the plan fragments are ~200 MB, and scanning them again costs time."""

SLICES_PER_JOB = 4
"""Device configs and device plan fragments go out in this many slices per process each (at
least 8) when streamed: small enough that no process holds a large share of them at once, and
that the last slices even out the finish."""


def write_rendered(
    out: Path,
    plan: Plan,
    context: RenderContext,
    producers: tuple[Producer, ...] = PRODUCERS,
    *,
    check: bool = False,
    starting: Callable[[str, int, int], None] | None = None,
) -> WriteSummary:
    """Render `plan` into `out` over `context.jobs` processes, unit by unit (render/stream.py);
    with `check`, only compare. With `context.limit` the files of unselected devices are not
    rendered, and the ones written before are kept. `starting(name, index, total)` is called
    in this process before each unit it runs."""
    units = render_units(plan, context, producers, pieces=max(8, context.jobs * SLICES_PER_JOB))
    keep = context.limit is not None
    if check:
        return compare_units(out, units, context.jobs, keep_unlisted_owned=keep)
    return write_units(out, units, context.jobs, starting=starting, keep_unlisted_owned=keep)


def render_files(plan: Plan, context: RenderContext, producers: Iterable[Producer] = PRODUCERS) -> dict[str, str]:
    """Every producer's files, tidied, sorted by path: the units of `render_units`, with
    `context.jobs` above 1 spread over forked processes (the units too large to send back, the
    plan fragments, run in this process). The result is sorted, so it is the same for any N."""
    units = render_units(plan, context, producers, pieces=max(1, context.jobs * 2))
    ordered = [unit.render for unit in units if unit.large] + [unit.render for unit in units if not unit.large]
    files: dict[str, str] = {}
    for result in run_each(ordered, context.jobs, local=sum(unit.large for unit in units)):
        files.update(result)
    return dict(sorted(files.items()))


def _tidied(producer: Producer, plan: Plan, context: RenderContext) -> dict[str, str]:
    if producer in _TIDY_BY_CONSTRUCTION:
        return producer(plan, context)
    return {path: tidy(text) for path, text in producer(plan, context).items()}


def render_units(plan: Plan, context: RenderContext, producers: Iterable[Producer] = PRODUCERS, *, pieces: int) -> list[RenderUnit]:
    """The render split into independent units: device configs and device plan fragments each in
    `pieces` contiguous slices, every other producer whole. Each file comes from exactly one unit, so
    the output does not depend on the split. Whole producers come first and the small config
    slices last, so processes taking units in order finish close together. Templates are
    compiled here, before any fork."""
    producers = tuple(producers)
    units: list[RenderUnit] = []
    slices_of_configs: list[RenderUnit] = []
    for producer in producers:
        if producer is plan_file:
            units += _fragment_units(plan, pieces)
        elif producer is device_configs:
            chosen = chosen_devices(plan, context)
            for start, stop in slices(len(chosen), pieces):
                render = partial(render_devices, (plan, context, chosen), start, stop)
                slices_of_configs.append(RenderUnit(f"device_configs[{start}:{stop}]", render, False))
        else:
            units.append(RenderUnit(producer.__name__, partial(_tidied, producer, plan, context), False))
    return units + slices_of_configs


def _fragment_units(plan: Plan, count: int) -> list[RenderUnit]:
    """The plan fragments (`plan_file`) as units: `plan/fabric.json`, then the device fragments
    in `count` slices; links and servers are grouped by device once, here, before any fork."""
    split = split_fragments(plan)
    units = [RenderUnit("plan_file[fabric]", partial(fabric_fragment, split), True)]
    for start, stop in slices(len(plan.devices), count):
        units.append(RenderUnit(f"plan_file[{start}:{stop}]", partial(device_fragments, split, start, stop), True))
    return units
