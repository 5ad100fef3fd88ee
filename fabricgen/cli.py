"""Command line: `fabricgen validate | plan | render ...`.

Every command prints problems as `file:line:col: key.path: message` and exits 2 on bad input;
no traceback reaches the user for anything an inventory can contain.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click
from rich.console import Console

from fabricgen import __version__
from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.pipeline import Checked, load_and_plan

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70
T = TypeVar("T")

err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def print_diagnostics(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
    for diagnostic in diagnostics:
        style = "red" if diagnostic.is_error else "yellow"
        err_console.print(diagnostic.format(), style=style, markup=False)


def run_stage(action: Callable[[], T]) -> T:
    """Run a pipeline step; on bad input print every problem and exit 2."""
    try:
        return action()
    except FabricError as exc:
        print_diagnostics(exc.diagnostics)
        errors = sum(1 for d in exc.diagnostics if d.is_error)
        err_console.print(f"{errors} error(s); nothing written.", style="bold red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # a bug of ours: say so plainly, keep the output untouched
        err_console.print(
            f"internal error: {type(exc).__name__}: {exc}; nothing written. Please report it with the inventory.",
            style="bold red",
            markup=False,
        )
        sys.exit(EXIT_INTERNAL)


def checked_plan(inventory: Path) -> Checked:
    checked = run_stage(lambda: load_and_plan(inventory))
    print_diagnostics(checked.warnings)
    return checked


INVENTORY = click.argument("inventory", type=click.Path(path_type=Path))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fabricgen")
def main() -> None:
    """Generate AI back-end fabric configs (Arista EOS, Cisco NX-OS, OpenSM) from one YAML file."""


@main.command()
@INVENTORY
def validate(inventory: Path) -> None:
    """Check INVENTORY (a fabric.yml, or a folder holding one): schema, then plan checks."""
    checked = checked_plan(inventory)
    plan = checked.plan
    click.echo(f"{plan.name}: valid ({len(plan.devices)} switches, {len(plan.links)} cables, {len(plan.servers)} servers)")


@main.command()
@INVENTORY
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True)
def plan(inventory: Path, output_format: str) -> None:
    """Show the expanded plan of INVENTORY: a summary, or the whole plan as JSON."""
    checked = checked_plan(inventory)
    if output_format == "json":
        from fabricgen.serialize import plan_json

        sys.stdout.write(plan_json(checked.plan))
        return
    from fabricgen.summary import print_summary

    print_summary(checked.plan, Console(highlight=False))


@main.command()
@INVENTORY
@click.option("-o", "--output", "output", type=click.Path(path_type=Path), help="Output folder [default: build/<fabric>]")
@click.option("--limit", help="Render only these devices (comma-separated names); other files stay as they are")
@click.option(
    "--templates",
    "template_dirs",
    multiple=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder of override templates (repeatable)",
)
@click.option(
    "--check", is_flag=True, help="Change nothing; exit 1 and list the differences when the output is not what the inventory renders to"
)
@click.option("-q", "--quiet", is_flag=True, help="Print only problems")
def render(inventory: Path, output: Path | None, limit: str | None, template_dirs: tuple[Path, ...], check: bool, quiet: bool) -> None:
    """Validate, plan, render and write INVENTORY's configs and artefacts."""
    from fabricgen.loader import resolve_inventory_path
    from fabricgen.render import RenderContext, render_files
    from fabricgen.templating import user_template_dirs
    from fabricgen.write import compare, write_tree

    checked = checked_plan(inventory)
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
    context = RenderContext(user_template_dirs(resolve_inventory_path(inventory).parent, template_dirs), selected)
    files = run_stage(lambda: render_files(plan, context))
    if selected is not None:
        files = {path: text for path, text in files.items() if not path.startswith("configs/") or Path(path).stem in selected}
    if check:
        summary = compare(out, files)
        if selected is not None:
            summary.removed = []
        if summary.differs:
            for label, paths in (("added", summary.added), ("changed", summary.changed), ("removed", summary.removed)):
                for path in paths:
                    click.echo(f"{label}: {out / path}")
            err_console.print(f"{out} is not what {inventory} renders to; run fabricgen render", style="red", markup=False)
            sys.exit(1)
        if not quiet:
            click.echo(f"{out}: up to date ({len(summary.unchanged)} files)")
        return
    summary = run_stage(lambda: write_tree(out, files, keep_unlisted_owned=selected is not None))
    if not quiet:
        click.echo(
            f"{out}: {len(summary.changed)} changed, {len(summary.unchanged)} unchanged, {len(summary.added)} added, {len(summary.removed)} removed"
        )
        devices = sorted(Path(p).stem for p in (*summary.changed, *summary.added) if p.startswith("configs/"))
        if devices:
            click.echo("devices with config changes: " + ", ".join(devices))
