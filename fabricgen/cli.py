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
