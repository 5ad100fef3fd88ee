"""InfiniBand against RoCEv2 for one job: the planned fabric's answer, the comparison, the gap
by GPU count and congestion, and the recommendation by cluster size.

Pure: works on `Job`, `ResolvedJob` and path factors (`Paths`); nothing reads a plan. The
recommendation uses only deterministic quantities (the cost model, ftree and ideal balancing),
never the random ECMP trials, so `--no-simulate` cannot change it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from fabricgen.analyze.costmodel import Estimate, Job, estimate
from fabricgen.analyze.job import ResolvedJob

SPEEDS = (100, 200, 400, 800)
TRANSPORTS = ("infiniband", "roce")
TITLES = {"infiniband": "InfiniBand", "roce": "RoCEv2"}
HEADROOM = 0.8
"""An all-reduce "fits" when it takes at most 80 % of the backward pass: bucketing, stragglers
and imperfect overlap eat the rest."""
UTILISATION_CEILING = 0.7
LARGE_MODEL = 100e9
BUCKETS = (("up to 128 GPUs", 128), ("128-512 GPUs", 512), ("512 GPUs and more", 2048))
"""Guidance bands, each evaluated at its upper end (2,048 GPUs for the open one)."""
GAP_GPUS = (64, 512, 4096, 32768)
GAP_LOADS = (0.0, 0.5, 0.7)


@dataclass(frozen=True, slots=True)
class Paths:
    """How the job's ring loads the planned fabric: `factor` >= 1 divides the bandwidth, `util`
    is the busiest fabric link's demand at NIC line rate over its capacity."""

    ftree: float
    adaptive: float
    ecmp: float | None
    ecmp_p99: float | None
    util_ftree: float
    util_adaptive: float
    util_ecmp: float | None

    def factor(self, transport: str, balancing: str) -> float | None:
        if transport == "infiniband":
            return self.ftree
        return self.adaptive if balancing == "adaptive" else self.ecmp


def at(
    rj: ResolvedJob, transport: str, line_gbps: float, factor: float, job: Job | None = None, congestion: float | None = None
) -> Estimate:
    return estimate(job or rj.job, rj.network(transport, line_gbps, factor, congestion))


def scaled(job: Job, gpus: int) -> Job:
    """The same model and parallelism on `gpus` GPUs (data parallelism grows)."""
    return replace(job, gpus=gpus, data_parallel=max(1, gpus // job.model_parallel))


def step(job: Job) -> int:
    """GPU counts must be whole servers and whole model-parallel groups."""
    gps, mp = job.gpus_per_server, job.model_parallel
    return gps * mp // math.gcd(gps, mp)


def sized(job: Job, target: int) -> Job:
    unit = step(job)
    return scaled(job, max(unit, target // unit * unit))


def ib_share(ib: Estimate, roce: Estimate) -> float:
    """RoCEv2 throughput as a fraction of InfiniBand's: the time ratio of the all-reduce."""
    return ib.allreduce_s / roce.allreduce_s if roce.allreduce_s else 1.0


@dataclass(frozen=True, slots=True)
class Recommendation:
    bucket: str
    gpus: int
    choice: str
    speed: int | None
    deciding: str
    reasoning: str


def slowest_fit(rj: ResolvedJob, job: Job, transport: str, paths: Paths) -> tuple[int | None, Estimate]:
    """The slowest NIC speed whose all-reduce fits HEADROOM of the backward pass (well-tuned:
    ftree on InfiniBand, adaptive routing on RoCEv2)."""
    factor = paths.factor(transport, "adaptive") or 1.0
    last = at(rj, transport, SPEEDS[-1], factor, job)
    for speed in SPEEDS:
        est = at(rj, transport, speed, factor, job)
        if est.allreduce_s <= HEADROOM * est.backward_s:
            return speed, est
        last = est
    return None, last


def guidance(gpus: int, params: float) -> tuple[str, str]:
    """(choice, deciding input) by the common guidance on cluster size and model size."""
    if gpus <= 128:
        return "roce", f"{gpus} GPUs <= 128: RoCEv2 is sufficient and cost-optimised"
    if gpus <= 512:
        return "either", f"{gpus} GPUs in 128-512: both viable, InfiniBand scales more predictably"
    if params >= LARGE_MODEL:
        return "infiniband", f"{gpus} GPUs >= 512 and {params / 1e9:.0f}B >= 100B params: InfiniBand for latency stability"
    return "either", f"{gpus} GPUs >= 512 but {params / 1e9:.0f}B < 100B params: tuned RoCEv2 with adaptive routing or InfiniBand"


def recommend_one(rj: ResolvedJob, bucket: str, job: Job, paths: Paths) -> Recommendation:
    choice, deciding = guidance(job.gpus, job.params)
    fits = {t: slowest_fit(rj, job, t, paths) for t in TRANSPORTS}
    transport = "infiniband" if choice == "infiniband" else "roce"
    speed, est = fits[transport]
    share = ib_share(fits["infiniband"][1], at(rj, "roce", speed or SPEEDS[-1], paths.adaptive, job))
    if speed is None:
        reasoning = f"no speed fits: {SPEEDS[-1]}G needs {est.allreduce_s:.2g} s of a {est.backward_s:.2g} s backward pass; cut gradient traffic (TP/PP, larger batch)"
    else:
        reasoning = f"{speed}G: all-reduce {est.allreduce_s:.2g} s <= 80% of backward {est.backward_s:.2g} s"
    reasoning += f"; RoCEv2 (adaptive) at {share:.0%} of InfiniBand throughput"
    label = {"roce": "RoCEv2", "infiniband": "InfiniBand", "either": "RoCEv2 or InfiniBand"}[choice]
    return Recommendation(bucket, job.gpus, label, speed, deciding, reasoning)


def recommend(rj: ResolvedJob, paths: Paths) -> list[Recommendation]:
    """This job first, then each guidance band at its upper end."""
    rows = [recommend_one(rj, "this job", rj.job, paths)]
    rows += [recommend_one(rj, bucket, sized(rj.job, size), paths) for bucket, size in BUCKETS]
    return rows


def gap_table(rj: ResolvedJob, line_gbps: float, paths: Paths) -> list[tuple[int, list[float]]]:
    """RoCEv2 (adaptive) throughput as a fraction of InfiniBand's, by GPU count and fabric load:
    where the tail of each network step (order statistics over the participants) moves it."""
    rows = []
    for target in GAP_GPUS:
        job = sized(rj.job, target)
        cells = []
        for load in GAP_LOADS:
            ib = at(rj, "infiniband", line_gbps, paths.ftree, job, load)
            roce = at(rj, "roce", line_gbps, paths.adaptive, job, load)
            cells.append(ib_share(ib, roce))
        rows.append((job.gpus, cells))
    return rows


@dataclass(frozen=True, slots=True)
class SpeedRow:
    speed: int
    infiniband: Estimate
    roce_adaptive: Estimate
    roce_ecmp: Estimate | None


def speed_rows(rj: ResolvedJob, paths: Paths) -> list[SpeedRow]:
    """The job at 100-800G NICs (the servers keep their NIC ports, the fabric its shape)."""
    rows = []
    for speed in SPEEDS:
        line = speed * rj.placement.nics_per_gpu
        ecmp = at(rj, "roce", line, paths.ecmp) if paths.ecmp is not None else None
        rows.append(SpeedRow(speed, at(rj, "infiniband", line, paths.ftree), at(rj, "roce", line, paths.adaptive), ecmp))
    return rows
