"""`--compare`: the same job at 100/200/400/800G on InfiniBand and RoCEv2, the GPU count at which
each becomes the bottleneck, and a recommendation per cluster size reasoned from those numbers.

What-if assumptions (also printed with the numbers): the servers keep their NIC ports per server
and the leaves keep the plan's oversubscription (uplinks scale with the NIC speed); a job larger
than the plan is assumed to see the same uplink share as the plan's multi-leaf jobs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from fabricgen.analyze.costmodel import Estimate, Job, Network, estimate
from fabricgen.analyze.topology import Fabric

SPEEDS = (100, 200, 400, 800)
TRANSPORTS = ("infiniband", "roce")
TRANSPORT_TITLES = {"infiniband": "InfiniBand", "roce": "RoCEv2"}
MAX_GPUS = 1 << 20
HEADROOM = 0.8
"""A recommendation must fit the all-reduce into 80 % of the backward pass: bucketing, stragglers
and the collisions the simulation shows eat into perfect overlap."""
BUCKETS = (("up to 128 GPUs", 128), ("128-512 GPUs", 512), ("512 GPUs and more", 2048))
"""Each bucket is evaluated at its upper end (2,048 GPUs for the open one): the worst case of the bucket."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """The plan's job, its fabric facts, and how a what-if network is built from them."""

    job: Job
    nics_per_server: int
    servers_per_leaf: int
    multi_leaf_share: float
    efficiency: dict[str, float]
    latency_network_us: float
    latency_nvlink_us: float
    path_slowdown: dict[str, float]
    """Per transport; applied once a job spans more than one leaf (from the ECMP/ftree simulation)."""

    def network(self, transport: str, speed: int, servers: int) -> Network:
        multi = servers > self.servers_per_leaf
        return Network(
            transport=transport,
            line_gbps=speed * self.nics_per_server / self.job.gpus_per_server,
            share=self.multi_leaf_share if multi else 1.0,
            efficiency=self.efficiency[transport],
            latency_network_us=self.latency_network_us,
            latency_nvlink_us=self.latency_nvlink_us,
            path_slowdown=self.path_slowdown.get(transport, 1.0) if multi else 1.0,
        )

    def step(self) -> int:
        """GPU counts must be whole servers and whole model-parallel groups."""
        gps, mp = self.job.gpus_per_server, self.job.model_parallel
        return gps * mp // math.gcd(gps, mp)

    def job_at(self, gpus: int) -> Job:
        return replace(self.job, gpus=gpus, data_parallel=max(1, gpus // self.job.model_parallel))

    def estimate_at(self, transport: str, speed: int, gpus: int) -> Estimate:
        servers = -(-gpus // self.job.gpus_per_server)
        return estimate(self.job_at(gpus), self.network(transport, speed, servers))


def scenario(
    job: Job, fabric: Fabric, efficiency: dict[str, float], latency_us: dict[str, float], path_slowdown: dict[str, float]
) -> Scenario:
    counts = fabric.server_leaf.tolist()
    first_leaf = counts[0] if counts else 0
    per_leaf = sum(1 for leaf in counts if leaf == first_leaf)
    multi_share = float(fabric.leaf_share.min()) if len(fabric.leaves) > 1 else 1.0
    return Scenario(
        job,
        int(fabric.server_nics[0]),
        per_leaf,
        multi_share,
        efficiency,
        latency_us["network"],
        latency_us["nvlink"],
        path_slowdown,
    )


def first_gpus(sc: Scenario, transport: str, speed: int, predicate: str) -> int | None:
    """Smallest GPU count at which `predicate` ("network-bound": all-reduce > forward+backward;
    "exposed": all-reduce > backward) holds. Both are monotone in the GPU count (compute per GPU
    falls, the all-reduce never gets shorter), so an exponential search plus bisection finds it."""

    def holds(units: int) -> bool:
        est = sc.estimate_at(transport, speed, units * sc.step())
        return est.network_bound if predicate == "network-bound" else not est.hidden

    limit = MAX_GPUS // sc.step()
    hi = 1
    while not holds(hi):
        if hi >= limit:
            return None
        hi = min(hi * 2, limit)
    lo = hi // 2
    if lo >= 1 and holds(lo):
        return lo * sc.step()
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if holds(mid):
            hi = mid
        else:
            lo = mid
    return hi * sc.step()


@dataclass(frozen=True, slots=True)
class CompareRow:
    transport: str
    speed: int
    estimate: Estimate
    path_slowdown: float
    network_bound_from: int | None
    exposed_from: int | None


def compare(sc: Scenario) -> list[CompareRow]:
    rows = []
    for transport in TRANSPORTS:
        for speed in SPEEDS:
            rows.append(
                CompareRow(
                    transport,
                    speed,
                    sc.estimate_at(transport, speed, sc.job.gpus),
                    sc.network(transport, speed, -(-sc.job.gpus // sc.job.gpus_per_server)).path_slowdown,
                    first_gpus(sc, transport, speed, "network-bound"),
                    first_gpus(sc, transport, speed, "exposed"),
                )
            )
    return rows


@dataclass(frozen=True, slots=True)
class Recommendation:
    bucket: str
    gpus: int
    transport: str
    speed: int
    reasoning: str


def recommend(sc: Scenario) -> list[Recommendation]:
    """Per bucket: the slowest speed whose all-reduce fits in HEADROOM of the backward pass;
    RoCEv2 before InfiniBand at the same speed (the cheaper, more common choice; stated as such)."""
    result = []
    for bucket, size in BUCKETS:
        gpus = max(sc.step(), size // sc.step() * sc.step())
        options = [(speed, transport, sc.estimate_at(transport, speed, gpus)) for speed in SPEEDS for transport in ("roce", "infiniband")]
        base = options[0][2]
        fits = [(s, t, e) for s, t, e in options if e.allreduce_s <= HEADROOM * e.backward_s]
        budget = f"compute {base.compute_s:.3g} s/step, backward {base.backward_s:.3g} s, budget {HEADROOM:.0%} = {HEADROOM * base.backward_s:.3g} s"
        if fits:
            speed, transport, est = fits[0]
            lower = [(s, t, e) for s, t, e in options if s < speed]
            why_not = ""
            if lower:
                s_low, t_low, e_low = min(lower, key=lambda o: o[2].allreduce_s)
                why_not = f"; {s_low}G needs {e_low.allreduce_s:.3g} s even on {TRANSPORT_TITLES[t_low]}"
            other = next(e for s, t, e in options if s == speed and t != transport)
            other_t = "infiniband" if transport == "roce" else "roce"
            text = (
                f"{budget}; {speed}G {TRANSPORT_TITLES[transport]} all-reduce {est.allreduce_s:.3g} s ({est.algorithm}) fits"
                f"{why_not}; {TRANSPORT_TITLES[other_t]} at {speed}G: {other.allreduce_s:.3g} s"
            )
            roce = next(((s, e) for s, t, e in fits if t == "roce"), None)
            if transport != "roce":
                text += f"; cheapest RoCEv2 that fits: {roce[0]}G ({roce[1].allreduce_s:.3g} s)" if roce else "; no RoCEv2 speed fits"
            result.append(Recommendation(bucket, gpus, transport, speed, text))
        else:
            speed, transport, est = min(options, key=lambda o: o[2].allreduce_s)
            text = (
                f"{budget}; nothing fits: fastest is {speed}G {TRANSPORT_TITLES[transport]} at {est.allreduce_s:.3g} s "
                f"({'network-bound' if est.network_bound else 'partly exposed'}); cut gradient traffic (more tensor/pipeline parallelism, larger batch)"
            )
            result.append(Recommendation(bucket, gpus, transport, speed, text))
    return result
