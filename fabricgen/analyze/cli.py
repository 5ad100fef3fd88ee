"""`fabricgen analyze INVENTORY`: will this fabric keep the GPUs busy?

Reads the checked plan and the inventory's `jobs:`; flags override any job setting. The heavy
imports (NumPy, matplotlib) happen only when the command runs, so other commands start fast.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from fabricgen.analyze.counts import COUNT_PATTERN, parse_count
from fabricgen.write import atomic_write_text


class CountType(click.ParamType[str, Any]):
    """`70B`, `4M`, `1000`: kept as text (as in the inventory), checked here."""

    name = "count"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        try:
            if parse_count(str(value)) <= 0:
                raise ValueError("must be more than 0")
        except ValueError as exc:
            self.fail(f"{value!r}: {exc} (pattern {COUNT_PATTERN})", param, ctx)
        return str(value)


POSITIVE = click.FloatRange(min=0, min_open=True)
FRACTION = click.FloatRange(min=0, max=1, min_open=True)
OVERRIDES = (
    ("params", "--params", CountType(), "Model parameters, e.g. 7B, 70B, 405B"),
    ("bytes_per_gradient", "--bytes-per-gradient", click.Choice(["1", "2", "4"]), "2 = bf16/fp16, 4 = fp32"),
    ("gpus", "--gpus", click.IntRange(min=1), "GPUs in the job [default: all of the fabric]"),
    ("gpus_per_server", "--gpus-per-server", click.IntRange(min=1), "GPUs per server [default: NIC ports per server]"),
    ("nvlink_gbytes_per_s", "--nvlink-gbytes", POSITIVE, "NVLink GB/s per GPU and direction"),
    ("data_parallel", "--dp", click.IntRange(min=1), "Data-parallel degree [default: gpus/(tp*pp)]"),
    ("tensor_parallel", "--tp", click.IntRange(min=1), "Tensor-parallel degree"),
    ("pipeline_parallel", "--pp", click.IntRange(min=1), "Pipeline-parallel degree"),
    ("tokens_per_step", "--tokens-per-step", CountType(), "Global batch in tokens, e.g. 4M"),
    ("peak_tflops", "--peak-tflops", POSITIVE, "Peak dense TFLOP/s per GPU"),
    ("mfu", "--mfu", FRACTION, "Assumed model FLOPs utilisation"),
    ("efficiency.infiniband", "--efficiency-infiniband", FRACTION, "Fraction of line rate on InfiniBand"),
    ("efficiency.roce", "--efficiency-roce", FRACTION, "Fraction of line rate on RoCEv2"),
    ("latency_us.network", "--latency-network-us", click.FloatRange(min=0), "Ring-step latency over the fabric, us"),
    ("latency_us.nvlink", "--latency-nvlink-us", click.FloatRange(min=0), "Ring-step latency over NVLink, us"),
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
@click.option("--simulate/--no-simulate", default=True, show_default=True, help="Flow-level ECMP/ftree simulation on the planned fabric")
@click.option("--trials", type=click.IntRange(min=1, max=100000), default=256, show_default=True, help="Simulation trials")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="Simulation seed")
@click.option(
    "--flows-per-connection",
    type=click.IntRange(min=1, max=64),
    default=1,
    show_default=True,
    help="ECMP flows (queue pairs) per ring connection",
)
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
    flows_per_connection: int,
    output_format: str,
    markdown_path: Path | None,
    **overrides: Any,
) -> None:
    """Estimate whether INVENTORY's fabric keeps a training job's GPUs busy: all-reduce against compute,
    flow collisions under ECMP and ftree, and (--compare) speeds and transports."""
    from rich.console import Console

    from fabricgen.analyze import report
    from fabricgen.analyze.job import job_settings, resolve_all
    from fabricgen.analyze.topology import TopologyError, fabric_of
    from fabricgen.cli import EXIT_BAD_INPUT, checked_plan, err_console, run_stage
    from fabricgen.loader import load_inventory, resolve_inventory_path
    from fabricgen.schema import apply_defaults

    checked = checked_plan(inventory)
    plan = checked.plan
    document = load_inventory(inventory, str(resolve_inventory_path(inventory)))
    doc = apply_defaults(document.data)
    given = {
        key.replace("__", "."): (int(value) if key == "bytes_per_gradient" else value)
        for key, value in overrides.items()
        if value is not None
    }
    names = sorted(doc.get("jobs") or {})
    if only is not None and names and only not in names:
        err_console.print(f"--job: no job '{only}' under jobs: (there are: {', '.join(names)})", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    try:
        fabric = fabric_of(plan)
    except TopologyError as exc:
        err_console.print(f"{plan.source}: {exc}", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    settings = job_settings(doc, given, only)
    jobs = run_stage(lambda: resolve_all(settings, fabric, document.source))
    options = report.Options(compare=compare, simulate=simulate, trials=trials, seed=seed, flows_per_connection=flows_per_connection)
    result = report.analyse(plan, fabric, jobs, options)
    if output_format == "json":
        sys.stdout.write(report.to_json(result))
    else:
        report.print_report(result, Console(highlight=False))
    if markdown_path is not None:
        _write_markdown(markdown_path, result)


def _write_markdown(path: Path, result: dict[str, Any]) -> None:
    """The Markdown section and one SVG per job beside it (`<stem>-<job>.svg`), each written atomically."""
    from fabricgen.analyze.chart import render_svg
    from fabricgen.analyze.report import markdown

    charts = {f"{path.stem}-{job['name']}.svg": render_svg(job) for job in result["jobs"]}
    text = markdown(result, None).rstrip("\n") + "\n\n" + "\n\n".join(f"![{name}]({name})" for name in charts) + "\n"
    for name, content in {**charts, path.name: text}.items():
        _atomic_write(path.parent / name, content)


def _atomic_write(target: Path, content: str) -> None:
    """Atomic, and 0666 minus the umask like any other output (see fabricgen.write)."""
    atomic_write_text(target, content)
