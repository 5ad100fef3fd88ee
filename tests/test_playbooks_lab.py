"""deploy.yml end to end on the lab: STAND-IN device APIs whose routing state is real FRR + lldpd.

The stand-ins (tests/standins/device_api.py) hand every committed config's routing part, as the
vendors' parsers read it, to that switch's FRR in `fabricgen lab` (tests/standins/lab_routing.py)
and answer `show ip bgp summary`, `show lldp neighbors`, `show interfaces` from FRR, lldpd and
the kernel. So what the post-checks see, and what these tests assert, is the daemons' state.

One lab serves the module; the scenarios run in file order on it:
1. a wrong remote-as on day 0 fails the leaf canary (after the spines' tier) with BGP state from FRR and rolls back;
2. a day-0 push of the whole fabric: every switch pushed, every planned session Established with
   prefixes in FRR, LLDP from lldpd equal to the cabling plan;
3. the controller lost between the canary's commit timer and its confirm (a one-leaf change: a
   pinned ASN): the stand-in's clock expires the timer, the previous config returns and FRR is
   back on the pre-change sessions;
4. the same one-leaf change, run to the end: only that leaf and its spines change, the others
   are not touched (no session, no checkpoint).

The fabric is the deploy tests' small one (2 EOS spines, 2 NX-OS leaves, both platforms): the
scenarios need both platforms and several runs on one lab. The shipped example
`inventories/pod-roce-400g` (one platform, 256 BGP sessions) gets its own day-0 push in
tests/test_playbooks_lab_example.py.
"""

from __future__ import annotations

import os
import re
import signal
from collections.abc import Iterator

import pytest
import yaml

from fabricgen.lab.report import Check
from fabricgen.lab.verify import check_bgp, check_lldp
from tests.lab_deploy import LabDeploy, lab_deploy, wait_for
from tests.lab_helpers import needs_lab
from tests.standin_switches import FABRIC, SWITCHES
from tests.standins.device_api import ConfirmGate
from tests.standins.runner import BIN

pytestmark = [needs_lab, pytest.mark.skipif(not (BIN / "ansible-playbook").exists(), reason="needs the deploy extra (ansible)")]

PINNED = FABRIC.replace(
    'name: "lab1-leaf{index:02d}"}', 'name: "lab1-leaf{index:02d}", nodes: [{index: 2, asn: 65199}]}'
)  # leaf02 on a pinned ASN instead of 65102: leaf02 and both spines change, leaf01 does not
SESSION_EVENTS = ("commit-timer", "commit", "confirm", "checkpoint", "rollback", "save", "discard")


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabDeploy]:
    with lab_deploy(tmp_path_factory.mktemp("lab1"), FABRIC, "lab1") as running:
        yield running


def _hosts(lab: LabDeploy) -> dict[str, dict[str, object]]:
    return {name: yaml.safe_load((lab.deploy.build / "ansible" / "host_vars" / f"{name}.yml").read_text()) for name in SWITCHES}


def test_wrong_remote_as_fails_the_canary_with_bgp_state_from_frr_and_rolls_back(lab: LabDeploy) -> None:
    leaf = lab.deploy.build / "configs" / "lab1-leaf01.cfg"
    rendered = leaf.read_text()
    leaf.write_text(rendered.replace("remote-as 65000", "remote-as 65009"))
    try:
        result = lab.deploy.run("deploy.yml")
    finally:
        leaf.write_text(rendered)
    assert result.returncode != 0
    assert lab.deploy.commits() == ["lab1-spine01", "lab1-spine02", "lab1-leaf01"]  # tier by tier, then the leaf canary fails
    # FRR's own state of the session, not a planned value: never Established with remote-as 65009
    states = re.findall(r"\(lab1-spine01, already on the new config\) is (\w+)", result.stdout)
    assert states and "Established" not in states, result.stdout[-3000:]
    assert "rolled back now and verified" in result.stdout
    device = lab.deploy.device("lab1-leaf01")
    assert not device.changed and device.pending is None
    assert lab.frr.bgp_summary("lab1-leaf01").get("peers", {}) == {}  # FRR back on the old config
    assert lab.deploy.device("lab1-leaf02").events("commit-timer") == []  # the failed canary stopped the leaves' tier


def test_day0_push_every_switch_every_session_established_with_prefixes_lldp_as_cabled(lab: LabDeploy) -> None:
    lab.reset()
    assert all(lab.sessions(name) == {} for name in SWITCHES)  # day 0: no BGP anywhere
    result = lab.deploy.run("deploy.yml")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert sorted(lab.deploy.commits()) == SWITCHES
    for name, device in lab.devices().items():
        assert device.changed and device.pending is None and "router bgp" in device.running, name
    # From FRR and lldpd, against the plan (not against what the stand-ins were told):
    bgp = wait_for(lambda: check_bgp(lab.frr, lab.topology))
    assert bgp.passed, bgp.failures[:10]
    planned = sum(len(s.neighbors) for s in lab.topology.switches)
    assert planned == 2 * 2 * 1 * 2  # spines x leaves x links per spine x both ends
    for name in SWITCHES:
        summary = lab.frr.bgp_summary(name)["peers"]
        assert all(peer["pfxRcd"] >= 1 for peer in summary.values()), (name, summary)
    lldp = wait_for(lambda: check_lldp(lab.frr, lab.topology))
    assert lldp.passed, lldp.failures[:10]
    for name, host in _hosts(lab).items():  # what the post-check read: the stand-in's LLDP = cabling plan
        cabled = {(c["interface"], c["peer"], c["peer_interface"]) for c in host["fabricgen_lldp_plan"]}  # type: ignore[attr-defined]
        assert set(lab.deploy.device(name).routing.lldp(lab.deploy.device(name))) == cabled, name  # type: ignore[union-attr]


def test_controller_lost_before_confirm_the_timer_brings_back_the_previous_config(lab: LabDeploy) -> None:
    # The change: leaf02 onto a pinned ASN. The spine canary's half lands first (its session to
    # leaf02 drops until leaf02 follows), its post-checks pass, and at the confirm the controller dies.
    spine = lab.deploy.device("lab1-spine01")
    previous = spine.running
    pre_change = lab.sessions("lab1-spine01")
    assert {state for state, _ in pre_change.values()} == {"Established"} and len(pre_change) == 2
    lab.render(PINNED)
    gate = ConfirmGate()
    spine.confirm_gate = gate
    logged = len(spine.log)
    lab.deploy.order.clear()
    output = lab.deploy.runner.workdir / "lost-controller.log"
    controller = lab.deploy.runner.start("deploy.yml", output=output)
    try:
        assert gate.reached.wait(timeout=900), output.read_text()[-4000:]
        os.killpg(controller.pid, signal.SIGKILL)  # the controller is gone: nobody confirms or aborts
        controller.wait(timeout=30)
    finally:
        gate.release.set()
        lab.deploy.runner.stop_leftovers()
    assert spine.pending is not None and spine.running != previous  # staged with its timer, not confirmed
    assert lab.deploy.commits() == ["lab1-spine01"] and [kind for kind, _ in spine.log[logged:] if kind in SESSION_EVENTS] == [
        "commit-timer"
    ]
    during = lab.sessions("lab1-spine01")
    assert during != pre_change  # FRR runs the staged config: the session to leaf02 is down
    # The stand-in's own clock, advanced by the test (no wall-clock wait): the timer expires.
    lab.deploy.clock.advance(3600)
    assert spine.events("timer-expired")[-1:] == ["timer-expired"]
    assert spine.running == previous and spine.pending is None
    back = wait_for(lambda: _same_sessions(lab, "lab1-spine01", pre_change))
    assert back.passed, (lab.sessions("lab1-spine01"), pre_change)
    for name in ("lab1-leaf01", "lab1-leaf02", "lab1-spine02"):  # nothing else was touched
        assert lab.deploy.device(name).pending is None, name
    assert [entry for entry in lab.deploy.order if entry.endswith(":commit-timer")] == ["lab1-spine01:commit-timer"]
    lab.render(FABRIC)  # the inventory the fabric runs again


def test_one_leaf_change_touches_only_that_leaf_and_its_spines(lab: LabDeploy) -> None:
    lab.render(FABRIC)  # the configs the fabric runs (day 0)
    before = {p.name: p.read_text() for p in (lab.deploy.build / "configs").glob("*.cfg")}
    topology = lab.render(PINNED)
    after = {p.name: p.read_text() for p in (lab.deploy.build / "configs").glob("*.cfg")}
    changing = sorted(name.removesuffix(".cfg") for name in after if after[name] != before.get(name))
    assert changing == ["lab1-leaf02", "lab1-spine01", "lab1-spine02"]
    untouched = lab.deploy.device("lab1-leaf01")
    untouched_config, untouched_log = untouched.running, len(untouched.log)
    lab.deploy.order.clear()

    result = lab.deploy.run("deploy.yml")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    commits = lab.deploy.commits()
    assert sorted(commits) == changing
    assert commits == ["lab1-spine01", "lab1-spine02", "lab1-leaf02"]  # tier by tier: both spines before the leaf
    # leaf01: read (pre-flight, baseline), never changed: no session, no checkpoint, same config
    assert untouched.running == untouched_config
    assert [kind for kind, _ in untouched.log[untouched_log:] if kind in SESSION_EVENTS] == []
    assert not any(re.match(r"(configure session|checkpoint|configure replace)", cmd) for kind, cmd in untouched.log[untouched_log:])
    # FRR: the spines peer with leaf02 at its pinned ASN, everything Established
    bgp = wait_for(lambda: check_bgp(lab.frr, topology))
    assert bgp.passed, bgp.failures[:10]
    assert {remote for state, remote in lab.sessions("lab1-spine01").values() if state == "Established"} == {"65101", "65199"}


def _same_sessions(lab: LabDeploy, switch: str, expected: dict[str, tuple[str, str]]) -> Check:
    check = Check(0, "sessions", f"{switch} is back on its pre-change BGP sessions")
    now = lab.sessions(switch)
    if now != expected:
        check.fail(switch, f"{now} != {expected}")
    return check
