"""Run the analysis for a fabric and its jobs: one JSON-able result that the text, JSON and
Markdown views (`present`) print. Every number printed comes from it; the assumptions travel
with the numbers. Reads no plan: `planview` does.

Text rounds to two significant figures (the inputs are good to +-20 %); JSON keeps three.
Rendering lives in `present`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from fabricgen.analyze import compare as cmp
from fabricgen.analyze import ecmp
from fabricgen.analyze.costmodel import EXPOSED_LIMIT, NETWORK_BOUND_SHARE, Estimate, Job
from fabricgen.analyze.job import ResolvedJob
from fabricgen.analyze.topology import Fabric

CALIBRATED_EFFICIENCY = (0.75, 0.98)


@dataclass(frozen=True, slots=True)
class Options:
    compare: bool = False
    simulate: bool = True
    trials: int = 256
    seed: int = 1


def sig(value: float, digits: int = 2) -> str:
    """Two significant figures, no exponent: 0.012, 1.2, 120, 12,000.

    >>> sig(0.012345), sig(1.26), sig(123.4), sig(12345.0)
    ('0.012', '1.3', '120', '12,000')
    """
    if value == 0 or value != value or value in (float("inf"), float("-inf")):
        return "0" if value == 0 else str(value)
    rounded = float(f"{value:.{digits}g}")
    return f"{rounded:,.0f}" if abs(rounded) >= 10 ** (digits - 1) else f"{rounded:g}"


def _num(value: float) -> float:
    return float(f"{value:.3g}")


def seconds(value: float) -> str:
    if value < 1e-3:
        return f"{sig(value * 1e6)} us"
    if value < 1:
        return f"{sig(value * 1e3)} ms"
    return f"{sig(value)} s"


def count(value: float) -> str:
    for unit, factor in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= factor:
            return f"{value / factor:g}{unit}"
    return f"{value:g}"


def estimate_dict(est: Estimate) -> dict[str, Any]:
    return {
        "allreduce_s": _num(est.allreduce_s),
        "algorithm": est.algorithm,
        "ring_s": _num(est.ring_s),
        "tree_s": _num(est.tree_s),
        "sharp_s": _num(est.sharp_s) if est.sharp_s != float("inf") else None,
        "busbw_gbytes_per_s": _num(est.busbw_bytes_per_s / 1e9),
        "gpu_gbps": _num(est.gpu_gbps),
        "compute_s": _num(est.compute_s),
        "forward_s": _num(est.forward_s),
        "backward_s": _num(est.backward_s),
        "micro_batches": est.micro_batches,
        "overlap_window_s": _num(est.overlap_window_s),
        "headroom": _num(est.headroom),
        "exposed_s": _num(est.exposed_s),
        "allreduce_exposed_s": _num(est.allreduce_exposed_s),
        "bubble_s": _num(est.bubble_s),
        "activation_s": _num(est.activation_s),
        "all_to_all_s": _num(est.all_to_all_s),
        "all_to_all_calls": est.all_to_all_calls,
        "step_s": _num(est.step_s),
        "exposed_share": _num(est.exposed_share),
        "busy": _num(est.busy),
        "mfu_lost": _num(est.mfu_lost),
        "verdict": est.verdict,
    }


def paths_of(fabric: Fabric, rj: ResolvedJob, options: Options) -> tuple[cmp.Paths, list[ecmp.SimResult]]:
    """Path factors of the job's ring and double binary tree with NCCL's real number of flows:
    ftree and ideal balancing (deterministic) and static ECMP over `trials` hash draws, always;
    with `simulate`, every other pattern for the simulation table too."""
    placement = rj.placement
    rails = max(1, round(placement.nics_per_gpu * placement.gpus_per_server))
    nic_gbps = placement.line_gbps / placement.nics_per_gpu
    args = (fabric, placement.servers, rails, nic_gbps)
    moe = rj.job.experts > 0 and rj.job.ep_servers > 1
    patterns = ecmp.PATTERNS if options.simulate else ("ring", "tree", "all-to-all") if moe else ("ring", "tree")
    found = ecmp.simulate(*args, trials=options.trials, seed=options.seed, split=rj.flows_per_nic, pxn=rj.pxn, patterns=patterns)
    runs = found if options.simulate else []
    by = {(r.pattern, r.routing): r for r in found}
    ring, tree = by[("ring", "ftree")], by[("tree", "ftree")]
    ring_ecmp, tree_ecmp = by[("ring", "ecmp")], by[("tree", "ecmp")]
    paths = cmp.Paths(
        ftree=ring.path_factor_mean,
        adaptive=ring.adaptive_factor,
        ecmp=ring_ecmp.path_factor_mean,
        ecmp_p99=ring_ecmp.path_factor_p99,
        tree_ftree=tree.path_factor_mean,
        tree_adaptive=tree.adaptive_factor,
        tree_ecmp=tree_ecmp.path_factor_mean,
        tree_ecmp_p99=tree_ecmp.path_factor_p99,
        util_ftree=ring.max_util_mean,
        util_adaptive=ring.ideal_util,
        util_ecmp=ring_ecmp.max_util_mean,
    )
    if moe:
        a2a, a2a_ecmp = by[("all-to-all", "ftree")], by[("all-to-all", "ecmp")]
        paths = replace(
            paths,
            all_to_all_ftree=a2a.path_factor_mean,
            all_to_all_adaptive=a2a.adaptive_factor,
            all_to_all_ecmp=a2a_ecmp.path_factor_mean,
            all_to_all_ecmp_p99=a2a_ecmp.path_factor_p99,
        )
    return paths, runs


HOW = {"infiniband": "ftree routing", "adaptive": "adaptive routing", "ecmp": "static ECMP, mean over hash draws"}


def _headline(transport: str, speed: float, est: Estimate, how: str, gpus_per_nic: float) -> list[str]:
    """The planned answer in the words every other verdict uses: what overlaps, what is exposed."""
    shared = f" (one NIC per {gpus_per_nic:g} GPUs)" if gpus_per_nic > 1 else ""
    head = f"{sig(speed)}G {cmp.TITLES[transport]}{shared} as planned ({how}): {est.verdict}"
    if est.exposed_s > 0:
        head += f", the network exposes {seconds(est.exposed_s)} of a {seconds(est.step_s)} step ({est.exposed_share:.1%})"
    else:
        head += f", the all-reduce hides in {sig(est.headroom)}x its time"
    detail = (
        f"all-reduce {seconds(est.allreduce_s)} ({est.algorithm}) against the {seconds(est.overlap_window_s)} backward pass "
        f"of the last of {est.micro_batches} micro-batches; MFU {est.mfu:.0%} -> {est.mfu - est.mfu_lost:.1%}"
    )
    if est.bubble_s or est.activation_s:
        detail += (
            f"; pipeline: {seconds(est.activation_s)} of activations between stages (in the exposed time), {seconds(est.bubble_s)} bubble"
        )
    if est.all_to_all_calls:
        detail += (
            f"; experts: {est.all_to_all_calls:,} all-to-alls of {seconds(est.all_to_all_s / est.all_to_all_calls)}, "
            f"{seconds(est.all_to_all_s)} a step (in the exposed time)"
        )
    return [head, detail]


def planned(fabric: Fabric, rj: ResolvedJob, paths: cmp.Paths) -> dict[str, Any]:
    """The planned fabric's answer first, then InfiniBand against RoCEv2 on the same fabric at
    the same speed."""
    line = rj.placement.line_gbps
    nic = line / rj.placement.nics_per_gpu
    ib = cmp.at(rj, "infiniband", line, paths.factors("infiniband", "adaptive"))
    roce_ar = cmp.at(rj, "roce", line, paths.factors("roce", "adaptive"))
    roce_ecmp = cmp.at(rj, "roce", line, paths.factors("roce", "ecmp"))
    sharing = 1 / rj.placement.nics_per_gpu
    if fabric.transport == "infiniband":
        main, lines = ib, _headline("infiniband", nic, ib, HOW["infiniband"], sharing)
    else:
        main = roce_ecmp if rj.roce_load_balancing == "ecmp" else roce_ar
        lines = _headline("roce", nic, main, HOW[rj.roce_load_balancing], sharing)
    shares = [cmp.ib_share(ib, roce_ecmp), cmp.ib_share(ib, roce_ar)]
    low, high = f"{min(shares):.0%}", f"{max(shares):.0%}"
    span, how = f"{low}-{high}", "static ECMP .. adaptive routing"
    if low == high:
        span, how = high, "static ECMP and adaptive routing alike"
    if rj.sharp:
        how += "; InfiniBand with SHARP, which RoCEv2 lacks"
    lines.append(f"RoCEv2 on this fabric reaches {span} of InfiniBand's all-reduce throughput at {sig(nic)}G ({how})")
    unlucky = cmp.at(rj, "roce", line, (paths.ecmp_p99, paths.tree_ecmp_p99, paths.all_to_all_ecmp_p99))
    if fabric.transport == "roce":
        lines.append(_unlucky_line(paths, unlucky))
    return {
        "headline": lines,
        "estimate": main,
        "infiniband": estimate_dict(ib),
        "roce_adaptive": estimate_dict(roce_ar),
        "roce_ecmp": estimate_dict(roce_ecmp),
        "roce_ecmp_p99": estimate_dict(unlucky),
        "roce_share_of_infiniband": [_num(min(shares)), _num(max(shares))],
    }


def _unlucky_line(paths: cmp.Paths, est: Estimate) -> str:
    """Static ECMP at the 99th-percentile hash draw: a job keeps its draw for its life."""
    exposed = f"exposes {seconds(est.exposed_s)} of a {seconds(est.step_s)} step" if est.exposed_s else "exposes nothing"
    experts = f", all-to-all x{sig(paths.all_to_all_ecmp_p99)}" if est.all_to_all_calls else ""
    mean = f", x{sig(paths.all_to_all_ecmp)}" if est.all_to_all_calls else ""
    return (
        f"static ECMP at the 99th-percentile hash draw (ring x{sig(paths.ecmp_p99)}, tree x{sig(paths.tree_ecmp_p99)}{experts}; "
        f"mean x{sig(paths.ecmp)}, x{sig(paths.tree_ecmp)}{mean}): {est.verdict}, {exposed}"
    )


def assumptions(rj: ResolvedJob, est: Estimate) -> list[str]:
    """What bounds the answer, printed with it (not only in docs/analyze.md)."""
    job = rj.job
    pipeline = []
    if job.pipeline_parallel > 1:
        pipeline = [
            f"pipeline {job.pipeline_parallel} stages, 1F1B: bubble (p-1)/m of the compute; activations of hidden size "
            f"{job.hidden}{'' if job.hidden_size else ' (from params)'} sent forward and back on the critical path, "
            "at the NIC's achieved rate (no path factor); MFU is the compute-only efficiency"
        ]
    return [
        f"overlap: the gradient all-reduce hides only under the last of {est.micro_batches} micro-batches' backward pass "
        f"({count(job.tokens_per_step)} tokens / ({job.sequence_length} tokens x {job.micro_batch_size} x DP {job.data_parallel})), "
        "as DDP no_sync and Megatron overlap it",
        "not counted: tensor-parallel traffic (NVLink, inside a server), parameter all-gathers, data loading, checkpoints",
        f"congestion {rj.congestion:g} stretches each network step's latency tail; it takes no bandwidth",
        f"jitter per network step ({rj.jitter_us['infiniband']:g} us InfiniBand, {rj.jitter_us['roce']:g} us RoCEv2) is an "
        "assumption; efficiencies are calibrated on 2-6 servers at 100-400G",
        f"verdicts: compute-bound when the network exposes at most {EXPOSED_LIMIT:.0%} of the step, "
        f"network-bound from {NETWORK_BOUND_SHARE:.0%}",
        *pipeline,
        *_expert_assumptions(job),
    ]


def _expert_assumptions(job: Job) -> list[str]:
    """What the all-to-all of a mixture-of-experts job is charged, and what it is not."""
    if not job.experts:
        return []
    where = (
        f"across {job.ep_servers} servers ({job.ep_local} of the {job.expert_parallel} ranks per server on NVLink)"
        if job.ep_servers > 1
        else "inside one server (NVLink only)"
    )
    return [
        f"experts: {job.experts}, top-{job.experts_per_token}, expert_parallel {job.expert_parallel} {where}: 4 all-to-alls "
        f"(dispatch, combine, forward and backward) per MoE layer ({job.moe_layers_per_stage} per stage"
        f"{'' if job.moe_layers else ', every layer'}) and micro-batch, uniform routing, all exposed (no overlap with "
        "compute); the all-to-all pattern's path factor; params counts as dense for compute, gradients and memory"
    ]


def checklist(rj: ResolvedJob, est: Estimate, paths: cmp.Paths, transport: str) -> list[str]:
    """The field's checklist, computed where the plan can answer."""
    job = rj.job
    lines = [
        f"all-reduce {seconds(est.allreduce_s)} vs forward pass {seconds(est.forward_s)}: "
        + ("shorter" if est.allreduce_s <= est.forward_s else "longer"),
    ]
    if rj.placement.servers > 1:
        lines.append(f"the job leaves one NVLink node: {rj.placement.servers} servers, {rj.placement.describe()}")
    else:
        lines.append("the job stays inside one NVLink node: the all-reduce never touches the fabric")
    factors = paths.factors(transport, rj.roce_load_balancing)
    busy = min(1.0, paths.util_adaptive * rj.efficiency[transport] / max(paths.adaptive, 1.0))
    verdict = "under" if busy <= cmp.UTILISATION_CEILING else "over"
    lines.append(f"fabric uplinks during the all-reduce: {busy:.0%} of capacity (busiest leaf or pod), {verdict} the 70% ceiling")
    twice = replace(job, params=job.params * 2)
    bigger = cmp.at(rj, transport, rj.placement.line_gbps, factors, twice)
    fits = f"{bigger.verdict} ({seconds(bigger.exposed_s)} exposed)"
    memory = "fits" if twice.memory_bytes_per_gpu <= job.gpu_memory_gb * 1e9 else "does not fit"
    lines.append(
        f"a 2x model ({count(twice.params)}): all-reduce {seconds(bigger.allreduce_s)}, {fits}; "
        f"{sig(twice.memory_bytes_per_gpu / 1e9)} GB per GPU {memory} in {sig(job.gpu_memory_gb)} GB"
    )
    return lines


def warnings(rj: ResolvedJob, nic_gbps: float, compare: bool = False) -> list[str]:
    """Sanity checks: memory per GPU, inputs outside what the model was calibrated for."""
    job, found = rj.job, []
    need = job.memory_bytes_per_gpu
    if need > job.gpu_memory_gb * 1e9:
        found.append(
            f"weights, gradients and Adam state need {sig(need / 1e9)} GB per GPU "
            f"({count(job.params)} / (TP {job.tensor_parallel} x PP {job.pipeline_parallel})"
            + (f", optimizer sharded over DP {job.data_parallel}" if job.optimizer_sharding else "")
            + f"), a GPU has {sig(job.gpu_memory_gb)} GB: raise tensor or pipeline parallelism"
        )
    calibrated = ", ".join(f"{s}G" for s in cmp.CALIBRATED_NIC_GBPS)
    if round(nic_gbps) not in cmp.CALIBRATED_NIC_GBPS:
        found.append(f"{sig(nic_gbps)}G NICs are outside the calibration ({calibrated})")
    if compare:
        beyond = [f"{s}G" for s in cmp.SPEEDS if s not in cmp.CALIBRATED_NIC_GBPS]
        found.append(f"--compare rows at {', '.join(beyond)} are outside the calibration ({calibrated}): extrapolated")
    for transport, value in rj.efficiency.items():
        low, high = CALIBRATED_EFFICIENCY
        if not low <= value <= high:
            found.append(f"efficiency {transport} {value:g} is outside the published range {low:g}-{high:g}")
    return found


def inputs_dict(rj: ResolvedJob) -> dict[str, Any]:
    """The job's inputs as resolved (defaults filled in), for the JSON."""
    job = rj.job
    return {
        "params": _num(job.params),
        "gpus": job.gpus,
        "gpus_per_server": job.gpus_per_server,
        "data_parallel": job.data_parallel,
        "tensor_parallel": job.tensor_parallel,
        "pipeline_parallel": job.pipeline_parallel,
        "tokens_per_step": _num(job.tokens_per_step),
        "bytes_per_gradient": job.bytes_per_gradient,
        "peak_tflops": job.peak_tflops,
        "mfu": job.mfu,
        "nvlink_gbytes_per_s": job.nvlink_gbytes_per_s,
        "gpu_memory_gb": job.gpu_memory_gb,
        "bucket_mb": job.bucket_mb,
        "sequence_length": job.sequence_length,
        "micro_batch_size": job.micro_batch_size,
        "hidden_size": job.hidden,
        "experts": job.experts,
        "expert_parallel": job.expert_parallel,
        "experts_per_token": job.experts_per_token,
        "moe_layers": (job.moe_layers or job.layers) if job.experts else 0,
        "efficiency": rj.efficiency,
        "latency_us": rj.latency_us,
        "jitter_us": rj.jitter_us,
        "nccl": {
            "channels_per_nic": rj.channels_per_nic,
            "qps_per_connection": rj.qps_per_connection,
            "sharp": rj.sharp,
            "pxn": rj.pxn,
        },
        "congestion": rj.congestion,
        "roce_load_balancing": rj.roce_load_balancing,
    }


def analyse_job(fabric: Fabric, rj: ResolvedJob, options: Options) -> dict[str, Any]:
    """Everything about one job: the planned answer, the comparison, checklist, simulation."""
    job, placement = rj.job, rj.placement
    paths, runs = paths_of(fabric, rj, options)
    answer = planned(fabric, rj, paths)
    est: Estimate = answer.pop("estimate")
    nic = placement.line_gbps / placement.nics_per_gpu
    gap = cmp.gap_table(rj, placement.line_gbps, paths)
    result: dict[str, Any] = {
        "name": job.name,
        "inputs": inputs_dict(rj),
        "placement": placement.describe(),
        "planned": {"transport": fabric.transport, "nic_gbps": _num(nic), **estimate_dict(est)},
        **answer,
        "checklist": checklist(rj, est, paths, fabric.transport),
        "warnings": warnings(rj, nic, options.compare),
        "assumptions": assumptions(rj, est),
        "gap": {
            "gpus": [g for g, _ in gap],
            "loads": list(cmp.GAP_LOADS),
            "roce_share_of_infiniband": [[_num(c) for c in cells] for _, cells in gap],
        },
        "recommendation": [
            {
                "bucket": r.bucket,
                "gpus": r.gpus,
                "choice": r.choice,
                "speed_gbps": r.speed,
                "deciding": r.deciding,
                "reasoning": r.reasoning,
            }
            for r in cmp.recommend(rj, paths, fabric.transport)
        ],
    }
    result["paths"] = {name: _num(getattr(paths, name)) for name in cmp.Paths.__slots__}
    if runs:
        result["simulation"] = {
            "trials": options.trials,
            "seed": options.seed,
            "flows_per_nic": rj.flows_per_nic,
            "results": [r.as_dict() for r in runs],
        }
    if options.compare:
        result["compare"] = [
            {
                "speed_gbps": row.speed,
                "calibrated": row.calibrated,
                **{key: estimate_dict(getattr(row, key)) for key in ("infiniband", "roce_adaptive", "roce_ecmp")},
            }
            for row in cmp.speed_rows(rj, paths)
        ]
    return result


def analyse(name: str, fabric: Fabric, jobs: list[ResolvedJob], options: Options) -> dict[str, Any]:
    return {
        "fabric": name,
        "transport": fabric.transport,
        "tiers": fabric.tiers,
        "leaves": len(fabric.leaves),
        "spines": len(fabric.spines),
        "superspines": len(fabric.superspines),
        "servers": fabric.servers,
        "rails": fabric.rails,
        "oversubscription": {
            "leaf": _num(1 / float(fabric.leaf_share.min())) if len(fabric.leaf_share) else 1.0,
            "spine": _num(1 / float(fabric.spine_share.min())) if len(fabric.spine_share) else 1.0,
        },
        "jobs": [analyse_job(fabric, job, options) for job in jobs],
    }


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=2, sort_keys=True) + "\n"
