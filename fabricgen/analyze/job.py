"""Training jobs: from the inventory's `jobs:` section and/or command-line flags to a `Job` and
the `Network` the plan gives it.

Defaults come from the schema (one source of truth, as for the rest of the inventory); the few
that depend on the plan (GPUs, GPUs per server, data-parallel degree) are filled in here. Bad
combinations are reported like any other inventory problem: every one at once, with its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabricgen.analyze.costmodel import Job, Network
from fabricgen.analyze.counts import parse_count
from fabricgen.analyze.topology import Fabric, Placement, TopologyError, place
from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.loader import SourceMap
from fabricgen.schema import apply_defaults

FLAGS = {
    "params": "--params",
    "bytes_per_gradient": "--bytes-per-gradient",
    "gpus": "--gpus",
    "gpus_per_server": "--gpus-per-server",
    "nvlink_gbytes_per_s": "--nvlink-gbytes",
    "data_parallel": "--dp",
    "tensor_parallel": "--tp",
    "pipeline_parallel": "--pp",
    "tokens_per_step": "--tokens-per-step",
    "peak_tflops": "--peak-tflops",
    "mfu": "--mfu",
    "efficiency.infiniband": "--efficiency-infiniband",
    "efficiency.roce": "--efficiency-roce",
    "latency_us.network": "--latency-network-us",
    "latency_us.nvlink": "--latency-nvlink-us",
}


@dataclass(frozen=True, slots=True)
class ResolvedJob:
    """A job with everything it runs on: the placement, the network, and the raw settings used."""

    job: Job
    network: Network
    placement: Placement
    settings: dict[str, Any]
    efficiency: dict[str, float]
    latency_us: dict[str, float]


def job_settings(doc: dict[str, Any], overrides: dict[str, Any], only: str | None) -> list[tuple[str, dict[str, Any], set[str]]]:
    """(name, settings with schema defaults, keys given on the command line) per job.

    Inventory jobs, sorted by name (or just `only`); one job called `cli` when there are none.
    Flags override every selected job's settings."""
    jobs: dict[str, Any] = dict(doc.get("jobs") or {})
    if only is not None:
        jobs = {only: jobs[only]} if only in jobs else {}
    if not jobs:
        jobs = {only or "cli": {}}
    result = []
    for name in sorted(jobs):
        raw = _merge(jobs[name], overrides)
        settings = apply_defaults({"jobs": {name: raw}})["jobs"][name]
        result.append((name, settings, set(overrides)))
    return result


def _merge(raw: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = {k: (dict(v) if isinstance(v, dict) else v) for k, v in raw.items()}
    for key, value in overrides.items():
        if "." in key:
            outer, inner = key.split(".", 1)
            merged.setdefault(outer, {})[inner] = value
        else:
            merged[key] = value
    return merged


def resolve(name: str, settings: dict[str, Any], from_cli: set[str], fabric: Fabric, source: SourceMap | None) -> ResolvedJob:
    """Fill plan-derived defaults, check the combination, place the job; FabricError otherwise."""
    problems: list[Diagnostic] = []

    def problem(key: str, message: str) -> None:
        if key in from_cli or source is None:
            problems.append(Diagnostic(message, FLAGS.get(key, key)))
        else:
            problems.append(source.diagnostic(("jobs", name, *key.split(".")), message))

    first_nics = int(fabric.server_nics[0])
    gps = int(settings.get("gpus_per_server") or first_nics)
    gpus = int(settings.get("gpus") or len(fabric.server_leaf) * gps)
    tp, pp = int(settings["tensor_parallel"]), int(settings["pipeline_parallel"])
    dp = settings.get("data_parallel")
    if dp is None:
        if gpus % (tp * pp):
            problem("gpus", f"{gpus} GPUs do not split into tensor_parallel {tp} x pipeline_parallel {pp} groups")
        dp = max(1, gpus // (tp * pp))
    elif dp * tp * pp != gpus:
        problem(
            "data_parallel",
            f"data_parallel {dp} x tensor_parallel {tp} x pipeline_parallel {pp} = {dp * tp * pp}, but the job has {gpus} GPUs",
        )
    try:
        params = parse_count(str(settings["params"]))
        tokens = parse_count(str(settings["tokens_per_step"]))
    except ValueError as exc:
        problem("params", str(exc))
        params = tokens = 1.0
    if params <= 0:
        problem("params", "must be more than 0")
    if tokens <= 0:
        problem("tokens_per_step", "must be more than 0")
    placement = None
    try:
        placement = place(fabric, gpus, gps)
    except TopologyError as exc:
        problem("gpus", str(exc))
    if problems or placement is None:
        raise FabricError(problems)
    job = Job(
        name=name,
        params=params,
        bytes_per_gradient=int(settings["bytes_per_gradient"]),
        gpus=gpus,
        gpus_per_server=gps,
        nvlink_gbytes_per_s=float(settings["nvlink_gbytes_per_s"]),
        data_parallel=int(dp),
        tensor_parallel=tp,
        pipeline_parallel=pp,
        tokens_per_step=tokens,
        peak_tflops=float(settings["peak_tflops"]),
        mfu=float(settings["mfu"]),
    )
    efficiency = {k: float(v) for k, v in sorted(settings["efficiency"].items())}
    latency = {k: float(v) for k, v in sorted(settings["latency_us"].items())}
    network = Network(
        transport=fabric.transport,
        line_gbps=placement.line_gbps,
        share=placement.share,
        efficiency=efficiency[fabric.transport],
        latency_network_us=latency["network"],
        latency_nvlink_us=latency["nvlink"],
    )
    return ResolvedJob(job, network, placement, settings, efficiency, latency)


def resolve_all(settings: list[tuple[str, dict[str, Any], set[str]]], fabric: Fabric, source: SourceMap | None) -> list[ResolvedJob]:
    """Resolve every job; raise one FabricError with the problems of all of them."""
    jobs, problems = [], []
    for name, values, from_cli in settings:
        try:
            jobs.append(resolve(name, values, from_cli, fabric, source))
        except FabricError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        raise FabricError(problems)
    return jobs
