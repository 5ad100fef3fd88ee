"""Whether a `jobs:` entry's parallelism (tensor, pipeline, data, experts) describes a job that
can run and that `analyze` models: one rule, used by `validate` (a plan check) and by
`fabricgen analyze` (which takes the degrees from it), so both refuse the same job with the
same words and `validate` finds everything `analyze` would refuse.

Tensor parallelism across servers is refused rather than answered: its per-layer all-reduces
would cross the network, which the analysis does not model, and ignoring them flatters the job.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabricgen.checks.experts import expert_problems
from fabricgen.checks.jobs import PlacementProblem
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.core.records import record
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.schema import apply_defaults
from fabricgen.plan.inputs import Inputs


@record
class Degrees:
    """Data-, tensor- and pipeline-parallel degrees, defaults filled in."""

    data: int
    tensor: int
    pipeline: int


def degrees(settings: Mapping[str, Any], gpus: int, gps: int) -> tuple[Degrees, list[PlacementProblem]]:
    """The degrees (tensor_parallel: a server; data_parallel: what the GPUs leave) and why they
    do not describe a job `analyze` can model; `settings` carry the schema's defaults.

    >>> found = degrees({"tensor_parallel": 16, "pipeline_parallel": 1}, 64, 8)[1]
    >>> [p.key for p in found]
    ['tensor_parallel']
    >>> degrees({"pipeline_parallel": 2}, 64, 8)
    (Degrees(data=4, tensor=8, pipeline=2), [])
    """
    found = []
    tp = int(settings.get("tensor_parallel") or min(gps, gpus))
    pp = int(settings.get("pipeline_parallel") or 1)
    if tp > gps:
        found.append(
            PlacementProblem(
                "tensor_parallel",
                f"tensor_parallel {tp} spans {-(-tp // gps)} servers of {gps} GPUs: its per-layer all-reduces would cross "
                f"the network, which the analysis does not model (hint: tensor_parallel <= {gps}, inside one server)",
            )
        )
    elif gps % tp:
        found.append(PlacementProblem("tensor_parallel", f"tensor_parallel {tp} does not divide the {gps} GPUs of a server"))
    dp = settings.get("data_parallel")
    if dp is None:
        if gpus % (tp * pp):
            found.append(PlacementProblem("gpus", f"{gpus} GPUs do not split into tensor_parallel {tp} x pipeline_parallel {pp} groups"))
        dp = max(1, gpus // (tp * pp))
    elif dp * tp * pp != gpus:
        found.append(
            PlacementProblem(
                "data_parallel",
                f"data_parallel {dp} x tensor_parallel {tp} x pipeline_parallel {pp} = {dp * tp * pp}, but the job has {gpus} GPUs",
            )
        )
    return Degrees(int(dp), tp, pp), found


def parallelism_problems(settings: Mapping[str, Any], gpus: int, gps: int) -> tuple[Degrees, list[PlacementProblem]]:
    """`degrees` and the experts' rule (`expert_problems`) on them."""
    found_degrees, found = degrees(settings, gpus, gps)
    experts, ep, per_token = (int(settings.get(key) or 0) for key in ("experts", "expert_parallel", "experts_per_token"))
    found += expert_problems(experts, ep, per_token, found_degrees.data, found_degrees.tensor, gps)
    return found_degrees, found


def check_parallelism(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Each job's parallelism, at the key to change (`jobs.<name>.tensor_parallel`), with the
    defaults `analyze` uses."""
    servers = len(plan.servers)
    for job in plan.jobs:
        if not servers:
            continue
        filled = apply_defaults({"jobs": {job.name: dict(job.settings)}})["jobs"][job.name]
        gps = int(filled.get("gpus_per_server") or len(plan.servers[0].nics))
        gpus = int(filled.get("gpus") or servers * gps)
        for problem in parallelism_problems(filled, gpus, gps)[1]:
            path = ("jobs", job.name, problem.key) if problem.key in job.settings else ("jobs", job.name)
            yield source.diagnostic(path, problem.message, key=path == ("jobs", job.name))
