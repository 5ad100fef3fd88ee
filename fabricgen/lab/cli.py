"""`fabricgen lab up | down | verify | export`: the planned Ethernet fabric on real FRR + lldpd."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from fabricgen.commands.common import EXIT_BAD_INPUT, checked_plan, err_console

INVENTORY = click.argument("inventory", type=click.Path(path_type=Path))
CAP_NET_ADMIN = 12


def has_net_admin() -> bool:
    """Root, or CAP_NET_ADMIN in the effective set (what creating namespaces and veths needs)."""
    if os.geteuid() == 0:
        return True
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> CAP_NET_ADMIN & 1)
    except OSError:
        pass
    return False


def _refuse(message: str) -> None:

    err_console.print(message, style="red", markup=False)
    sys.exit(EXIT_BAD_INPUT)


def _topology(inventory: Path, need_root: bool = True) -> object:
    from fabricgen.lab.daemons import frr_installed, lldpd_installed
    from fabricgen.lab.topology import LabUnsupported, lab_topology

    plan = checked_plan(inventory).plan
    try:
        topology = lab_topology(plan)
    except LabUnsupported as exc:
        _refuse(f"{inventory}: {exc}")
    if need_root:
        if not has_net_admin():
            _refuse("fabricgen lab needs root or CAP_NET_ADMIN (network namespaces, veths): run it with sudo")
        if not frr_installed() or not lldpd_installed():
            _refuse("fabricgen lab needs the Debian packages frr and lldpd (apt-get install frr lldpd)")
        from fabricgen.lab.capacity import refusal, this_machine
        from fabricgen.lab.timers import describe, scaled, timer_rows

        machine = this_machine()
        too_big = refusal(topology, machine)
        if too_big:
            _refuse(f"{inventory}: {too_big}")
        topology = scaled(topology, machine.cores)
        if topology.timers != timer_rows()[0].timers or topology.bfd_planned_ms:
            err_console.print(describe(topology, machine.cores), markup=False)
    return topology


@click.group("lab")
def lab() -> None:
    """Boot the planned Ethernet fabric on FRR and lldpd in network namespaces and check it."""


@lab.command()
@INVENTORY
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON")
@click.option("--no-drill", is_flag=True, help="Skip check 7 (the fault drill)")
@click.option(
    "--drill",
    type=click.Choice(["drain", "cut"]),
    help="After checks 1-5, change the first spine while traffic flows: drained first (drain) or abruptly (cut); docs/drain.md",
)
def verify(inventory: Path, as_json: bool, no_drill: bool, drill: str | None) -> None:
    """Boot, run checks 1-7, tear down. Exit 0 pass, 1 fail, 2 bad input or no privileges."""
    from fabricgen.lab.kernel import LabError
    from fabricgen.lab.run import CHECKS
    from fabricgen.lab.run import verify as run_verify
    from fabricgen.lab.topology import LabTopology

    topology = _topology(inventory)
    assert isinstance(topology, LabTopology)
    names = [c for c in CHECKS if not ((no_drill or drill) and c == "fault-drill") and not (drill and c == "mtu")]
    try:
        report = run_verify(topology, names=names, drill=drill or "")
    except LabError as exc:  # the lab could not be built (e.g. FRR refused a rendered config): a failure, cleaned up
        err_console.print(f"lab {topology.fabric}: {exc}", style="red", markup=False)
        sys.exit(1)
    click.echo(report.as_json() if as_json else report.as_text(), nl=False)
    sys.exit(0 if report.passed else 1)


@lab.command()
@INVENTORY
def up(inventory: Path) -> None:
    """Boot the lab and leave it running (attach with `ip netns exec`, vtysh -N, lldpcli -u)."""
    from fabricgen.lab.lab import Lab
    from fabricgen.lab.topology import LabTopology

    topology = _topology(inventory)
    assert isinstance(topology, LabTopology)
    running = Lab(topology)
    try:
        running.up()
    except BaseException:
        running.down()
        raise
    first = topology.switches[0]
    click.echo(
        f"lab {topology.fabric}: {len(topology.switches)} switches, {len(topology.servers)} servers in namespaces {topology.prefix}*"
    )
    click.echo(f"  sudo ip netns exec {first.namespace} vtysh -N {first.namespace} -c 'show bgp summary'")
    click.echo(f"  sudo ip netns exec {first.namespace} lldpcli -u {running.node_work(first.name) / 'lldpd.sock'} show neighbors")
    click.echo(f"  sudo fabricgen lab down {inventory}")


@lab.command()
@INVENTORY
def down(inventory: Path) -> None:
    """Stop every process of the lab and delete its namespaces and files."""
    from fabricgen.lab.lab import Lab
    from fabricgen.lab.topology import LabTopology

    topology = _topology(inventory)
    assert isinstance(topology, LabTopology)
    Lab(topology).down()
    click.echo(f"lab {topology.fabric}: down")


@lab.command()
@INVENTORY
@click.option("-o", "--output", type=click.Path(path_type=Path, file_okay=False), required=True, help="Folder to write the topology into")
def export(inventory: Path, output: Path) -> None:
    """Write the same FRR lab as a containerlab topology (Linux nodes running FRR and lldpd)."""
    from fabricgen.lab.clab import export_files
    from fabricgen.lab.topology import LabTopology

    topology = _topology(inventory, need_root=False)
    assert isinstance(topology, LabTopology)
    files = export_files(topology)
    for relative, text in files.items():
        path = output / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    click.echo(
        f"written: {len(files)} files under {output}; deploy with: sudo containerlab deploy -t {output / (topology.fabric + '.clab.yml')}"
    )
