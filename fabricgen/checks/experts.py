"""Whether a `jobs:` entry's mixture-of-experts settings describe a job that can run: part of
the one parallelism rule (`checks/parallelism.py`) that `validate` and `fabricgen analyze`
share, so both refuse the same job with the same words.

The expert-parallel group is formed from data-parallel ranks (Megatron-Core's expert and
data-modulo-expert groups), next to the tensor-parallel ranks: it must divide the data-parallel
degree and the experts, fill whole servers or a whole part of one (so every group has the same
number of peers per server), and top-k cannot route a token to more experts than there are.
"""

from __future__ import annotations

from fabricgen.checks.jobs import PlacementProblem


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
