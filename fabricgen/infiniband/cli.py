"""`fabricgen ib ...`: InfiniBand commands (verify, check-partitions, import-guids)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import click

from fabricgen.commands.common import EXIT_BAD_INPUT, checked_plan, err_console, run_stage

INVENTORY = click.argument("inventory", type=click.Path(path_type=Path))


@click.group("ib")
def ib() -> None:
    """InfiniBand fabrics: verify with a real OpenSM on a simulated fabric, check files, import GUIDs."""


def _rendered(inventory: Path, build: Path | None) -> tuple[object, dict[str, str]]:
    from fabricgen.inventory.loader import resolve_inventory_path
    from fabricgen.producers import render_files
    from fabricgen.render.context import RenderContext
    from fabricgen.render.templating import user_template_dirs

    plan = checked_plan(inventory).plan
    if plan.infiniband is None:
        err_console.print(f"{inventory}: fabric {plan.name} is not an InfiniBand fabric (fabric.transport)", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    if build is None:
        context = RenderContext(user_template_dirs(resolve_inventory_path(inventory).parent))
        files = run_stage(lambda: render_files(plan, context))
        return plan, {p: t for p, t in files.items() if p.startswith(("opensm/", "ib/"))}
    files = {}
    for path in [*sorted((build / "opensm").glob("*/*")), build / "ib" / "ibsim.net"]:
        if path.is_file():
            files[str(path.relative_to(build))] = path.read_text()
    if "ib/ibsim.net" not in files:
        err_console.print(f"{build}: no ib/ibsim.net; render first (fabricgen render {inventory} -o {build})", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    return plan, files


@ib.command()
@INVENTORY
@click.option(
    "--build",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Verify the files rendered in this folder (default: render now)",
)
@click.option(
    "--net",
    "net",
    type=click.Path(path_type=Path, dir_okay=False, exists=True),
    help="Simulate this topology (ibsim net or ibnetdiscover output) instead of the plan's",
)
@click.option("--sm", "sm_host", help="Subnet manager host to run (default: the planned master)")
@click.option("--pairs", default=64, show_default=True, type=click.IntRange(1, 10000), help="Host pairs to trace")
@click.option("--sample", default=16, hidden=True, type=click.IntRange(1, 10000), help="Ignored: every HCA port's P_Keys are checked")
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(1, 3600), help="Seconds to wait for SUBNET UP")
@click.option("--no-standby", is_flag=True, help="Run only the master SM (default: also start the standbys and check they are STANDBY)")
@click.option(
    "--keep", type=click.Path(path_type=Path, file_okay=False), help="Copy the configs, logs and dumps of the run into this folder"
)
def verify(
    inventory: Path,
    build: Path | None,
    net: Path | None,
    sm_host: str | None,
    pairs: int,
    sample: int,
    timeout: float,
    no_standby: bool,
    keep: Path | None,
) -> None:
    """Run ibsim with the planned fabric and the real OpenSM with the rendered config; check what OpenSM programmed.

    Exit 0 when every check passes, 1 when one fails, 2 on bad input or missing tools.
    """
    from fabricgen.core.model import Plan
    from fabricgen.infiniband.sim import SimulationError
    from fabricgen.infiniband.verify import Options
    from fabricgen.infiniband.verify import verify as run_verify

    plan, files = _rendered(inventory, build)
    assert isinstance(plan, Plan)
    if net is not None:
        from fabricgen.infiniband.ibnet import parse_ibnet
        from fabricgen.infiniband.topology import net_from_discovery

        discovered = parse_ibnet(net.read_text(errors="replace"))
        if not discovered.nodes:
            err_console.print(f"{net}: no switch or HCA records (ibsim net or ibnetdiscover output expected)", style="red", markup=False)
            sys.exit(EXIT_BAD_INPUT)
        files["ib/ibsim.net"] = net_from_discovery(discovered)
    try:
        report = run_verify(plan, files, Options(sm_host, pairs, sample, timeout, keep, not no_standby))
    except SimulationError as exc:
        err_console.print(f"ib verify: {exc}", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    click.echo(report.format(), nl=False)
    sys.exit(0 if report.ok else 1)


@ib.command("check-partitions")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path, dir_okay=False))
def check_partitions_command(files: tuple[Path, ...]) -> None:
    """Check OpenSM partitions.conf FILES strictly (OpenSM itself falls back to an open default on errors).

    Exit 0 when every file is valid (warnings allowed), 1 when one has errors, 2 when one cannot be read.
    """
    from fabricgen.infiniband.partitions import check_partitions

    failed = False
    for file in files:
        try:
            text = file.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            err_console.print(f"{file}: cannot read: {exc}", style="red", markup=False)
            sys.exit(EXIT_BAD_INPUT)
        problems, rules = check_partitions(text)
        for problem in problems:
            err_console.print(problem.format(str(file)), style="red" if problem.error else "yellow", markup=False)
        errors = sum(1 for p in problems if p.error)
        failed |= errors > 0
        click.echo(f"{file}: {f'{errors} error(s)' if errors else 'valid'} ({len(rules)} partition definition(s))")
    sys.exit(1 if failed else 0)


@ib.command("import-guids")
@INVENTORY
@click.argument("ibnetdiscover_output", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--dry-run", is_flag=True, help="Report the matches; change nothing")
def import_guids(inventory: Path, ibnetdiscover_output: Path, dry_run: bool) -> None:
    """Write the real GUIDs of IBNETDISCOVER_OUTPUT (`ibnetdiscover > fabric.ibnet`) into INVENTORY's `guids:` section.

    Switches and HCAs are matched to planned names by node description. Exit 0 when every planned
    node was matched, 1 when some were not (the matched ones are still written), 2 on bad input.
    """
    from fabricgen.infiniband.guids import match_guids, overridden, update_inventory, write_atomically
    from fabricgen.infiniband.ibnet import parse_ibnet
    from fabricgen.inventory.loader import resolve_inventory_path
    from fabricgen.pipeline import load_and_plan

    path = resolve_inventory_path(inventory)
    plan = checked_plan(inventory).plan
    fabric = parse_ibnet(ibnetdiscover_output.read_text(errors="replace"))
    if not fabric.nodes:
        err_console.print(f"{ibnetdiscover_output}: no switch or HCA records (is it ibnetdiscover output?)", style="red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    result = match_guids(plan, fabric)
    text, changed = update_inventory(path.read_text(), result)
    if not dry_run and changed:
        with tempfile.TemporaryDirectory() as tmp:
            candidate = Path(tmp) / path.name
            candidate.write_text(text)
            new_plan = run_stage(lambda: load_and_plan(candidate, str(path))).plan
        result.conflicts += overridden(new_plan, result)
        write_atomically(path, text)
    for line in result.conflicts:
        err_console.print(f"conflict: {line}", style="yellow", markup=False)
    for line in result.unmatched_discovered:
        err_console.print(f"not in the plan: {line}", style="yellow", markup=False)
    for name in result.not_discovered:
        err_console.print(f"not discovered: {name}", style="yellow", markup=False)
    verb = "would change" if dry_run else "changed"
    click.echo(
        f"{path}: matched {len(result.guids)} node(s), {verb} {changed}; {len(result.not_discovered)} planned node(s) not discovered, "
        f"{len(result.unmatched_discovered)} discovered node(s) not in the plan"
    )
    sys.exit(1 if result.not_discovered else 0)
