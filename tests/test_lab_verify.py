"""`fabricgen lab verify` on real FRR + lldpd in network namespaces (root only).

Each example boots once per module; the sabotages change one switch of the running lab to
what a deliberately broken plan renders and check that the right check fails, naming it.
Expected values come from the inventories (spine counts, parallel links, names), not from the
lab code. Every lab runs under this test run's own fabric name (`lab_helpers.own_lab`), and
every wait is a poll of a condition with a deadline.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from fabricgen.core.model import PeerGroup, Plan
from fabricgen.lab.kernel import existing_namespaces, namespace_pids
from fabricgen.lab.lab import Lab
from fabricgen.lab.report import Check, Report
from fabricgen.lab.run import CHECKS, run_checks, verify
from fabricgen.lab.topology import LabCable, LabTopology, lab_topology
from fabricgen.lab.verify import check_advertised, check_bgp, check_mtu, poll
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES, ROOT, wait_until
from tests.fabrics import fabric, write
from tests.lab_helpers import device, leftovers, needs_lab, own_lab, run_name, with_device

pytestmark = needs_lab
THREE_TIER = ROOT / "tests" / "data" / "lab" / "three-tier"


def _plan(path: Path) -> Plan:
    """The plan of the inventory at `path`, under this run's own fabric name."""
    return own_lab(load_and_plan(path).plan)


def _verified(plan: Plan, names: Sequence[str] = CHECKS) -> Report:
    """`lab verify` of `plan` (up, checks, down), and nothing of its lab left behind."""
    report = verify(lab_topology(plan), names=names)
    assert leftovers(plan.name) == []
    return report


@pytest.fixture(scope="module")
def pod1() -> Iterator[tuple[Plan, Lab]]:
    plan = _plan(EXAMPLES / "pod-roce-400g")
    with Lab(lab_topology(plan)) as lab:
        yield plan, lab
    assert leftovers(plan.name) == []


def _failures(check: Check) -> str:
    return "\n".join(f"{f.device}: {f.message}" for f in check.failures)


def test_pod_roce_400g_passes_every_check(pod1: tuple[Plan, Lab]) -> None:
    plan, lab = pod1
    report = run_checks(lab, lab_topology(plan))
    assert report.passed, report.as_text()
    assert [c.name for c in report.checks] == ["bgp", "bfd", "lldp", "ecmp", "advertised", "mtu", "fault-drill"]
    # inventory: 4 spines x 8 links per leaf; 8 leaves
    assert "512 of 512 planned sessions" in report.checks[0].evidence[0]
    assert "at widths [32]" in report.checks[3].evidence[0]
    drill = report.checks[6].evidence
    assert any("spine pod1-spine01 down" in e and "at widths [24]" in e for e in drill), drill
    assert any("BFD down on 8 leaves" in e for e in drill), drill


def _restore(lab: Lab, plan: Plan, name: str) -> None:
    topology = lab_topology(plan)
    lab.restart_switch(topology.switch(name))
    settled = poll(lambda: check_bgp(lab, topology), timeout=60)
    assert settled.passed, _failures(settled)


def test_wrong_remote_asn_fails_bgp(pod1: tuple[Plan, Lab]) -> None:
    plan, lab = pod1
    leaf = device(plan, "pod1-leaf01")
    broken = with_device(
        plan,
        leaf.name,
        peer_groups=tuple(PeerGroup(g.name, 65099) for g in leaf.peer_groups),
        bgp_neighbors=tuple(dataclasses.replace(n, remote_asn=65099) for n in leaf.bgp_neighbors),
    )
    topology = lab_topology(broken)
    lab.restart_switch(topology.switch(leaf.name))
    try:
        check = poll(lambda: check_bgp(lab, topology), timeout=12)
        assert not check.passed
        text = _failures(check)
        on_leaf = [f for f in check.failures if f.device == "pod1-leaf01"]
        assert len(on_leaf) == 4 * 8, text  # inventory: 4 spines x 8 links
        assert all("planned remote AS 65099" in f.message for f in on_leaf), text
        # the spines see the leaf refuse them: their failures name leaf01, nothing else fails
        assert all("pod1-leaf01" in f.message for f in check.failures if f.device != "pod1-leaf01"), text
    finally:
        _restore(lab, plan, leaf.name)


def test_spine_whose_sessions_never_come_up_fails_bgp(pod1: tuple[Plan, Lab]) -> None:
    plan, lab = pod1
    broken = with_device(plan, "pod1-spine02", asn=65050)
    lab.restart_switch(lab_topology(broken).switch("pod1-spine02"))
    try:
        check = poll(lambda: check_bgp(lab, lab_topology(plan)), timeout=12)
        assert not check.passed
        text = _failures(check)
        # every leaf loses its 8 sessions to spine02 (inventory: 8 links per spine), nothing else fails
        assert sum(1 for f in check.failures if f.device.startswith("pod1-leaf")) == 8 * 8, text
        assert all("pod1-spine02" in f.message or f.device == "pod1-spine02" for f in check.failures), text
    finally:
        _restore(lab, plan, "pod1-spine02")


def test_missing_advertise_entry_fails_advertised(pod1: tuple[Plan, Lab]) -> None:
    plan, lab = pod1
    leaf = device(plan, "pod1-leaf01")
    broken = with_device(plan, leaf.name, advertised_prefixes=leaf.advertised_prefixes[:1])
    lab.restart_switch(lab_topology(broken).switch(leaf.name))
    try:
        check = poll(lambda: check_advertised(lab, lab_topology(plan)), timeout=25)
        assert not check.passed
        assert {f.device for f in check.failures} == {"pod1-leaf01"}
        # inventory: 4 servers x 8 NICs behind leaf01, one /31 each
        assert len(check.failures) == 32
        assert all(f.message.startswith("does not advertise 10.2.") for f in check.failures)
    finally:
        _restore(lab, plan, leaf.name)


def test_mtu_mismatch_fails_mtu_naming_the_link(pod1: tuple[Plan, Lab]) -> None:
    plan, lab = pod1
    topology = lab_topology(plan)
    spine = topology.switch("pod1-spine01")
    port = next(p for p in spine.ports if p.peer_node == "pod1-leaf01")
    converged = poll(lambda: check_mtu(lab, topology), timeout=60)  # routes back after earlier sabotage
    assert converged.passed, _failures(converged)
    lab.set_mtu(spine.name, port.kernel, 9000)
    try:
        check = check_mtu(lab, topology)
        assert not check.passed
        assert len(check.failures) == 1, _failures(check)
        assert f"pod1-spine01 {port.planned} (MTU 9000)" in check.failures[0].message
        assert "pod1-leaf01" in check.failures[0].message
    finally:
        lab.set_mtu(spine.name, port.kernel, port.mtu)


def test_three_tier_two_pods_passes_every_check() -> None:
    report = _verified(_plan(THREE_TIER))
    assert report.passed, report.as_text()
    # 2 spines x 2 links per leaf, in its pod and across pods (through both super-spine planes)
    assert "at widths [4]" in report.checks[3].evidence[0]


def test_pod_rail_passes() -> None:
    report = _verified(_plan(EXAMPLES / "pod-rail"), ["bgp", "bfd", "lldp", "ecmp", "advertised", "mtu"])
    assert report.passed, report.as_text()
    assert "at widths [32]" in report.checks[3].evidence[0]  # 8 spines x 4 links


def test_pod_mixed_passes_at_the_mtu_both_platforms_carry() -> None:
    """pod-mixed: EOS spines (9214) and NX-OS leaves (9216). The plan runs every cable at the
    largest MTU both ends support and the hosts at the smallest fabric MTU (9214, from
    fabricgen/platforms/<os>/platform.yml mtu_default), so DF pings at the host MTU cross every spine.
    Before MTU was planned per link, this check failed on all 256 leaf-spine cables."""
    report = _verified(_plan(EXAMPLES / "pod-mixed"), ["bgp", "bfd", "lldp", "ecmp", "advertised", "mtu"])
    assert report.passed, report.as_text()
    assert "9214" in report.checks[-1].title


def _tiny(tmp_path: Path, name: str) -> Plan:
    """A two-leaf fabric written to `tmp_path`/fabric.yml under this run's own name from `name`."""
    doc = fabric(
        fabric={"name": run_name(name), "transport": "roce"}, leaves={"count": 2}, uplinks={"per_spine": 1}, servers={"per_leaf": 1}
    )
    return load_and_plan(write(tmp_path, doc)).plan


def _swap(topology: LabTopology) -> tuple[LabTopology, LabCable, LabCable]:
    """The same fabric with the spine ends of the first two leaf-spine cables of spine 1 swapped."""
    cables = list(topology.cables)
    first, second = [i for i, c in enumerate(cables) if c.kind == "leaf-spine" and c.z_node == cables[i].z_node][:2]
    a, b = cables[first], cables[second]
    cables[first] = dataclasses.replace(a, z_node=b.z_node, z_kernel=b.z_kernel, z_planned=b.z_planned)
    cables[second] = dataclasses.replace(b, z_node=a.z_node, z_kernel=a.z_kernel, z_planned=a.z_planned)
    return dataclasses.replace(topology, cables=tuple(cables)), a, b


def test_swapped_cable_fails_lldp_naming_both_ends(tmp_path: Path) -> None:
    plan = _tiny(tmp_path, "labswap")
    topology = lab_topology(plan)
    miswired, a, b = _swap(topology)
    report = verify(topology, built=miswired, names=["lldp"], timeout=15)
    assert leftovers(plan.name) == []
    lldp = report.checks[0]
    assert not lldp.passed
    text = _failures(lldp)
    assert f"{a.a_node}: {a.a_planned}: sees {b.z_node} {b.z_planned}, planned {a.z_node} {a.z_planned}" in text
    assert any("miswired" in e and a.a_node in e for e in lldp.evidence), lldp.evidence


def test_two_labs_side_by_side(tmp_path: Path) -> None:
    (tmp_path / "1").mkdir()
    (tmp_path / "2").mkdir()
    one, two = lab_topology(_tiny(tmp_path / "1", "labone")), lab_topology(_tiny(tmp_path / "2", "labtwo"))
    with Lab(one) as first, Lab(two) as second:
        assert poll(lambda: check_bgp(first, one), timeout=60).passed
        assert poll(lambda: check_bgp(second, two), timeout=60).passed
        second.down()
        assert leftovers(two.fabric) == []
        assert first.running()
    assert leftovers(one.fabric) == []


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_leaves_nothing_behind(tmp_path: Path) -> None:
    plan = _tiny(tmp_path, "labint")
    inventory = tmp_path / "fabric.yml"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # Ctrl-C at a terminal reaches a foreground job whose SIGINT is the default; a test runner
    # started in the background (`make test &`, nohup) passes SIGINT on ignored, and Python then
    # keeps ignoring it, so the child gets the default back, as a shell's foreground job would.
    process = subprocess.Popen(
        [sys.executable, "-m", "fabricgen", "lab", "verify", str(inventory)],
        env=env,
        preexec_fn=_default_sigint,  # resets one signal disposition only
    )
    topology = lab_topology(plan)
    switches = {s.namespace for s in topology.switches}

    def daemons_running() -> bool:  # every switch's namespace exists and runs its daemons
        return switches <= set(existing_namespaces(topology.prefix)) and all(namespace_pids(ns) for ns in switches)

    assert wait_until(daemons_running, timeout=120), "the lab never came up"
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=120) != 0
    assert leftovers(plan.name) == []
