"""Command line: `fabricgen validate | plan | render ...`.

Every command prints problems as `file:line:col: key.path: message` and exits 2 on bad input;
no traceback reaches the user for anything an inventory can contain.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from fabricgen import __version__
from fabricgen.commands.common import EXIT_BAD_INPUT as EXIT_BAD_INPUT
from fabricgen.commands.common import EXIT_INTERNAL as EXIT_INTERNAL
from fabricgen.commands.common import checked_plan, err_console, run_stage

if TYPE_CHECKING:
    from fabricgen.core.model import Plan
    from fabricgen.render.context import RenderContext
    from fabricgen.render.write import WriteSummary

INVENTORY = click.argument("inventory", type=click.Path(path_type=Path))
TEMPLATES = click.option(
    "--templates",
    "template_dirs",
    multiple=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder of override templates (repeatable)",
)
DRAIN = click.option(
    "--drain",
    "drain",
    multiple=True,
    metavar="SWITCH",
    help="Drain this switch as well as those under `drain:` (repeatable; docs/drain.md)",
)


GROUPS = {"analyze": "fabricgen.analyze.cli", "ib": "fabricgen.infiniband.cli", "lab": "fabricgen.lab.cli"}
"""Command groups by name and module (each module defines a group of that name)."""


class LazyGroups(click.Group):
    """The main group: `analyze`, `ib` and `lab` are imported when one of them runs (or help
    lists them), so `render` and `validate` do not import their modules (about 7 ms)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *GROUPS])

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in GROUPS:
            command: click.Command = getattr(importlib.import_module(GROUPS[cmd_name]), cmd_name)
            return command
        return super().get_command(ctx, cmd_name)


@click.group(cls=LazyGroups, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fabricgen")
def main() -> None:
    """Generate AI back-end fabric configs (Arista EOS, Cisco NX-OS, OpenSM) from one YAML file."""
    pause_garbage_collector(click.get_current_context())


def pause_garbage_collector(ctx: click.Context) -> None:
    """A command builds one plan of up to millions of small acyclic objects, uses it and exits;
    Python's cyclic collector would walk them all on every full collection (at 5,000
    switches: 2.5 of the 3 s the checks take, measured with cProfile). Collection is
    paused for the command and resumed when it ends (CliRunner tests run in-process)."""
    if gc.isenabled():
        gc.disable()
        ctx.call_on_close(gc.enable)


@main.command()
@INVENTORY
@DRAIN
def validate(inventory: Path, drain: tuple[str, ...]) -> None:
    """Check INVENTORY (a fabric.yml, or a folder holding one): schema, then plan checks."""
    checked = checked_plan(inventory, drain)
    plan = checked.plan
    click.echo(f"{plan.name}: valid ({len(plan.devices)} switches, {len(plan.links)} cables, {len(plan.servers)} servers)")


@main.command()
@INVENTORY
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option(
    "--grow-to",
    "grow_to",
    metavar="TARGET",
    help="Size pools and check ports for a target: '12 leaves', '8192 gpus' or '16 pods' (a bare number counts leaves)",
)
def plan(inventory: Path, output_format: str, grow_to: str | None) -> None:
    """Show the expanded plan of INVENTORY: a summary with growth headroom per pool and tier,
    or the whole plan as JSON."""
    from fabricgen.checks.growth import parse_target

    target = None
    if grow_to is not None:
        try:
            target = parse_target(grow_to)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--grow-to") from None
    checked = checked_plan(inventory)
    if output_format == "json":
        from fabricgen.render.serialize import plan_json

        sys.stdout.write(plan_json(checked.plan))
        return
    from rich.console import Console

    from fabricgen.commands.summary import print_growth, print_summary

    console = Console(highlight=False)
    print_summary(checked.plan, console)
    print_growth(checked.plan, checked.inputs, console, target)


@main.command()
@click.argument("inventory", type=click.Path(path_type=Path), required=False)
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
def models(inventory: Path | None, output_format: str) -> None:
    """List the hardware catalog: model names to use in `model:`, with vendor, ports, speeds,
    breakouts and platforms. With INVENTORY, its own `models:` are listed too (and win)."""
    from fabricgen.core.catalog import builtin_models, models_for

    catalog = builtin_models()
    if inventory is not None:
        from fabricgen.inventory.loader import load_inventory, resolve_inventory_path
        from fabricgen.inventory.schema import normalise_units

        document = run_stage(lambda: load_inventory(inventory, str(resolve_inventory_path(inventory))))
        own = normalise_units(document.data, document.source)[0].get("models") or {}
        catalog = run_stage(lambda: models_for(own))
    if output_format == "json":
        rows = [
            {
                "name": m.name,
                "vendor": m.vendor,
                "ports": m.ports,
                "speed": f"{m.speed}G",
                "form_factor": m.form_factor,
                "breakouts": {f"{speed}G": count for speed, count in m.breakouts.items()},
                "platforms": list(m.platforms),
                "description": m.description,
            }
            for m in catalog.values()
        ]
        click.echo(json.dumps(rows, indent=1, sort_keys=True))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Hardware catalog (fabricgen/data/catalog.yml)", title_justify="left", header_style="bold")
    for column in ("name", "vendor", "ports", "form factor", "breakouts (logical ports per cage)", "platforms"):
        table.add_column(column, justify="right" if column == "ports" else "left", no_wrap=column == "name")
    for m in catalog.values():
        breakouts = ", ".join(f"{count} x {speed}G" for speed, count in sorted(m.breakouts.items(), reverse=True))
        table.add_row(m.name, m.vendor, f"{m.ports} x {m.speed}G", m.form_factor, breakouts, ", ".join(m.platforms))
    Console(highlight=False).print(table)


@main.command()
@INVENTORY
@click.option("-o", "--output", "output", type=click.Path(path_type=Path), help="Output folder [default: build/<fabric>]")
@click.option("--limit", help="Render only these devices (comma-separated names); other files stay as they are")
@TEMPLATES
@DRAIN
@click.option(
    "--check", is_flag=True, help="Change nothing; exit 1 and list the differences when the output is not what the inventory renders to"
)
@click.option("-q", "--quiet", is_flag=True, help="Print only problems")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary (JSON) on stdout instead of text")
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(0, 256),
    default=1,
    show_default=True,
    help="Render and write in N processes (0: one per CPU); the output is identical for any N",
)
def render(
    inventory: Path,
    output: Path | None,
    limit: str | None,
    template_dirs: tuple[Path, ...],
    drain: tuple[str, ...],
    check: bool,
    quiet: bool,
    as_json: bool,
    jobs: int,
) -> None:
    """Validate, plan, render and write INVENTORY's configs and artefacts."""
    from fabricgen.inventory.loader import resolve_inventory_path
    from fabricgen.render.context import RenderContext
    from fabricgen.render.templating import user_template_dirs

    checked = checked_plan(inventory, drain)
    plan = checked.plan
    out = output or Path("build") / plan.name
    names = {d.name for d in plan.devices}
    selected = None
    if limit:
        selected = frozenset(n.strip() for n in limit.split(",") if n.strip())
        unknown = sorted(selected - names)
        if unknown:
            err_console.print(f"--limit: unknown device(s): {', '.join(unknown)}", style="red", markup=False)
            sys.exit(EXIT_BAD_INPUT)
    context = RenderContext(
        user_template_dirs(resolve_inventory_path(inventory).parent, template_dirs), selected, jobs=jobs or os.cpu_count() or 1
    )
    show = not (quiet or as_json) and progress_wanted()
    summary = run_stage(lambda: write_with_progress(out, plan, context, check=check, show=show))
    if not check:
        report_written(plan.name, out, summary, as_json=as_json, quiet=quiet)
        return
    if as_json:
        click.echo(json_summary(plan.name, out, summary, check=True))
        sys.exit(1 if summary.differs else 0)
    if summary.differs:
        for label, paths in (("added", summary.added), ("changed", summary.changed), ("removed", summary.removed)):
            for path in paths:
                click.echo(f"{label}: {out / path}")
        err_console.print(f"{out} is not what {inventory} renders to; run fabricgen render", style="red", markup=False)
        sys.exit(1)
    if not quiet:
        click.echo(f"{out}: up to date ({len(summary.unchanged)} files)")


def report_written(fabric: str, out: Path, summary: WriteSummary, *, as_json: bool, quiet: bool) -> None:
    """What `render` wrote: the JSON summary, or one line and the devices whose configs changed."""
    if as_json:
        click.echo(json_summary(fabric, out, summary, check=False))
    elif not quiet:
        click.echo(
            f"{out}: {len(summary.changed)} changed, {len(summary.unchanged)} unchanged, {len(summary.added)} added, {len(summary.removed)} removed"
        )
        from fabricgen.configs.devices import config_device

        devices = sorted({config_device(p) for p in (*summary.changed, *summary.added) if p.startswith("configs/")})
        if devices:
            click.echo("devices with config changes: " + ", ".join(devices))


def progress_wanted() -> bool:
    """A progress bar only for a person at a terminal: never in CI or when stderr is piped."""
    return err_console.is_terminal and not os.environ.get("CI")


def write_with_progress(out: Path, plan: Plan, context: RenderContext, *, check: bool = False, show: bool) -> WriteSummary:
    """Render and write (or, with `check`, compare) unit by unit (`producers.write_rendered`),
    with a transient progress bar when `show` and everything runs in this process."""
    from fabricgen.producers import write_rendered

    if not show or context.jobs > 1:
        return write_rendered(out, plan, context, check=check)
    from rich.progress import Progress

    with Progress(console=err_console.console, transient=True) as progress:
        task = progress.add_task(f"rendering {plan.name}")

        def starting(name: str, index: int, total: int) -> None:
            progress.update(task, description=f"rendering {plan.name}: {name}", completed=index, total=total)

        return write_rendered(out, plan, context, check=check, starting=starting)


def json_summary(fabric: str, out: Path, summary: WriteSummary, *, check: bool) -> str:
    """`render --json`: what was (or, with --check, would be) written, for scripts and CI."""
    devices = sorted(Path(p).stem for p in (*summary.changed, *summary.added, *summary.removed) if p.startswith("configs/"))
    data = {
        "fabric": fabric,
        "output": out.as_posix(),
        "check": check,
        "differs": summary.differs,
        "added": summary.added,
        "changed": summary.changed,
        "removed": summary.removed,
        "unchanged": len(summary.unchanged),
        "devices_changed": devices,
    }
    return json.dumps(data, indent=1, sort_keys=True)


@main.command()
@click.argument("inventories", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--rev",
    "revs",
    multiple=True,
    help="Compare INVENTORY at this git revision (give twice for two revisions; once: against the working tree)",
)
@click.option(
    "--running",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Folder of backed-up running configs (<device>.cfg): write remediation/ and rollback/ next to it",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    help="With --running: where remediation/ and rollback/ go [default: the folder above --running]",
)
@TEMPLATES
@click.option("--json", "as_json", is_flag=True, help="Print the differences as JSON (same as --format json)")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="markdown: a change summary for a pull-request comment, config diffs folded",
)
@click.option("--exit-code", is_flag=True, help="Exit 1 when there are differences (like git diff --exit-code)")
def diff(
    inventories: tuple[Path, ...],
    revs: tuple[str, ...],
    running: Path | None,
    output: Path | None,
    template_dirs: tuple[Path, ...],
    as_json: bool,
    output_format: str,
    exit_code: bool,
) -> None:
    """What a change does: `diff OLD NEW` (two inventories), `diff --rev REV [--rev REV2] INVENTORY`
    (one inventory at git revisions), or `diff --running DIR [INVENTORY]` (remediation and rollback
    commands from backed-up running configs to the rendered configs, via hier_config).

    The plan diff covers devices, cables, addresses and ASNs, fabric policy by inventory key,
    the host side (hosts.csv) and every device config; `--format markdown` is the summary a
    CI job posts on a pull request (docs/artifacts.md)."""
    output_format = "json" if as_json else output_format
    if running is not None:
        if revs or len(inventories) > 1:
            raise click.UsageError("--running takes at most one INVENTORY and no --rev")
        if output_format == "markdown":
            raise click.UsageError("--format markdown is for plan diffs, not --running")
        differs = _diff_running(running, inventories[0] if inventories else None, output, template_dirs, output_format == "json")
    else:
        differs = _diff_plans(inventories, revs, template_dirs, output_format)
    if exit_code and differs:
        sys.exit(1)


def _diff_plans(inventories: tuple[Path, ...], revs: tuple[str, ...], template_dirs: tuple[Path, ...], output_format: str) -> bool:
    """Plan against plan (two inventories or git revisions); prints the report, returns whether it differs."""
    from fabricgen.diffing.inventory import diff_plans, report
    from fabricgen.inventory.loader import resolve_inventory_path
    from fabricgen.render.templating import user_template_dirs

    if revs:
        from fabricgen.diffing.git import load_at_revision

        if len(inventories) != 1 or len(revs) > 2:
            raise click.UsageError("--rev takes one INVENTORY and one or two revisions")
        inventory = inventories[0]
        old = run_stage(lambda: load_at_revision(revs[0], inventory))
        new = run_stage(lambda: load_at_revision(revs[1], inventory)) if len(revs) == 2 else checked_plan(inventory)
        compared = f"{revs[0]} -> {revs[1] if len(revs) == 2 else 'working tree'}"
    else:
        if len(inventories) != 2:
            raise click.UsageError("give two inventories (OLD NEW), or --rev, or --running")
        inventory = inventories[1]
        old, new = checked_plan(inventories[0]), checked_plan(inventories[1])
        compared = f"{inventories[0]} -> {inventories[1]}"
    dirs = user_template_dirs(resolve_inventory_path(inventory).parent, template_dirs)
    result = run_stage(lambda: diff_plans(old.plan, new.plan, dirs))
    if output_format == "json":
        click.echo(json.dumps(result.as_json(), indent=1, sort_keys=True))
    elif output_format == "markdown":
        from fabricgen.diffing.markdown import markdown_report

        sys.stdout.write(markdown_report(result, f"fabricgen diff: {new.plan.name} ({compared})"))
    else:
        sys.stdout.write(report(result))
    return result.differs


def _diff_running(running: Path, inventory: Path | None, output: Path | None, template_dirs: tuple[Path, ...], as_json: bool) -> bool:
    """Remediation and rollback per device; returns whether any device differs."""
    from fabricgen.diffing.running import diff_running
    from fabricgen.diffing.write import read_configs, rendered_from_build, write_remediation

    out = output or running.resolve().parent
    if inventory is not None:
        from fabricgen.configs.devices import device_configs
        from fabricgen.inventory.loader import resolve_inventory_path
        from fabricgen.render.context import RenderContext
        from fabricgen.render.templating import user_template_dirs
        from fabricgen.render.tidy import tidy

        plan = checked_plan(inventory).plan
        context = RenderContext(user_template_dirs(resolve_inventory_path(inventory).parent, template_dirs))
        rendered = {Path(p).stem: tidy(t) for p, t in run_stage(lambda: device_configs(plan, context)).items() if p.endswith(".cfg")}
        platform_of = {d.name: d.platform for d in plan.devices}
    else:
        rendered, platform_of = run_stage(lambda: rendered_from_build(out))
    result = run_stage(lambda: diff_running(read_configs(running), rendered, platform_of))
    run_stage(lambda: write_remediation(out, result.remediations))
    differs = any(r.remediation for r in result.remediations)
    if as_json:
        data = {
            "output": out.as_posix(),
            "differs": differs,
            "devices": {r.device: {"remediation": r.remediation, "rollback": r.rollback} for r in result.remediations},
            "missing_running": result.missing_running,
            "unknown_running": result.unknown_running,
            "unsupported": result.unsupported,
        }
        click.echo(json.dumps(data, indent=1, sort_keys=True))
        return differs
    for r in result.remediations:
        lines = len(r.remediation.splitlines())
        click.echo(f"{r.device}: {lines} remediation line(s)" if lines else f"{r.device}: in sync")
    for label, names in (
        ("no running config for", result.missing_running),
        ("running config of an unknown device", result.unknown_running),
        ("no hier_config platform for", result.unsupported),
    ):
        if names:
            err_console.print(f"{label}: {', '.join(names)}", style="yellow", markup=False)
    click.echo(f"written: {out / 'remediation'}, {out / 'rollback'}")
    return differs
