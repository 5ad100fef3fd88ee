"""Text (within 80 columns) and Markdown views of an analysis result (`report.analyse`).

The planned fabric's answer comes first, then the comparison, the checklist, warnings, the gap
by GPU count and load, and the recommendation. Wide tables (the simulation, `--compare`) keep to
a few short columns; `--markdown` has everything.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from fabricgen.analyze.compare import TITLES
from fabricgen.analyze.report import count, seconds, sig


def _table(title: str, *columns: str) -> Table:
    table = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right", overflow="fold")
    return table


def _share(value: float) -> str:
    return f"{value:.0%}"


def job_summary(job: dict[str, Any]) -> str:
    i = job["inputs"]
    return (
        f"{count(i['params'])} params, {i['gpus']} GPUs ({i['gpus_per_server']}/server), "
        f"DP {i['data_parallel']} x TP {i['tensor_parallel']} x PP {i['pipeline_parallel']}, "
        f"{count(i['tokens_per_step'])} tokens/step"
    )


def step_rows(job: dict[str, Any]) -> list[tuple[str, str]]:
    p = job["planned"]
    algos = f"ring {seconds(p['ring_s'])}, tree {seconds(p['tree_s'])}" + (f", SHARP {seconds(p['sharp_s'])}" if p["sharp_s"] else "")
    return [
        ("bus bandwidth per GPU", f"{sig(p['busbw_gbytes_per_s'])} GB/s"),
        ("all-reduce (NCCL's pick)", f"{seconds(p['allreduce_s'])} ({p['algorithm']})"),
        ("algorithms", algos),
        ("forward + backward", f"{seconds(p['forward_s'])} + {seconds(p['backward_s'])}"),
        ("micro-batches per step", str(p["micro_batches"])),
        ("overlap window (last backward)", seconds(p["overlap_window_s"])),
        ("exposed all-reduce", seconds(p["allreduce_exposed_s"]) if p["allreduce_exposed_s"] else "0 s"),
        *(
            [("pipeline activations", seconds(p["activation_s"])), ("pipeline bubble", seconds(p["bubble_s"]))]
            if p["bubble_s"] or p["activation_s"]
            else []
        ),
        *([("experts' all-to-alls", f"{seconds(p['all_to_all_s'])} ({p['all_to_all_calls']:,} calls)")] if p["all_to_all_calls"] else []),
        ("step (exposed network)", f"{seconds(p['step_s'])} ({seconds(p['exposed_s']) if p['exposed_s'] else '0 s'})"),
        ("GPUs busy", _share(p["busy"])),
        ("MFU lost to the network", f"{p['mfu_lost'] * 100:.1f} points"),
    ]


def gap_rows(job: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    gap = job["gap"]
    header = ["GPUs"] + [f"load {load:.0%}" for load in gap["loads"]]
    rows = [[f"{gpus:,}"] + [_share(c) for c in cells] for gpus, cells in zip(gap["gpus"], gap["roce_share_of_infiniband"], strict=True)]
    return header, rows


def print_report(result: dict[str, Any], console: Console) -> None:
    tiers = f"{result['tiers']} tiers: {result['leaves']} leaves, {result['spines']} spines"
    if result["superspines"]:
        tiers += f", {result['superspines']} super-spines"
    rails = f", {result['rails']} rails per unit" if result["rails"] else ""
    over = result["oversubscription"]
    ratios = f"leaf {sig(over['leaf'])}:1" + (f", spine {sig(over['spine'])}:1" if result["superspines"] else "")
    console.print(
        f"[bold]{result['fabric']}[/bold] ({result['transport']}, {tiers}, {result['servers']} servers{rails}; oversubscription {ratios})"
    )
    for job in result["jobs"]:
        _print_job(job, console)


def _print_job(job: dict[str, Any], console: Console) -> None:
    console.print(f"\n[bold]job {job['name']}[/bold]: {job_summary(job)}", markup=True, highlight=False)
    for line in job["headline"]:
        console.print(line, markup=False)
    model = _table("Step model (planned fabric)", "quantity", "value")
    for quantity, value in step_rows(job):
        model.add_row(quantity, value)
    console.print(model)
    console.print("Checklist:", style="bold")
    for line in job["checklist"]:
        console.print(f"- {line}", markup=False)
    for line in job["warnings"]:
        console.print(f"warning: {line}", style="yellow", markup=False)
    header, cells = gap_rows(job)
    gap = _table("RoCEv2 throughput as % of InfiniBand (planned balancing)", *header)
    for cell_row in cells:
        gap.add_row(*cell_row)
    console.print(gap)
    console.print("Recommendation by cluster size:", style="bold")
    for r in job["recommendation"]:
        speed = f"{r['speed_gbps']}G " if r["speed_gbps"] else ""
        console.print(f"- {r['bucket']} ({r['gpus']:,} GPUs): {speed}{r['choice']}", markup=False)
        console.print(f"  decided by: {r['deciding']}; {r['reasoning']}", markup=False)
    if "simulation" in job:
        _print_simulation(job["simulation"], console)
    if "compare" in job:
        _print_compare(job["compare"], console)
    console.print("Assumptions that bound this answer:", style="bold")
    for line in job["assumptions"]:
        console.print(f"- {line}", markup=False)
    console.print("Sources: docs/analyze.md; all tables: --markdown PATH or --format json", markup=False)


def _print_simulation(sim: dict[str, Any], console: Console) -> None:
    table = _table(
        f"Flow simulation ({sim['trials']} trials, seed {sim['seed']}, {sim['flows_per_nic']} flows per NIC)",
        "pattern",
        "routing",
        "flows",
        "max load",
        "ideal",
        "factor",
        "p99",
    )
    for r in sim["results"]:
        table.add_row(
            r["pattern"],
            r["routing"],
            f"{r['flows']:,}",
            sig(r["max_util_mean"]),
            sig(r["ideal_util"]),
            f"x{sig(r['path_factor_mean'])}",
            f"x{sig(r['path_factor_p99'])}",
        )
    console.print(table)


COMPARE_SERIES = (("infiniband", "InfiniBand"), ("roce_adaptive", "RoCEv2 AR"), ("roce_ecmp", "RoCEv2 ECMP"))


def compare_rows(rows: list[dict[str, Any]]) -> list[list[str]]:
    """Per speed and transport: the all-reduce, what it exposes of the step, MFU lost and that
    transport's own verdict (800G marked as outside the calibration)."""
    table = []
    for r in rows:
        speed = f"{r['speed_gbps']}G" + ("" if r["calibrated"] else "*")
        for key, title in COMPARE_SERIES:
            e = r[key]
            exposed = f"{seconds(e['exposed_s'])}/{seconds(e['step_s'])}" if e["exposed_s"] else f"0/{seconds(e['step_s'])}"
            table.append([speed, title, seconds(e["allreduce_s"]), exposed, f"{e['mfu_lost'] * 100:.1f}", e["verdict"]])
            speed = ""
    return table


COMPARE_HEADER = ["speed", "transport", "all-reduce", "exposed/step", "MFU lost", "verdict"]


def _print_compare(rows: list[dict[str, Any]], console: Console) -> None:
    table = _table("Same job at other NIC speeds (* outside the calibration)", *COMPARE_HEADER)
    for row in compare_rows(rows):
        table.add_row(*row)
    console.print(table)


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def markdown(result: dict[str, Any]) -> str:
    """A Markdown section for the fabric's docs."""
    lines = [f"## Will {result['fabric']} keep the GPUs busy?", ""]
    for job in result["jobs"]:
        lines += _md_job(job)
    return "\n".join(lines)


def _md_job(job: dict[str, Any]) -> list[str]:
    lines = [f"### Job {job['name']}", "", job_summary(job) + ".", ""]
    lines += [f"**{job['headline'][0]}.**", "", *[line + "." for line in job["headline"][1:]], ""]
    lines += [*_md_table(["quantity", "value"], [list(r) for r in step_rows(job)]), ""]
    lines += ["Checklist:", "", *[f"- {line}" for line in job["checklist"]], ""]
    lines += [f"> warning: {line}" for line in job["warnings"]] + ([""] if job["warnings"] else [])
    header, rows = gap_rows(job)
    lines += ["RoCEv2 throughput (planned balancing) as a share of InfiniBand's:", "", *_md_table(header, rows), ""]
    rec = [
        [f"{r['bucket']} ({r['gpus']:,})", f"{r['speed_gbps'] or '-'}G {r['choice']}", r["deciding"], r["reasoning"]]
        for r in job["recommendation"]
    ]
    lines += [*_md_table(["cluster", "choice", "decided by", "why (computed)"], rec), ""]
    if "simulation" in job:
        lines += _md_simulation(job["simulation"])
    if "compare" in job:
        lines += _md_compare(job["compare"])
    lines += ["Assumptions that bound this answer:", "", *[f"- {line}" for line in job["assumptions"]], ""]
    return [*lines, "Model, defaults and sources: docs/analyze.md.", ""]


def _md_simulation(sim: dict[str, Any]) -> list[str]:
    rows = [
        [
            r["pattern"],
            r["routing"],
            str(r["flows"]),
            sig(r["max_util_mean"]),
            sig(r["ideal_util"]),
            f"x{sig(r['path_factor_mean'])}",
            f"x{sig(r['path_factor_p99'])}",
        ]
        for r in sim["results"]
    ]
    header = ["pattern", "routing", "flows", "max load", "ideal", "factor", "factor p99"]
    return [
        f"Flow simulation: {sim['trials']} trials, seed {sim['seed']}, {sim['flows_per_nic']} flows per NIC.",
        "",
        *_md_table(header, rows),
        "",
    ]


def _md_compare(compare: list[dict[str, Any]]) -> list[str]:
    return ["Same job at other NIC speeds (* outside the calibration):", "", *_md_table(COMPARE_HEADER, compare_rows(compare)), ""]


__all__ = ["TITLES", "markdown", "print_report"]
