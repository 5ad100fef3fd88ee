"""Run the analysis for a plan and its jobs, and present it: one JSON-able result, rendered as
rich tables, as JSON, or as a Markdown section. Every number printed comes from that result, and
the assumptions travel with the numbers.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from rich.console import Console
from rich.table import Table

from fabricgen.analyze import compare as cmp
from fabricgen.analyze import ecmp
from fabricgen.analyze.costmodel import FORWARD_SHARE, Estimate, estimate
from fabricgen.analyze.job import ResolvedJob
from fabricgen.analyze.topology import Fabric
from fabricgen.model import Plan

ROUTING_OF = {"roce": "ecmp", "infiniband": "ftree"}


@dataclass(frozen=True, slots=True)
class Options:
    compare: bool = False
    simulate: bool = True
    trials: int = 256
    seed: int = 1
    flows_per_connection: int = 1


def _num(value: float) -> float:
    """Six significant digits: stable across platforms, plenty for an estimate."""
    return float(f"{value:.6g}")


def estimate_dict(est: Estimate) -> dict[str, Any]:
    return {
        "gradient_bytes": _num(est.gradient_bytes),
        "gpu_gbps": _num(est.gpu_gbps),
        "ring_s": _num(est.ring_s),
        "hierarchical_s": _num(est.hierarchical_s),
        "allreduce_s": _num(est.allreduce_s),
        "algorithm": est.algorithm,
        "dp_local": est.dp_local,
        "dp_servers": est.dp_servers,
        "compute_s": _num(est.compute_s),
        "forward_s": _num(est.forward_s),
        "backward_s": _num(est.backward_s),
        "ratio": _num(est.ratio),
        "ratio_overlap": _num(est.ratio_overlap),
        "step_no_overlap_s": _num(est.step_no_overlap_s),
        "step_overlap_s": _num(est.step_overlap_s),
        "busy_no_overlap": _num(est.busy_no_overlap),
        "busy_overlap": _num(est.busy_overlap),
        "network_bound": est.network_bound,
        "verdict": est.verdict,
    }


def analyse_job(plan: Plan, fabric: Fabric, resolved: ResolvedJob, options: Options) -> dict[str, Any]:
    """Everything about one job: inputs, assumptions, model, simulation, comparison."""
    job, network, placement = resolved.job, resolved.network, resolved.placement
    base = estimate(job, network)
    result: dict[str, Any] = {
        "name": job.name,
        "inputs": {
            "params": _num(job.params),
            "bytes_per_gradient": job.bytes_per_gradient,
            "gpus": job.gpus,
            "gpus_per_server": job.gpus_per_server,
            "nvlink_gbytes_per_s": _num(job.nvlink_gbytes_per_s),
            "data_parallel": job.data_parallel,
            "tensor_parallel": job.tensor_parallel,
            "pipeline_parallel": job.pipeline_parallel,
            "tokens_per_step": _num(job.tokens_per_step),
            "peak_tflops": _num(job.peak_tflops),
            "mfu": _num(job.mfu),
        },
        "assumptions": {
            "transport": plan.transport,
            "efficiency": resolved.efficiency,
            "latency_us": resolved.latency_us,
            "placement": f"first {placement.servers} servers in plan order ({placement.leaves} leaf/leaves); one rail (NIC) per GPU",
            "forward_share": _num(FORWARD_SHARE),
            "overlap": "the all-reduce overlaps the backward pass only",
            "traffic": "data-parallel gradient all-reduce only; tensor/pipeline traffic is not modelled",
        },
        "network": {
            "line_gbps": _num(network.line_gbps),
            "uplink_share": _num(network.share),
            "efficiency": _num(network.efficiency),
            "gpu_gbps": _num(network.gpu_gbps),
            "servers": placement.servers,
            "leaves": placement.leaves,
        },
        "estimate": estimate_dict(base),
    }
    slowdown: dict[str, float] = {}
    if options.simulate and len(fabric.spines):
        runs = ecmp.simulate(
            fabric,
            placement.servers,
            job.gpus_per_server,
            network.line_gbps,
            trials=options.trials,
            seed=options.seed,
            split=options.flows_per_connection,
        )
        ring = {r.routing: r for r in runs if r.pattern == "ring"}
        slowdown = {transport: ring[routing].slowdown_mean for transport, routing in ROUTING_OF.items()}
        result["simulation"] = {
            "trials": options.trials,
            "seed": options.seed,
            "flows_per_connection": options.flows_per_connection,
            "model": "fluid: a collective runs at the pace of its most loaded link; ideal = each leaf's off-leaf demand spread evenly over its uplinks",
            "results": [r.as_dict() for r in runs],
        }
        collided = replace(network, path_slowdown=slowdown[plan.transport] if placement.leaves > 1 else 1.0)
        result["estimate_with_collisions"] = {
            "routing": ROUTING_OF[plan.transport],
            "path_slowdown": _num(collided.path_slowdown),
            **estimate_dict(estimate(job, collided)),
        }
    if options.compare:
        sc = cmp.scenario(job, fabric, resolved.efficiency, resolved.latency_us, slowdown)
        result["compare"] = {
            "assumptions": [
                f"NIC ports per server stay {sc.nics_per_server}; leaves keep the plan's uplink share {sc.multi_leaf_share:.3g} once a job spans more than one leaf ({sc.servers_per_leaf} servers per leaf)",
                "path slowdown from the simulation (leaf-ordered ring): "
                + (
                    ", ".join(f"{cmp.TRANSPORT_TITLES[t]} x{slowdown[t]:.3g} ({ROUTING_OF[t]})" for t in cmp.TRANSPORTS)
                    if slowdown
                    else "not simulated (x1)"
                ),
                f"GPU counts step by {sc.step()} (whole servers and model-parallel groups), searched up to {cmp.MAX_GPUS}",
                f"recommendation: slowest speed whose all-reduce fits in {cmp.HEADROOM:.0%} of the backward pass; RoCEv2 before InfiniBand at equal speed",
            ],
            "rows": [
                {
                    "transport": row.transport,
                    "speed_gbps": row.speed,
                    "path_slowdown": _num(row.path_slowdown),
                    "network_bound_from_gpus": row.network_bound_from,
                    "exposed_from_gpus": row.exposed_from,
                    **estimate_dict(row.estimate),
                }
                for row in cmp.compare(sc)
            ],
            "recommendation": [
                {"bucket": r.bucket, "evaluated_gpus": r.gpus, "transport": r.transport, "speed_gbps": r.speed, "reasoning": r.reasoning}
                for r in cmp.recommend(sc)
            ],
        }
    return result


def analyse(plan: Plan, fabric: Fabric, jobs: list[ResolvedJob], options: Options) -> dict[str, Any]:
    return {
        "fabric": plan.name,
        "transport": plan.transport,
        "leaves": len(fabric.leaves),
        "spines": len(fabric.spines),
        "servers": len(fabric.server_leaf),
        "jobs": [analyse_job(plan, fabric, job, options) for job in jobs],
    }


def to_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=2, sort_keys=True) + "\n"


def _s(value: float) -> str:
    if value == 0:
        return "0"
    if value < 1e-3:
        return f"{value * 1e6:.3g} us"
    if value < 1:
        return f"{value * 1e3:.3g} ms"
    return f"{value:.3g} s"


def _count(value: float) -> str:
    for unit, factor in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if value >= factor:
            return f"{value / factor:g}{unit}"
    return f"{value:g}"


def _bytes(value: float) -> str:
    for unit, factor in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if value >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value:.0f} B"


def _table(title: str, *columns: str, labels: int = 1) -> Table:
    """The first `labels` columns name the row: never truncated or wrapped; the rest fold."""
    table = Table(title=title, title_justify="left", header_style="bold")
    for number, column in enumerate(columns):
        table.add_column(column, no_wrap=number < labels, overflow="fold")
    return table


def print_report(result: dict[str, Any], console: Console) -> None:
    console.print(
        f"[bold]{result['fabric']}[/bold] ({result['transport']}): {result['leaves']} leaves, {result['spines']} spines, {result['servers']} servers"
    )
    for job in result["jobs"]:
        _print_job(job, console)


def _print_job(job: dict[str, Any], console: Console) -> None:
    i, a, n, e = job["inputs"], job["assumptions"], job["network"], job["estimate"]
    console.print(
        f"\n[bold]job {job['name']}[/bold]: {_count(i['params'])} params, {i['gpus']} GPUs ({i['gpus_per_server']}/server), "
        f"DP {i['data_parallel']} x TP {i['tensor_parallel']} x PP {i['pipeline_parallel']}, {_count(i['tokens_per_step'])} tokens/step"
    )
    style = "bold red" if e["network_bound"] else "bold green"
    console.print(f"verdict: [{style}]{e['verdict']}[/{style}]")
    model = _table("Step model", "quantity", "value")
    model.add_row("gradient bytes per GPU per step", _bytes(e["gradient_bytes"]))
    model.add_row(
        "network per GPU",
        f"{n['line_gbps']:g}G line x {n['uplink_share']:.3g} uplink share x {n['efficiency']:.3g} efficiency = {n['gpu_gbps']:.4g} Gbit/s",
    )
    model.add_row("ring all-reduce", _s(e["ring_s"]))
    model.add_row(f"hierarchical all-reduce ({e['dp_local']} local x {e['dp_servers']} servers)", _s(e["hierarchical_s"]))
    model.add_row("compute (forward + backward)", f"{_s(e['compute_s'])} ({_s(e['forward_s'])} + {_s(e['backward_s'])})")
    model.add_row("comm / compute, no overlap", f"{e['ratio']:.3g} (GPUs busy {e['busy_no_overlap']:.1%})")
    model.add_row("exposed comm / compute, overlapped", f"{e['ratio_overlap']:.3g} (GPUs busy {e['busy_overlap']:.1%})")
    if "estimate_with_collisions" in job:
        c = job["estimate_with_collisions"]
        model.add_row(
            f"all-reduce with {c['routing']} collisions (x{c['path_slowdown']:.3g})",
            f"{_s(c['allreduce_s'])}: {c['verdict']}, GPUs busy {c['busy_overlap']:.1%} overlapped",
        )
    console.print(model)
    assumptions = _table("Assumptions", "assumption", "value")
    assumptions.add_row("transport efficiency", ", ".join(f"{k} {v:g}" for k, v in a["efficiency"].items()))
    assumptions.add_row("latency per ring step", ", ".join(f"{k} {v:g} us" for k, v in a["latency_us"].items()))
    assumptions.add_row("peak / MFU", f"{i['peak_tflops']:g} TFLOP/s x {i['mfu']:g}")
    assumptions.add_row("NVLink per GPU", f"{i['nvlink_gbytes_per_s']:g} GB/s")
    assumptions.add_row("bytes per gradient", str(i["bytes_per_gradient"]))
    for key in ("placement", "overlap", "traffic"):
        assumptions.add_row(key, a[key])
    console.print(assumptions)
    if "simulation" in job:
        sim = job["simulation"]
        table = _table(
            f"Flow simulation ({sim['trials']} trials, seed {sim['seed']}, {sim['flows_per_connection']} flow(s) per connection)",
            "pattern",
            "routing",
            "flows",
            "off-leaf",
            "max link load (mean / p99 / worst)",
            "link load p50 / p90 / p99",
            "ideal",
            "slowdown (mean / p99)",
            labels=2,
        )
        for r in sim["results"]:
            table.add_row(
                r["pattern"],
                r["routing"],
                str(r["flows"]),
                f"{r['crossing_flows']:g}",
                f"{r['max_util_mean']:.3g} / {r['max_util_p99']:.3g} / {r['max_util_worst']:.3g}",
                f"{r['link_util_p50']:.3g} / {r['link_util_p90']:.3g} / {r['link_util_p99']:.3g}",
                f"{r['ideal_util']:.3g}",
                f"x{r['slowdown_mean']:.3g} / x{r['slowdown_p99']:.3g}",
            )
        console.print(table)
        console.print("load = demand / capacity of a directed fabric link; " + sim["model"])
    if "compare" in job:
        comp = job["compare"]
        table = _table(
            "Compare",
            "transport",
            "speed",
            "paths",
            "per-GPU Gbit/s",
            "all-reduce",
            "compute",
            "comm/compute",
            "busy (overlap)",
            "exposed from",
            "network-bound from",
        )
        for r in comp["rows"]:
            table.add_row(
                cmp.TRANSPORT_TITLES[r["transport"]],
                f"{r['speed_gbps']}G",
                f"x{r['path_slowdown']:.3g}",
                f"{r['gpu_gbps']:.4g}",
                _s(r["allreduce_s"]),
                _s(r["compute_s"]),
                f"{r['ratio']:.3g}",
                f"{r['busy_overlap']:.1%}",
                _gpus(r["exposed_from_gpus"]),
                _gpus(r["network_bound_from_gpus"]),
            )
        console.print(table)
        rec = _table("Recommendation by cluster size", "cluster", "choice", "why (computed)")
        for r in comp["recommendation"]:
            rec.add_row(
                f"{r['bucket']} (at {r['evaluated_gpus']})", f"{r['speed_gbps']}G {cmp.TRANSPORT_TITLES[r['transport']]}", r["reasoning"]
            )
        console.print(rec)
        for line in comp["assumptions"]:
            console.print(f"- {line}", markup=False)


def _gpus(value: int | None) -> str:
    return f"{value} GPUs" if value is not None else f"> {cmp.MAX_GPUS}"


def markdown(result: dict[str, Any], chart: str | None) -> str:
    """A Markdown section for the fabric's docs; `chart` is the relative path of the figure."""
    lines = [f"## Will {result['fabric']} keep the GPUs busy?", ""]
    lines.append(
        f"`fabricgen analyze` on {result['fabric']} ({result['transport']}, {result['leaves']} leaves, {result['spines']} spines, {result['servers']} servers)."
    )
    lines.append("")
    for job in result["jobs"]:
        i, e, n, a = job["inputs"], job["estimate"], job["network"], job["assumptions"]
        lines += [f"### Job {job['name']}: {e['verdict']}", ""]
        lines += [
            "| quantity | value |",
            "| --- | --- |",
            f"| model | {_count(i['params'])} params, {i['bytes_per_gradient']} bytes per gradient, {_count(i['tokens_per_step'])} tokens/step |",
            f"| GPUs | {i['gpus']} ({i['gpus_per_server']} per server), DP {i['data_parallel']} x TP {i['tensor_parallel']} x PP {i['pipeline_parallel']} |",
            f"| gradient bytes per GPU per step | {_bytes(e['gradient_bytes'])} |",
            f"| network per GPU | {n['line_gbps']:g}G x {n['uplink_share']:.3g} uplink share x {n['efficiency']:.3g} efficiency = {n['gpu_gbps']:.4g} Gbit/s |",
            f"| ring / hierarchical all-reduce | {_s(e['ring_s'])} / {_s(e['hierarchical_s'])} |",
            f"| compute (forward + backward) | {_s(e['compute_s'])} |",
            f"| comm/compute, no overlap / overlapped | {e['ratio']:.3g} / {e['ratio_overlap']:.3g} |",
            f"| GPUs busy, no overlap / overlapped | {e['busy_no_overlap']:.1%} / {e['busy_overlap']:.1%} |",
        ]
        if "estimate_with_collisions" in job:
            c = job["estimate_with_collisions"]
            lines.append(
                f"| with simulated {c['routing']} collisions (x{c['path_slowdown']:.3g}) | {_s(c['allreduce_s'])}, {c['verdict']} |"
            )
        lines += [
            "",
            f"Assumptions: efficiency {', '.join(f'{k} {v:g}' for k, v in a['efficiency'].items())}; "
            f"ring-step latency {', '.join(f'{k} {v:g} us' for k, v in a['latency_us'].items())}; "
            f"{i['peak_tflops']:g} TFLOP/s peak x {i['mfu']:g} MFU; NVLink {i['nvlink_gbytes_per_s']:g} GB/s; {a['placement']}; {a['overlap']}; {a['traffic']}. "
            "Sources: docs/analyze.md.",
            "",
        ]
        if "simulation" in job:
            sim = job["simulation"]
            lines += [
                f"Flow simulation: {sim['trials']} trials, seed {sim['seed']}, {sim['flows_per_connection']} flow(s) per connection.",
                "",
                "| pattern | routing | flows | max link load mean / p99 | ideal | slowdown mean / p99 |",
                "| --- | --- | ---: | --- | ---: | --- |",
            ]
            for r in sim["results"]:
                lines.append(
                    f"| {r['pattern']} | {r['routing']} | {r['flows']} | {r['max_util_mean']:.3g} / {r['max_util_p99']:.3g} | {r['ideal_util']:.3g} | x{r['slowdown_mean']:.3g} / x{r['slowdown_p99']:.3g} |"
                )
            lines.append("")
        if "compare" in job:
            comp = job["compare"]
            lines += [
                "| transport | speed | path slowdown | all-reduce | compute | busy (overlap) | exposed from | network-bound from |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for r in comp["rows"]:
                lines.append(
                    f"| {cmp.TRANSPORT_TITLES[r['transport']]} | {r['speed_gbps']}G | x{r['path_slowdown']:.3g} | {_s(r['allreduce_s'])} | {_s(r['compute_s'])} | {r['busy_overlap']:.1%} | {_gpus(r['exposed_from_gpus'])} | {_gpus(r['network_bound_from_gpus'])} |"
                )
            lines += ["", "| cluster | choice | why (computed) |", "| --- | --- | --- |"]
            for r in comp["recommendation"]:
                lines.append(
                    f"| {r['bucket']} (at {r['evaluated_gpus']}) | {r['speed_gbps']}G {cmp.TRANSPORT_TITLES[r['transport']]} | {r['reasoning']} |"
                )
            lines.append("")
            lines += [f"- {line}" for line in comp["assumptions"]]
            lines.append("")
    if chart:
        lines += [f"![all-reduce and compute time per step]({chart})", ""]
    return "\n".join(lines)
