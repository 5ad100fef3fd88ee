"""deploy.yml / rollback.yml on EOS and NX-OS from day 0, end to end against STAND-IN device APIs
(tests/standin_switches.py; what they prove and do not prove: tests/test_playbooks_switches.py).

The scenarios that start from a pushed day 0 share one stand-in fabric and follow one another in
file order (`Day0Fabric`): the check run and the day-0 push, then a change that fails its
canary, a rollback from a folder, a rollback with --limit. Each asks for the switches it needs on
day 0 and gets them pushed only when they are not known to be (run alone with -k, or after a
scenario that failed), so each starts where it was written to start while the module pushes day 0
once: a four-switch deploy.yml is about 100 CPU-seconds of Ansible (docs/testing.md).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.standin_switches import SECRETS, SWITCHES, Day0Fabric, Lab, standin_switches
from tests.standins.runner import BIN

pytestmark = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(BIN)) is None, reason="needs the deploy extra (ansible)")


@pytest.fixture(scope="module")
def fabric(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Day0Fabric]:
    with standin_switches(tmp_path_factory.mktemp("day0")) as running:
        yield Day0Fabric(running)


def _recap(output: str) -> dict[str, dict[str, int]]:
    recap = {}
    for match in re.finditer(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M):
        recap[match.group(1)] = {"ok": int(match.group(2)), "changed": int(match.group(3)), "failed": int(match.group(5))}
    return recap


def _secrets_under(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and any(s in p.read_text(errors="ignore") for s in SECRETS)]


def _secret_values_under(folder: Path) -> list[str]:
    """'<file>: <value>' for every value a platform's secret pattern finds, not redacted."""
    from fabricgen.push.ownership import managed_platforms, ownership

    patterns = [pattern for platform in managed_platforms() for pattern in ownership(platform).secrets]
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".cfg", ".txt", ".yml", ".json", "")):
        for line in path.read_text(errors="ignore").splitlines():
            for pattern in patterns:
                match = pattern.search(line)
                if match and match.group(1) != "<redacted>":
                    found.append(f"{path.relative_to(folder)}: {match.group(1)}")
    return found


def _check_run_commits_nothing(lab: Lab) -> None:
    # --check --diff: each changing device shows its own diff, nothing is committed, the EOS
    # session is discarded, no NX-OS file stays on bootflash.
    check = lab.run("deploy.yml", "--check", "--diff")
    assert check.returncode == 0, check.stdout + check.stderr
    for name in SWITCHES:
        device = lab.device(name)
        assert not device.changed, name
        assert device.events("commit-timer", "commit", "confirm", "checkpoint", "save") == [], name
        assert device.bootflash == {}, name
    assert "--- lab1-spine01 running-config -> staged config" in check.stdout
    assert lab.device("lab1-spine01").events("discard") == ["discard"]
    assert not any(secret in check.stdout for secret in SECRETS)


def _day0_push_tier_by_tier(lab: Lab) -> None:
    # The push: tier by tier (spines, then leaves: the plan's tier order), each tier's canary, then
    # its other switches; commit timer -> post-checks against the baseline -> confirm -> save.
    push = lab.run("deploy.yml", "--diff")
    assert push.returncode == 0, push.stdout + push.stderr
    assert lab.commits() == ["lab1-spine01", "lab1-spine02", "lab1-leaf01", "lab1-leaf02"]
    for name in SWITCHES:
        device = lab.device(name)
        expected = ["commit-timer", "confirm", "save"] if device.platform == "eos" else ["checkpoint", "commit-timer", "confirm", "save"]
        assert device.events("commit-timer", "confirm", "save", "checkpoint", "rollback") == expected, name
        assert device.changed and device.pending is None and device.startup == device.running
        # access kept: the login users, their roles and the API survive the full replace
        assert "username standin" in device.running and "username admin" in device.running, name
        assert ("management api http-commands" if device.platform == "eos" else "feature nxapi") in device.running
        assert device.bootflash == {} and device.checkpoints == {}, name  # cleaned in `always:`
        # BGP from both ends' committed configs, as the vendor parsers read them: all Established
        assert {state for state, _, _ in device.bgp_sessions().values()} == {"Established"}, name
        backup = lab.runner.backups / "lab1" / "running" / f"{name}.cfg"
        assert backup.read_text().rstrip() == device.initial.rstrip()
        assert backup.stat().st_mode & 0o077 == 0 and backup.parent.stat().st_mode & 0o077 == 0, name  # 0600 in 0700
        assert (lab.build / "deployed" / f"{name}.cfg").is_file()
    assert "username" not in (lab.build / "deployed" / "lab1-leaf01.cfg").read_text()
    assert _secrets_under(lab.build / "deployed") == [] and list(lab.stage.iterdir()) == []
    assert "boot nxos" in lab.device("lab1-leaf01").running and "copp profile strict" in lab.device("lab1-leaf01").running


def test_check_deploy_and_a_rerun_that_changes_nothing(fabric: Day0Fabric) -> None:
    lab = fabric.start()
    assert not any(lab.device(name).changed for name in SWITCHES), "the module's first scenario starts from the factory configs"
    _check_run_commits_nothing(lab)
    lab.order.clear()
    _day0_push_tier_by_tier(lab)

    # A rerun changes nothing: no session, no commit, changed=0.
    before = {name: len(lab.device(name).events("commit-timer")) for name in SWITCHES}
    again = lab.run("deploy.yml")
    assert again.returncode == 0, again.stdout + again.stderr
    assert {name: len(lab.device(name).events("commit-timer")) for name in SWITCHES} == before
    assert all(host["changed"] == 0 for host in _recap(again.stdout).values()), again.stdout
    fabric.leaves(*SWITCHES)


def test_a_canary_with_every_peer_in_the_change_still_fails_when_its_sessions_die(fabric: Day0Fabric) -> None:
    # After a day-0 push, a change touches every switch (a description on each), so every leaf
    # changes later in this run; the spine canary's config also loses `router bgp`. No session's
    # identity changes, so none is excused: the canary fails on its Idle sessions, is rolled
    # back, and nothing is saved.
    lab = fabric.start(*SWITCHES)
    rendered = {name: (lab.build / "configs" / f"{name}.cfg").read_text() for name in SWITCHES}
    try:
        for name in SWITCHES:
            path = lab.build / "configs" / f"{name}.cfg"
            path.write_text(re.sub(r"(?m)^(\s+description )", r"\1chg2 ", path.read_text(), count=1))
        spine = lab.build / "configs" / "lab1-spine01.cfg"
        spine.write_text(re.sub(r"(?ms)^router bgp .*?(?=^\S)", "", spine.read_text()))
        saves = len(lab.device("lab1-spine01").events("save"))
        lab.order.clear()
        # a change of its own: CHG1's folder keeps day 0's pre-change copies for the rollbacks below
        result = lab.run("deploy.yml", "-e", "fabricgen_overwrite_drift=true", env={"FABRICGEN_CHANGE_ID": "CHG2"})
        assert result.returncode != 0
        assert lab.commits() == ["lab1-spine01"]
        assert "was Established before the change, now" in result.stdout and "rolled back now and verified" in result.stdout
        device = lab.device("lab1-spine01")
        assert "router bgp" in device.running and len(device.events("save")) == saves and device.pending is None
    finally:
        for name, text in rendered.items():
            (lab.build / "configs" / f"{name}.cfg").write_text(text)
    fabric.leaves(*SWITCHES)  # the canary rolled back to day 0, nothing else committed


def test_rollback_restores_exactly_the_switches_with_a_file_in_the_folder(fabric: Day0Fabric) -> None:
    # A change folder holding one leaf's file: that leaf is restored, nothing else is touched,
    # and no other switch stops the run for lack of a file.
    lab = fabric.start(*SWITCHES)
    folder = lab.runner.backups / "lab1" / "one-leaf"
    folder.mkdir(mode=0o700)
    (folder / "lab1-leaf02.cfg").write_text((lab.runner.backups / "lab1" / "CHG1" / "lab1-leaf02.cfg").read_text())
    lab.order.clear()
    back = lab.run("rollback.yml", "-e", f"fabricgen_rollback_from={folder}")
    assert back.returncode == 0, back.stdout + back.stderr
    assert lab.commits() == ["lab1-leaf02"]
    assert "router bgp" not in lab.device("lab1-leaf02").running
    assert all("router bgp" in lab.device(name).running for name in SWITCHES if name != "lab1-leaf02")
    fabric.leaves(*(name for name in SWITCHES if name != "lab1-leaf02"))


def test_rollback_limit_restores_the_change_s_copies_and_no_secret_is_left_under_build(fabric: Day0Fabric) -> None:
    # rollback.yml --limit restores the pre-change backup (FABRICGEN_CHANGE_ID's folder) on those
    # switches; the others stay.
    lab = fabric.start("lab1-spine01", "lab1-leaf01", "lab1-spine02")
    back = lab.run("rollback.yml", "--limit", "lab1-spine01:lab1-leaf01")
    assert back.returncode == 0, back.stdout + back.stderr
    for name in ("lab1-spine01", "lab1-leaf01"):
        device = lab.device(name)
        assert "router bgp" not in device.running and "username standin" in device.running and device.pending is None
    assert "router bgp" in lab.device("lab1-spine02").running

    # Nothing under build/ carries a secret after a push and a rollback: no value any platform's
    # secret pattern (fabricgen/platforms/<os>/ownership.yml) finds is left unredacted, and none of the
    # stand-ins' own secrets (login passwords, TACACS key, SNMP community) appears anywhere.
    assert _secret_values_under(lab.build) == []
    assert _secrets_under(lab.build) == []
    assert _secrets_under(lab.runner.backups) != []  # the backups that hold them are where they belong
    fabric.leaves("lab1-spine02")
