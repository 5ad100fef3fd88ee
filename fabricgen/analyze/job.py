"""Training jobs: from the `jobs:` settings and/or command-line flags to a `Job`, its placement,
and the per-transport `Network` the plan gives it.

Defaults come from the schema (one source of truth, as for the rest of the inventory); the few
that depend on the plan (GPUs, GPUs per server, tensor and data parallelism) are filled in here.
Bad combinations are reported like any other inventory problem: every one at once, with its place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fabricgen.analyze.costmodel import Job, Network
from fabricgen.analyze.topology import Fabric, Placement, place
from fabricgen.checks.jobs import placement_problems
from fabricgen.checks.parallelism import parallelism_problems
from fabricgen.core.counts import parse_count
from fabricgen.core.diagnostics import Diagnostic, FabricError, Severity
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.schema import apply_defaults

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
    "gpu_memory_gb": "--gpu-memory-gb",
    "bucket_mb": "--bucket-mb",
    "sequence_length": "--sequence-length",
    "micro_batch_size": "--micro-batch-size",
    "hidden_size": "--hidden-size",
    "experts": "--experts",
    "expert_parallel": "--ep",
    "experts_per_token": "--experts-per-token",
    "moe_layers": "--moe-layers",
    "congestion": "--congestion",
    "roce_load_balancing": "--roce-load-balancing",
    "efficiency.infiniband": "--efficiency-infiniband",
    "efficiency.roce": "--efficiency-roce",
    "latency_us.network": "--latency-network-us",
    "latency_us.nvlink": "--latency-nvlink-us",
    "jitter_us.infiniband": "--jitter-infiniband-us",
    "jitter_us.roce": "--jitter-roce-us",
    "nccl.channels_per_nic": "--channels-per-nic",
    "nccl.qps_per_connection": "--qps-per-connection",
    "nccl.sharp": "--sharp",
    "nccl.pxn": "--pxn",
}


@dataclass(frozen=True, slots=True)
class ResolvedJob:
    """A job with everything it runs on: the placement and the transport settings."""

    job: Job
    placement: Placement
    efficiency: dict[str, float]
    latency_us: dict[str, float]
    jitter_us: dict[str, float]
    channels_per_nic: int
    qps_per_connection: int
    sharp: bool
    pxn: bool
    congestion: float
    roce_load_balancing: str

    @property
    def flows_per_nic(self) -> int:
        """ECMP sees one flow per queue pair: channels per NIC x queue pairs per connection."""
        return self.channels_per_nic * self.qps_per_connection

    def network(
        self, transport: str, line_gbps: float, factors: tuple[float, ...] = (1.0, 1.0), congestion: float | None = None
    ) -> Network:
        """The per-GPU network on `transport`; `factors` are the (ring, tree[, all-to-all]) path factors."""
        return Network(
            transport=transport,
            line_gbps=line_gbps,
            efficiency=self.efficiency[transport],
            path_factor=factors[0],
            tree_path_factor=factors[1],
            latency_network_us=self.latency_us["network"],
            latency_nvlink_us=self.latency_us["nvlink"],
            jitter_us=self.jitter_us[transport],
            congestion=self.congestion if congestion is None else congestion,
            sharp=self.sharp,
            all_to_all_path_factor=factors[2] if len(factors) > 2 else 1.0,
        )


def job_settings(jobs_section: dict[str, Any], overrides: dict[str, Any], only: str | None) -> list[tuple[str, dict[str, Any], set[str]]]:
    """(name, settings with schema defaults, keys given on the command line) per job.

    Inventory jobs, sorted by name (or just `only`); one job called `cli` when there are none.
    Flags override every selected job's settings."""
    jobs: dict[str, Any] = dict(jobs_section)
    if only is not None:
        jobs = {only: jobs[only]} if only in jobs else {}
    if not jobs:
        jobs = {only or "cli": {}}
    result = []
    for name in sorted(jobs):
        raw = _merge(jobs[name] or {}, overrides)
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

    gps = int(settings.get("gpus_per_server") or int(fabric.server_nics[0]))
    gpus = int(settings.get("gpus") or fabric.servers * gps)
    degrees, misfits = parallelism_problems(settings, gpus, gps)
    dp, tp, pp = degrees.data, degrees.tensor, degrees.pipeline
    try:
        params = parse_count(str(settings["params"]))
        tokens = parse_count(str(settings["tokens_per_step"]))
    except ValueError as exc:
        problem("params", str(exc))
        params = tokens = 1.0
    for misfit in placement_problems(gpus, gps, fabric.servers, int(fabric.server_nics.min())):
        if misfit.severity is Severity.ERROR:  # shared NICs are modelled (a warning at validate)
            problem(misfit.key, misfit.message)
    for misfit in misfits:
        problem(misfit.key, misfit.message)
    if problems:
        raise FabricError(problems)
    placement = place(fabric, gpus, gps)
    job = Job(
        name=name,
        params=params,
        bytes_per_gradient=int(settings["bytes_per_gradient"]),
        gpus=gpus,
        gpus_per_server=gps,
        nvlink_gbytes_per_s=float(settings["nvlink_gbytes_per_s"]),
        data_parallel=dp,
        tensor_parallel=tp,
        pipeline_parallel=pp,
        tokens_per_step=tokens,
        peak_tflops=float(settings["peak_tflops"]),
        mfu=float(settings["mfu"]),
        gpu_memory_gb=float(settings["gpu_memory_gb"]),
        bucket_mb=float(settings["bucket_mb"]),
        optimizer_sharding=bool(settings["optimizer_sharding"]),
        sequence_length=int(settings["sequence_length"]),
        micro_batch_size=int(settings["micro_batch_size"]),
        hidden_size=int(settings.get("hidden_size") or 0),
        experts=int(settings.get("experts") or 0),
        expert_parallel=int(settings["expert_parallel"]),
        experts_per_token=int(settings["experts_per_token"]),
        moe_layers=int(settings.get("moe_layers") or 0),
    )
    nccl = settings["nccl"]
    return ResolvedJob(
        job=job,
        placement=placement,
        efficiency={k: float(v) for k, v in sorted(settings["efficiency"].items())},
        latency_us={k: float(v) for k, v in sorted(settings["latency_us"].items())},
        jitter_us={k: float(v) for k, v in sorted(settings["jitter_us"].items())},
        channels_per_nic=int(nccl["channels_per_nic"]),
        qps_per_connection=int(nccl["qps_per_connection"]),
        sharp=bool(nccl["sharp"]),
        pxn=bool(nccl["pxn"]),
        congestion=float(settings["congestion"]),
        roce_load_balancing=str(settings["roce_load_balancing"]),
    )


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
