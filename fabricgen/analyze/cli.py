"""`fabricgen analyze INVENTORY`: will this fabric keep the GPUs busy?

Reads the checked plan (through `planview`, the one module that knows its shape) and the
jobs; flags override any job setting. The heavy
imports (NumPy, matplotlib) happen only when the command runs, so other commands start fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from fabricgen.core.counts import COUNT_PATTERN, parse_count


class CountType(click.ParamType[str, Any]):
    """`70B`, `4M`, `1000`: kept as text (as in the inventory), checked here."""

    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from fabricgen.core.units import normalise_count

        canonical, why = normalise_count(str(value))
        if why:
            self.fail(why, param, ctx)
        try:
            if parse_count(canonical) <= 0:
                raise ValueError("must be more than 0")
        except ValueError as exc:
            self.fail(f"{value!r}: {exc} (pattern {COUNT_PATTERN})", param, ctx)
        return canonical


POSITIVE = click.FloatRange(min=0, min_open=True)
FRACTION = click.FloatRange(min=0, max=1, min_open=True)
OVERRIDES = (
    ("params", "--params", CountType(), "Model parameters, e.g. 7B, 70B, 405B"),
    ("bytes_per_gradient", "--bytes-per-gradient", click.Choice(["1", "2", "4"]), "2 = bf16/fp16, 4 = fp32"),
    ("gpus", "--gpus", click.IntRange(min=1), "GPUs in the job [default: all of the fabric]"),
    ("gpus_per_server", "--gpus-per-server", click.IntRange(min=1), "GPUs per server [default: NIC ports per server]"),
    ("nvlink_gbytes_per_s", "--nvlink-gbytes", POSITIVE, "NVLink GB/s per GPU and direction"),
    ("data_parallel", "--dp", click.IntRange(min=1), "Data-parallel degree [default: gpus/(tp*pp)]"),
    ("tensor_parallel", "--tp", click.IntRange(min=1), "Tensor-parallel degree [default: GPUs per server]"),
    ("pipeline_parallel", "--pp", click.IntRange(min=1), "Pipeline-parallel degree"),
    ("tokens_per_step", "--tokens-per-step", CountType(), "Global batch in tokens, e.g. 4M"),
    ("sequence_length", "--sequence-length", click.IntRange(min=1), "Tokens per sequence [default: 4096]"),
    ("micro_batch_size", "--micro-batch-size", click.IntRange(min=1), "Sequences per micro-batch per GPU [default: 1]"),
    ("hidden_size", "--hidden-size", click.IntRange(min=1), "Model width (pipeline activations, MoE tokens) [default: from --params]"),
    ("experts", "--experts", click.IntRange(min=1), "Mixture of experts: experts per MoE layer [default: dense]"),
    ("expert_parallel", "--ep", click.IntRange(min=1), "Expert-parallel degree (all-to-all group) [default: 1]"),
    ("experts_per_token", "--experts-per-token", click.IntRange(min=1), "Top-k routing: experts per token [default: 2]"),
    ("moe_layers", "--moe-layers", click.IntRange(min=1), "MoE layers [default: every layer, hidden/128]"),
    ("peak_tflops", "--peak-tflops", POSITIVE, "Peak dense TFLOP/s per GPU"),
    ("mfu", "--mfu", FRACTION, "Assumed model FLOPs utilisation"),
    ("gpu_memory_gb", "--gpu-memory-gb", POSITIVE, "Memory per GPU, GB"),
    ("bucket_mb", "--bucket-mb", POSITIVE, "Gradient bucket size, MB (one all-reduce call each)"),
    ("congestion", "--congestion", click.FloatRange(min=0, max=0.95), "Fabric load from other traffic, 0-0.95"),
    ("roce_load_balancing", "--roce-load-balancing", click.Choice(["adaptive", "ecmp"]), "RoCEv2: adaptive routing or static ECMP"),
    ("efficiency.infiniband", "--efficiency-infiniband", FRACTION, "Fraction of line rate on InfiniBand"),
    ("efficiency.roce", "--efficiency-roce", FRACTION, "Fraction of line rate on RoCEv2"),
    ("latency_us.network", "--latency-network-us", click.FloatRange(min=0), "Base latency of a network step, us"),
    ("latency_us.nvlink", "--latency-nvlink-us", click.FloatRange(min=0), "Latency of an NVLink step, us"),
    ("jitter_us.infiniband", "--jitter-infiniband-us", click.FloatRange(min=0), "Mean latency tail per step on InfiniBand, us"),
    ("jitter_us.roce", "--jitter-roce-us", click.FloatRange(min=0), "Mean latency tail per step on RoCEv2, us"),
    ("nccl.channels_per_nic", "--channels-per-nic", click.IntRange(min=1, max=64), "NCCL ring channels per NIC"),
    ("nccl.qps_per_connection", "--qps-per-connection", click.IntRange(min=1, max=128), "NCCL_IB_QPS_PER_CONNECTION"),
    ("nccl.sharp", "--sharp/--no-sharp", bool, "In-network reduction (SHARP) on InfiniBand"),
    ("nccl.pxn", "--pxn/--no-pxn", bool, "PXN: all-to-all via the GPU on the destination's rail"),
)


def _override_options(func: Any) -> Any:
    for key, flag, kind, text in reversed(OVERRIDES):
        func = click.option(flag, key.replace(".", "__"), type=kind, default=None, help=text)(func)
    return func


@click.command()
@click.argument("inventory", type=click.Path(path_type=Path))
@click.option("--job", "only", help="Analyse only this job of the inventory's jobs:")
@_override_options
@click.option("--compare", is_flag=True, help="Same job at 100/200/400/800G, InfiniBand vs RoCEv2, and a recommendation by cluster size")
@click.option(
    "--simulate/--no-simulate",
    default=True,
    show_default=True,
    help="The flow simulation table: every traffic pattern under ECMP and ftree (the planned ring and tree paths are always computed)",
)
@click.option("--trials", type=click.IntRange(min=1, max=100000), default=256, show_default=True, help="Simulation trials")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="Simulation seed")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option(
    "--markdown",
    "markdown_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Also write a Markdown section (and an SVG chart next to it)",
)
def analyze(
    inventory: Path,
    only: str | None,
    compare: bool,
    simulate: bool,
    trials: int,
    seed: int,
    output_format: str,
    markdown_path: Path | None,
    **overrides: Any,
) -> None:
    """Estimate whether INVENTORY's fabric keeps a training job's GPUs busy: NCCL all-reduce
    against compute, InfiniBand against RoCEv2, flow collisions on the planned links, and the
    recommendation by cluster size."""
    from rich.console import Console

    from fabricgen.analyze import present, report
    from fabricgen.analyze.job import job_settings, resolve_all
    from fabricgen.analyze.planview import fabric_of
    from fabricgen.analyze.topology import TopologyError
    from fabricgen.commands.common import EXIT_BAD_INPUT, checked_plan, err_console, run_stage
    from fabricgen.plan.passes.sources import job_source

    checked = checked_plan(inventory)
    plan = checked.plan
    given = {
        key.replace("__", "."): (int(value) if key == "bytes_per_gradient" else value)
        for key, value in overrides.items()
        if value is not None
    }
    names = [job.name for job in plan.jobs]
    if only is not None and names and only not in names:
        err_console.print(f"--job: no job '{only}' under jobs: (there are: {', '.join(names)})", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    try:
        fabric = fabric_of(plan)
    except TopologyError as exc:
        err_console.print(f"{plan.source}: {exc}", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    settings = job_settings({job.name: job.settings for job in plan.jobs}, given, only)
    jobs = run_stage(lambda: resolve_all(settings, fabric, job_source(plan.source, plan.jobs)))
    options = report.Options(compare=compare, simulate=simulate, trials=trials, seed=seed)
    result = report.analyse(plan.name, fabric, jobs, options)
    if output_format == "json":
        sys.stdout.write(report.to_json(result))
    else:
        present.print_report(result, Console(highlight=False, width=80))
    if markdown_path is not None:
        _write_markdown(markdown_path, result)


def _write_markdown(path: Path, result: dict[str, Any]) -> None:
    """The Markdown section and one SVG per job beside it (`<stem>-<job>.svg`), each written atomically."""
    from fabricgen.analyze.chart import render_svg
    from fabricgen.analyze.present import markdown

    charts = {f"{path.stem}-{job['name']}.svg": render_svg(job) for job in result["jobs"]}
    text = markdown(result).rstrip("\n") + "\n\n" + "\n\n".join(f"![{name}]({name})" for name in charts) + "\n"
    for name, content in {**charts, path.name: text}.items():
        _atomic_write(path.parent / name, content)


def _atomic_write(target: Path, content: str) -> None:
    """Atomic, and 0666 minus the umask like any other output (see fabricgen.render.write); imported
    here so `validate` does not load the writer."""
    from fabricgen.render.write import atomic_write_text

    atomic_write_text(target, content)
