"""`fabricgen lab` on SONiC switches: the lab runs each SONiC switch's rendered frr.conf as written.

A SONiC switch's routing is FRR, so the lab does not translate it: it writes the file `fabricgen
render` writes (configs/<switch>/frr.conf) byte for byte to the switch's work folder and hands
it to `vtysh -f`; its ports are the planned names (Ethernet0 ...) with config_db.json's
addresses and MTUs on them (lab/native.py). One boot per module (root, FRR, lldpd); expected
values come from the inventories (spine counts, links per spine), not from the lab code.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabricgen.core.model import Plan
from fabricgen.lab.lab import Lab
from fabricgen.lab.run import run_checks
from fabricgen.lab.topology import lab_topology
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES
from tests.lab_helpers import leftovers, needs_lab, own_lab
from tests.standins.runner import BIN

pytestmark = needs_lab
POD_SONIC = EXAMPLES / "pod-sonic"


def _render(inventory: Path, out: Path) -> Path:
    """`fabricgen render` as a user runs it: the files the lab must run unchanged."""
    subprocess.run([str(BIN / "fabricgen"), "render", str(inventory), "-o", str(out)], check=True, capture_output=True, timeout=300)
    return out


@pytest.fixture(scope="module")
def pod_sonic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Plan, Lab, Path]]:
    build = _render(POD_SONIC, tmp_path_factory.mktemp("pod-sonic") / "build")
    plan = own_lab(load_and_plan(POD_SONIC).plan)
    with Lab(lab_topology(plan)) as lab:
        yield plan, lab, build
    assert leftovers(plan.name) == []


def test_the_daemons_run_the_rendered_frr_conf_byte_for_byte(pod_sonic: tuple[Plan, Lab, Path]) -> None:
    plan, lab, build = pod_sonic
    switches = [d.name for d in plan.devices if d.platform == "sonic"]
    assert len(switches) == 6  # inventory: 2 spines + 4 leaves, all SONiC
    for name in switches:
        read = (lab.node_work(name) / "frr.conf").read_bytes()
        assert read == (build / "configs" / name / "frr.conf").read_bytes(), name
        # and FRR runs it: every neighbor the rendered file names is a neighbor of the running bgpd
        rendered = read.decode()
        running = lab.vtysh(name, "show running-config")
        named = {line.split()[1] for line in rendered.splitlines() if line.startswith(" neighbor ") and " remote-as " in line}
        assert named and all(f" neighbor {address} " in running for address in named), name


def test_pod_sonic_passes_every_check(pod_sonic: tuple[Plan, Lab, Path]) -> None:
    plan, lab, _ = pod_sonic
    report = run_checks(lab, lab_topology(plan))
    assert report.passed, report.as_text()
    assert [c.name for c in report.checks] == ["bgp", "bfd", "lldp", "ecmp", "advertised", "mtu", "fault-drill"]
    # inventory: 2 spines x 16 links per leaf x 4 leaves, both ends
    assert "256 of 256 planned sessions" in report.checks[0].evidence[0]
    assert "at widths [32]" in report.checks[3].evidence[0]


def test_ports_are_the_planned_names_with_config_db_addresses(pod_sonic: tuple[Plan, Lab, Path]) -> None:
    plan, lab, _ = pod_sonic
    leaf = next(d for d in plan.devices if d.role == "leaf")
    links = {link["ifname"]: link for link in lab.interfaces(leaf.name)}
    for interface in (i for i in leaf.interfaces if i.port):
        assert interface.name in links, interface.name  # Ethernet0 ...: the name the config uses
        assert links[interface.name]["mtu"] == interface.mtu
    assert "Loopback0" in links
