"""deploy.yml's pre-flight and limits on EOS and NX-OS, end to end against STAND-IN device APIs
(tests/standin_switches.py; what they prove and do not prove: tests/test_playbooks_switches.py):
the canary is a switch that changes, a lockout is refused before it happens (and what happens
without the refusal), the management overlay is merged at push time and never written, drift
is refused unless told. A file of its own so that a parallel run (`make test`) runs it beside
tests/test_playbooks_switches.py. The drift scenario follows the canary one on its fabric
(`Day0Fabric`): the push that made spine02 the canary is the one whose backup it drifts from.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.standin_switches import SWITCHES, Day0Fabric, Lab, standin_switches
from tests.standins.runner import BIN

pytestmark = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(BIN)) is None, reason="needs the deploy extra (ansible)")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    with standin_switches(tmp_path) as running:
        yield running


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Day0Fabric]:
    with standin_switches(tmp_path_factory.mktemp("canary")) as running:
        yield Day0Fabric(running)


def test_a_switch_with_nothing_to_change_is_never_the_canary(fabric: Day0Fabric) -> None:
    # spine01 already runs its rendered config: the spine canary is spine02.
    lab = fabric.start()
    assert not any(lab.device(name).changed for name in SWITCHES), "the module's first scenario on `fabric` starts from the factory configs"
    first = lab.run("deploy.yml", "--limit", "lab1-spine01")
    assert first.returncode == 0, first.stdout + first.stderr
    lab.order.clear()
    push = lab.run("deploy.yml")
    assert push.returncode == 0, push.stdout + push.stderr
    assert lab.commits() == ["lab1-spine02", "lab1-leaf01", "lab1-leaf02"]
    fabric.leaves(*SWITCHES)


def test_preflight_refuses_a_lockout_which_the_standin_would_enforce(lab: Lab) -> None:
    # Authoritative mode without a management overlay: the staged file has no login user.
    refused = lab.run("deploy.yml", "-e", "fabricgen_authoritative=true", "--limit", "lab1-spine01")
    assert refused.returncode != 0
    assert "lab1-spine01: the staged config has no 'username standin'" in refused.stdout
    assert lab.device("lab1-spine01").events("commit-timer") == []

    # An overlay that changes the login user's role is refused too.
    overlay = {"FABRICGEN_EOS_OVERLAY": "username standin privilege 1 role network-operator secret 0 standin\n"}
    role = lab.run("deploy.yml", "--limit", "lab1-spine01", env=overlay)
    assert role.returncode != 0 and "changes the role of 'standin' from network-admin to network-operator" in role.stdout

    # Without the pre-flight the stand-in locks the controller out: the commit lands, every later
    # request is refused, nothing can confirm or abort it; the commit timer brings the old config back.
    spine = lab.device("lab1-spine01")
    locked = lab.run("deploy.yml", "-e", "fabricgen_authoritative=true", "--limit", "lab1-spine01", "--skip-tags", "preflight_lockout")
    assert locked.returncode != 0
    assert spine.events("commit-timer") == ["commit-timer"] and "auth-refused" in spine.events()
    assert spine.pending is not None and "username standin" not in spine.running
    lab.clock.advance(600)
    assert spine.events("timer-expired") == ["timer-expired"] and not spine.changed and spine.pending is None


def test_management_overlay_is_merged_at_push_time_and_never_written(lab: Lab) -> None:
    overlay = {"FABRICGEN_EOS_OVERLAY": "username netops privilege 15 role network-admin secret 0 s3cr3t-overlay\n"}
    push = lab.run("deploy.yml", "--limit", "lab1-spine01", env=overlay)
    assert push.returncode == 0, push.stdout + push.stderr
    assert "username netops privilege 15 role network-admin secret 0 s3cr3t-overlay" in lab.device("lab1-spine01").running
    assert "s3cr3t-overlay" not in push.stdout + push.stderr
    written = [p for p in lab.build.rglob("*") if p.is_file() and "s3cr3t-overlay" in p.read_text(errors="ignore")]
    assert written == []  # the pre-change backups that hold it are outside build/


def test_drift_is_reported_and_refused_unless_told(fabric: Day0Fabric) -> None:
    lab = fabric.start("lab1-spine02")  # pushed once (the canary scenario's push, or here with --limit)
    spine = lab.device("lab1-spine02")
    # A hand-made change in a section fabricgen owns, and a hotfix ACL in none of its sections.
    spine.running = (
        spine.running.replace("router bgp 65000\n", "router bgp 65000\n   timers bgp 1 3\n")
        + "ip access-list HOTFIX\n   10 deny ip any any\n"
    )
    drift = lab.run("deploy.yml", "--limit", "lab1-spine02")
    assert drift.returncode != 0
    assert "lab1-spine02 drifted from its last post-change backup" in drift.stdout and "timers bgp 1 3" in drift.stdout
    assert spine.events("commit-timer") == ["commit-timer"]
    forced = lab.run("deploy.yml", "--limit", "lab1-spine02", "-e", "fabricgen_overwrite_drift=true")
    assert forced.returncode == 0, forced.stdout + forced.stderr
    assert "timers bgp 1 3" not in spine.running and "ip access-list HOTFIX" in spine.running  # foreign section kept


def test_control_plane_acl_is_pushed_into_the_kept_section_and_a_cut_controller_is_refused(lab: Lab) -> None:
    # The controller seen from outside management.allowed_sources: the staged ACL would cut it.
    refused = lab.run("deploy.yml", "--limit", "lab1-spine01", "-e", "fabricgen_controller_address=10.99.0.5")
    assert refused.returncode != 0
    assert "lab1-spine01: control-plane ACL FABRICGEN-CP in the staged config does not permit 10.99.0.5" in refused.stdout
    assert lab.device("lab1-spine01").events("commit-timer") == []
    # From the management network: pushed; the overlay's `system control-plane` keeps its own
    # line and carries the plan's access groups; the NX-OS leaf's `line vty` its access-class.
    overlay = {"FABRICGEN_EOS_OVERLAY": "system control-plane\n   tcp mss ceiling ipv4 1344\n"}
    push = lab.run("deploy.yml", "--limit", "lab1-spine01,lab1-leaf01", env=overlay)
    assert push.returncode == 0, push.stdout + push.stderr
    spine = lab.device("lab1-spine01").running
    assert "system control-plane\n   tcp mss ceiling ipv4 1344\n   ip access-group FABRICGEN-CP in\n" in spine
    assert "ip access-list FABRICGEN-CP\n" in spine
    assert "line vty\n  access-class FABRICGEN-CP in\n" in lab.device("lab1-leaf01").running
