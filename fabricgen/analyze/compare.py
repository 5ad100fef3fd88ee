"""InfiniBand against RoCEv2 for one job: the planned fabric's answer, the comparison, the gap
by GPU count and congestion, and the recommendation by cluster size.

Pure: works on `Job`, `ResolvedJob` and path factors (`Paths`); nothing reads a plan. The
headline, the recommendation and the `--compare` rows share one verdict (`costmodel.verdict`),
the plan's NICs per GPU and the planned load balancing, so they cannot contradict each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from fabricgen.analyze.costmodel import Estimate, Job, estimate
from fabricgen.analyze.job import ResolvedJob

SPEEDS = (100, 200, 400, 800)
CALIBRATED_NIC_GBPS = (100, 200, 400)
"""NIC speeds the published bus bandwidths cover (docs/analyze.md, Calibration)."""
TRANSPORTS = ("infiniband", "roce")
TITLES = {"infiniband": "InfiniBand", "roce": "RoCEv2"}
UTILISATION_CEILING = 0.7
LARGE_MODEL = 100e9
BUCKETS = (("up to 128 GPUs", 128), ("129-512 GPUs", 512), ("513 GPUs and more", 2048))
"""Guidance bands, each evaluated at its upper end (2,048 GPUs for the open one)."""
GAP_GPUS = (64, 512, 4096, 32768)
GAP_LOADS = (0.0, 0.5, 0.7)


@dataclass(frozen=True, slots=True)
class Paths:
    """How the job's collectives load the planned fabric, per traffic pattern (the ring and
    NCCL's double binary tree): `factor` >= 1 divides the bandwidth; `util` is the busiest
    fabric link's demand at NIC line rate over its capacity (ring). Static ECMP is the mean over
    hash draws; `*_p99` the 99th percentile (a job keeps its hash draw for its life)."""

    ftree: float
    adaptive: float
    ecmp: float
    ecmp_p99: float
    tree_ftree: float
    tree_adaptive: float
    tree_ecmp: float
    tree_ecmp_p99: float
    util_ftree: float
    util_adaptive: float
    util_ecmp: float
    all_to_all_ftree: float = 1.0
    all_to_all_adaptive: float = 1.0
    all_to_all_ecmp: float = 1.0
    all_to_all_ecmp_p99: float = 1.0
    """The all-to-all pattern's (mixture-of-experts jobs only; 1 otherwise)."""

    def factors(self, transport: str, balancing: str) -> tuple[float, float, float]:
        """(ring, tree, all-to-all) path factors: ftree on InfiniBand, the planned balancing on RoCEv2."""
        if transport == "infiniband":
            return self.ftree, self.tree_ftree, self.all_to_all_ftree
        if balancing == "ecmp":
            return self.ecmp, self.tree_ecmp, self.all_to_all_ecmp
        return self.adaptive, self.tree_adaptive, self.all_to_all_adaptive


def at(
    rj: ResolvedJob,
    transport: str,
    line_gbps: float,
    factors: tuple[float, ...],
    job: Job | None = None,
    congestion: float | None = None,
) -> Estimate:
    return estimate(job or rj.job, rj.network(transport, line_gbps, factors, congestion))


def scaled(job: Job, gpus: int) -> Job:
    """The same model and parallelism on `gpus` GPUs (data parallelism grows)."""
    return replace(job, gpus=gpus, data_parallel=max(1, gpus // job.model_parallel))


def step(job: Job) -> int:
    """GPU counts must be whole servers and whole model-parallel groups (with experts, whole
    expert-parallel groups of data-parallel ranks)."""
    gps, mp = job.gpus_per_server, job.model_parallel * (job.expert_parallel if job.experts else 1)
    return gps * mp // math.gcd(gps, mp)


def sized(job: Job, target: int) -> Job:
    unit = step(job)
    return scaled(job, max(unit, target // unit * unit))


def ib_share(ib: Estimate, roce: Estimate) -> float:
    """RoCEv2 throughput as a fraction of InfiniBand's: the time ratio of the all-reduce."""
    return ib.allreduce_s / roce.allreduce_s if roce.allreduce_s else 1.0


def line_at(rj: ResolvedJob, nic_gbps: float) -> float:
    """Line rate per GPU with the plan's NICs per GPU running at `nic_gbps` (shared NICs count)."""
    return nic_gbps * rj.placement.nics_per_gpu


@dataclass(frozen=True, slots=True)
class Recommendation:
    bucket: str
    gpus: int
    choice: str
    speed: int | None
    deciding: str
    reasoning: str


def slowest_fit(rj: ResolvedJob, job: Job, transport: str, paths: Paths) -> tuple[int | None, Estimate]:
    """The slowest NIC speed at which the job is compute-bound: the same threshold as every
    verdict (costmodel.EXPOSED_LIMIT), on the plan's NICs per GPU and the planned balancing."""
    factors = paths.factors(transport, rj.roce_load_balancing)
    last = at(rj, transport, line_at(rj, SPEEDS[-1]), factors, job)
    for speed in SPEEDS:
        est = at(rj, transport, line_at(rj, speed), factors, job)
        if est.verdict == "compute-bound":
            return speed, est
        last = est
    return None, last


def guidance(gpus: int, params: float) -> tuple[str, str]:
    """(choice, deciding input) by the common guidance on cluster size and model size; the
    bands do not overlap (up to 128, 129-512, 513 and more)."""
    if gpus <= 128:
        return "roce", f"{gpus} GPUs, up to 128: RoCEv2 is sufficient and cost-optimised"
    if gpus <= 512:
        return "either", f"{gpus} GPUs in 129-512: both viable, InfiniBand scales more predictably"
    if params >= LARGE_MODEL:
        return "infiniband", f"{gpus} GPUs, 513 or more, and {params / 1e9:.0f}B >= 100B params: InfiniBand for latency stability"
    return "either", f"{gpus} GPUs, 513 or more, but {params / 1e9:.0f}B < 100B params: tuned RoCEv2 with adaptive routing or InfiniBand"


def recommend_one(rj: ResolvedJob, bucket: str, job: Job, paths: Paths, planned: str) -> Recommendation:
    """The guidance's transport (the planned one where it allows either) at its slowest
    compute-bound speed; InfiniBand and RoCEv2 compared at that same speed."""
    choice, deciding = guidance(job.gpus, job.params)
    transport = {"infiniband": "infiniband", "roce": "roce"}.get(choice, planned)
    speed, est = slowest_fit(rj, job, transport, paths)
    same = line_at(rj, speed or SPEEDS[-1])
    ib = at(rj, "infiniband", same, paths.factors("infiniband", rj.roce_load_balancing), job)
    roce = at(rj, "roce", same, paths.factors("roce", rj.roce_load_balancing), job)
    shown = speed or SPEEDS[-1]
    if speed is None:
        reasoning = f"no speed is compute-bound: {TITLES[transport]} at {shown}G exposes {est.exposed_s:.2g} s of a {est.step_s:.2g} s step"
    else:
        reasoning = f"{TITLES[transport]} at {shown}G exposes {est.exposed_s:.2g} s of a {est.step_s:.2g} s step ({est.exposed_share:.1%})"
    reasoning += f"; RoCEv2 ({rj.roce_load_balancing}) at {ib_share(ib, roce):.0%} of InfiniBand's all-reduce throughput at {shown}G"
    label = {"roce": "RoCEv2", "infiniband": "InfiniBand", "either": "RoCEv2 or InfiniBand"}[choice]
    return Recommendation(bucket, job.gpus, label, speed, deciding, reasoning)


def recommend(rj: ResolvedJob, paths: Paths, planned: str) -> list[Recommendation]:
    """This job first, then each guidance band at its upper end."""
    rows = [recommend_one(rj, "this job", rj.job, paths, planned)]
    rows += [recommend_one(rj, bucket, sized(rj.job, size), paths, planned) for bucket, size in BUCKETS]
    return rows


def gap_table(rj: ResolvedJob, line_gbps: float, paths: Paths) -> list[tuple[int, list[float]]]:
    """RoCEv2 (planned balancing) throughput as a fraction of InfiniBand's, by GPU count and
    fabric load: where the tail of each network step moves it."""
    rows = []
    for target in GAP_GPUS:
        job = sized(rj.job, target)
        cells = []
        for load in GAP_LOADS:
            ib = at(rj, "infiniband", line_gbps, paths.factors("infiniband", rj.roce_load_balancing), job, load)
            roce = at(rj, "roce", line_gbps, paths.factors("roce", rj.roce_load_balancing), job, load)
            cells.append(ib_share(ib, roce))
        rows.append((job.gpus, cells))
    return rows


@dataclass(frozen=True, slots=True)
class SpeedRow:
    speed: int
    infiniband: Estimate
    roce_adaptive: Estimate
    roce_ecmp: Estimate

    @property
    def calibrated(self) -> bool:
        return self.speed in CALIBRATED_NIC_GBPS


def speed_rows(rj: ResolvedJob, paths: Paths) -> list[SpeedRow]:
    """The job at 100-800G NICs (the servers keep their NIC ports, the fabric its shape)."""
    rows = []
    for speed in SPEEDS:
        line = line_at(rj, speed)
        rows.append(
            SpeedRow(
                speed,
                at(rj, "infiniband", line, paths.factors("infiniband", "adaptive")),
                at(rj, "roce", line, paths.factors("roce", "adaptive")),
                at(rj, "roce", line, paths.factors("roce", "ecmp")),
            )
        )
    return rows
