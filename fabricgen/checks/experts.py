"""Whether a `jobs:` entry's mixture-of-experts settings describe a job that can run: one rule,
used by `validate` (a plan check) and by `fabricgen analyze` (before it models the all-to-all),
so both refuse the same job with the same words.

The expert-parallel group is formed from data-parallel ranks (Megatron-Core's expert and
data-modulo-expert groups), next to the tensor-parallel ranks: it must divide the data-parallel
degree and the experts, fill whole servers or a whole part of one (so every group has the same
number of peers per server), and top-k cannot route a token to more experts than there are.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabricgen.checks.jobs import PlacementProblem
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.schema import apply_defaults
from fabricgen.plan.inputs import Inputs


def expert_problems(
    experts: int, expert_parallel: int, per_token: int, data_parallel: int, tensor_parallel: int, gps: int
) -> list[PlacementProblem]:
    """Why these expert settings cannot run on `data_parallel` x `tensor_parallel` ranks of
    servers with `gps` GPUs (`experts` 0: a dense model).

    >>> [p.message for p in expert_problems(8, 16, 2, 32, 1, 8)]
    ['8 experts do not split over expert_parallel 16 (each rank holds experts / expert_parallel of them)']
    >>> [p.key for p in expert_problems(0, 4, 2, 32, 1, 8)]
    ['experts']
    >>> expert_problems(64, 16, 6, 32, 1, 8)
    []
    """
    found = []
    if not experts:
        if expert_parallel > 1:
            found.append(
                PlacementProblem("experts", f"expert_parallel {expert_parallel} needs experts: (the model's experts per MoE layer)")
            )
        return found
    if per_token > experts:
        found.append(PlacementProblem("experts_per_token", f"experts_per_token {per_token} is more than the model's {experts} experts"))
    if experts % expert_parallel:
        found.append(
            PlacementProblem(
                "expert_parallel",
                f"{experts} experts do not split over expert_parallel {expert_parallel} (each rank holds experts / expert_parallel of them)",
            )
        )
    if data_parallel % expert_parallel:
        found.append(
            PlacementProblem(
                "expert_parallel",
                f"expert_parallel {expert_parallel} does not divide data_parallel {data_parallel}: the expert-parallel groups are "
                "formed from data-parallel ranks",
            )
        )
    span = expert_parallel * tensor_parallel
    if span % gps and gps % span:
        found.append(
            PlacementProblem(
                "expert_parallel",
                f"expert_parallel {expert_parallel} x tensor_parallel {tensor_parallel} = {span} GPUs neither divides nor fills whole "
                f"servers of {gps} GPUs: the groups would have different numbers of peers per server",
            )
        )
    return found


def problems_of(name: str, settings: Mapping[str, Any], gpus: int, gps: int) -> list[PlacementProblem]:
    """`expert_problems` with the schema's defaults and those `analyze` fills in from the plan
    (tensor_parallel: a server, data_parallel: what the GPUs leave)."""
    filled = apply_defaults({"jobs": {name: dict(settings)}})["jobs"][name]
    tp = int(filled.get("tensor_parallel") or min(gps, gpus))
    dp = int(filled.get("data_parallel") or gpus // (tp * int(filled["pipeline_parallel"])) or 1)
    experts, ep, per_token = (int(filled.get(key) or 0) for key in ("experts", "expert_parallel", "experts_per_token"))
    return expert_problems(experts, ep, per_token, dp, tp, gps)


def check_experts(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Each job's mixture-of-experts settings, at the key to change (`jobs.<name>.expert_parallel`)."""
    servers = len(plan.servers)
    for job in plan.jobs:
        if not servers:
            continue
        gps = int(job.settings.get("gpus_per_server") or len(plan.servers[0].nics))
        gpus = int(job.settings.get("gpus") or servers * gps)
        for problem in problems_of(job.name, job.settings, gpus, gps):
            path = ("jobs", job.name, problem.key) if problem.key in job.settings else ("jobs", job.name)
            yield source.diagnostic(path, problem.message, key=path == ("jobs", job.name))
