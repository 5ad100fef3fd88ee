"""deploy.yml / rollback.yml on EOS and NX-OS, end to end against STAND-IN device APIs.

The stand-ins (tests/standins/device_api.py) speak eAPI and NX-API over HTTP on 127.0.0.1. They
authenticate against the users in their own running config, have a clock (an unconfirmed commit
rolls back when it expires), and derive BGP from the committed configs of both ends as the
vendors' own parsers read them (tests/standins/routing.py). They prove the playbooks' logic:
pre-flight, canaries among changing switches, batches, check mode, commit timer + confirm,
post-checks against a baseline, truthful rollback, lockout refusal, drift refusal. They do not
prove EOS or NX-OS CLI syntax: only a real device or a vendor VM can.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.standin_switches import SECRETS, SWITCHES, Lab, standin_switches
from tests.standins.runner import BIN, PlaybookRunner

pytestmark = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(BIN)) is None, reason="needs the deploy extra (ansible)")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    with standin_switches(tmp_path) as running:
        yield running


def _recap(output: str) -> dict[str, dict[str, int]]:
    recap = {}
    for match in re.finditer(r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", output, re.M):
        recap[match.group(1)] = {"ok": int(match.group(2)), "changed": int(match.group(3)), "failed": int(match.group(5))}
    return recap


def _secrets_under(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and any(s in p.read_text(errors="ignore") for s in SECRETS)]


def test_check_deploy_rerun_and_rollback(lab: Lab) -> None:
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
    lab.order.clear()

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

    # A rerun changes nothing: no session, no commit, changed=0.
    before = {name: len(lab.device(name).events("commit-timer")) for name in SWITCHES}
    again = lab.run("deploy.yml")
    assert again.returncode == 0, again.stdout + again.stderr
    assert {name: len(lab.device(name).events("commit-timer")) for name in SWITCHES} == before
    assert all(host["changed"] == 0 for host in _recap(again.stdout).values()), again.stdout

    # rollback.yml --limit restores the pre-change backup on those switches; the others stay.
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


def test_wrong_remote_as_fails_the_canary_with_bgp_from_both_configs_and_rolls_back(lab: Lab) -> None:
    # The spines go first and pass (their leaves are not on the new config yet); the leaf
    # canary then carries a wrong remote-as towards the spines: BGP read from both ends' configs
    # stays down, the post-check fails, the leaf is rolled back, verified, and the rollout stops.
    leaf = lab.build / "configs" / "lab1-leaf01.cfg"
    leaf.write_text(leaf.read_text().replace("remote-as 65000", "remote-as 65009"))
    result = lab.run("deploy.yml")
    assert result.returncode != 0
    assert lab.commits() == ["lab1-spine01", "lab1-spine02", "lab1-leaf01"]
    device = lab.device("lab1-leaf01")
    assert device.events("checkpoint", "commit-timer", "confirm", "rollback") == ["checkpoint", "commit-timer", "rollback"]
    assert not device.changed and device.pending is None and device.bootflash == {}
    assert "(lab1-spine01, already on the new config) is Active" in result.stdout
    assert "rolled back now and verified" in result.stdout
    assert lab.device("lab1-leaf02").events("commit-timer") == []


def test_a_canary_with_every_peer_in_the_change_still_fails_when_its_sessions_die(lab: Lab) -> None:
    # After a day-0 push, a change touches every switch (a description on each), so every leaf
    # changes later in this run; the spine canary's config also loses `router bgp`. No session's
    # identity changes, so none is excused: the canary fails on its Idle sessions, is rolled
    # back, and nothing is saved.
    assert lab.run("deploy.yml").returncode == 0
    for name in SWITCHES:
        path = lab.build / "configs" / f"{name}.cfg"
        path.write_text(re.sub(r"(?m)^(\s+description )", r"\1chg2 ", path.read_text(), count=1))
    spine = lab.build / "configs" / "lab1-spine01.cfg"
    spine.write_text(re.sub(r"(?ms)^router bgp .*?(?=^\S)", "", spine.read_text()))
    saves = len(lab.device("lab1-spine01").events("save"))
    lab.order.clear()
    result = lab.run("deploy.yml", "-e", "fabricgen_overwrite_drift=true")
    assert result.returncode != 0
    assert lab.commits() == ["lab1-spine01"]
    assert "was Established before the change, now" in result.stdout and "rolled back now and verified" in result.stdout
    device = lab.device("lab1-spine01")
    assert "router bgp" in device.running and len(device.events("save")) == saves and device.pending is None


def test_rollback_restores_exactly_the_switches_with_a_file_in_the_folder(lab: Lab) -> None:
    # A change folder holding one leaf's file: that leaf is restored, nothing else is touched,
    # and no other switch stops the run for lack of a file.
    assert lab.run("deploy.yml").returncode == 0
    folder = lab.runner.backups / "lab1" / "one-leaf"
    folder.mkdir(mode=0o700)
    (folder / "lab1-leaf02.cfg").write_text((lab.runner.backups / "lab1" / "CHG1" / "lab1-leaf02.cfg").read_text())
    lab.order.clear()
    back = lab.run("rollback.yml", "-e", f"fabricgen_rollback_from={folder}")
    assert back.returncode == 0, back.stdout + back.stderr
    assert lab.commits() == ["lab1-leaf02"]
    assert "router bgp" not in lab.device("lab1-leaf02").running
    assert all("router bgp" in lab.device(name).running for name in SWITCHES if name != "lab1-leaf02")


def test_list_hosts_of_the_three_tier_example_is_every_switch(tmp_path: Path) -> None:
    build = tmp_path / "cl1"
    from tests.standins.runner import ROOT

    subprocess.run(
        [str(BIN / "fabricgen"), "render", str(ROOT / "inventories" / "cluster-3tier"), "-o", str(build)], check=True, capture_output=True
    )
    listed = PlaybookRunner(tmp_path, [build / "ansible" / "hosts.yml"]).run("deploy.yml", "--list-hosts")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    plan = yaml.safe_load((build / "ansible" / "hosts.yml").read_text())["all"]["children"]
    every = {name for group in ("eos", "nxos") for name in plan.get(group, {}).get("hosts", {})}
    supers = set(plan["superspines"]["hosts"])
    shown = set(re.findall(r"^\s+(\S+)$", listed.stdout, re.M))
    assert supers and supers <= shown and every <= shown, sorted(every - shown)[:5]


def test_a_push_that_moves_the_ecn_thresholds_or_drops_a_service_policy_fails_its_qos_post_check(lab: Lab) -> None:
    # The stand-ins derive the QoS in effect from the config they hold; the post-check compares it
    # with the plan (host_vars fabricgen_qos_plan). A spine config whose ECN thresholds differ from
    # the plan fails the spine canary, which is rolled back; with the spine fixed, a leaf config
    # whose first server port lost its service-policy fails the leaf canary.
    spine = lab.build / "configs" / "lab1-spine01.cfg"
    rendered = spine.read_text()
    low = re.search(r"random-detect ecn minimum-threshold (\d+) kbytes", rendered)
    assert low is not None
    spine.write_text(rendered.replace(low.group(0), "random-detect ecn minimum-threshold 1 kbytes"))
    result = lab.run("deploy.yml")
    assert result.returncode != 0 and lab.commits() == ["lab1-spine01"]
    assert "traffic class 3 marks ECN from 1000 to" in result.stdout and f"the plan says {int(low.group(1)) * 1000} to" in result.stdout
    assert lab.device("lab1-spine01").events("rollback") == ["rollback"] and not lab.device("lab1-spine01").changed

    spine.write_text(rendered)
    leaf = lab.build / "configs" / "lab1-leaf01.cfg"
    leaf.write_text(leaf.read_text().replace("  service-policy type qos input QOS_CLASSIFY\n", "", 1))
    lab.order.clear()
    result = lab.run("deploy.yml")
    assert result.returncode != 0 and lab.commits() == ["lab1-spine01", "lab1-spine02", "lab1-leaf01"]
    assert "runs policy (none), the plan says QOS_CLASSIFY" in result.stdout
    assert not lab.device("lab1-leaf01").changed and lab.device("lab1-leaf02").events("commit-timer") == []


def test_an_authoritative_nxos_replace_without_the_switch_s_own_lines_is_refused_before_any_change(lab: Lab) -> None:
    # Authoritative mode stages the rendered file plus the overlay only: no `version` line, no boot
    # variable. The NX-OS stand-in refuses such a partial replace file at show-patch, as Cisco's
    # guide says a replace needs a complete running configuration: no checkpoint, no commit.
    overlay = {"FABRICGEN_NXOS_OVERLAY": "feature nxapi\nusername standin password 0 standin role network-admin\n"}
    result = lab.run("deploy.yml", "-e", "fabricgen_authoritative=true", "--limit", "lab1-leaf01", env=overlay)
    assert result.returncode != 0
    device = lab.device("lab1-leaf01")
    assert device.events("checkpoint", "commit-timer", "confirm", "save") == [] and not device.changed
    assert "read the device's own patch (show-patch)" in result.stdout and device.bootflash == {}
    asked = [detail for kind, detail in device.log if kind == "command"]
    assert any(command.endswith(" show-patch") for command in asked)  # refused there (the stand-in's rule)
    assert not any("commit-timeout" in command for command in asked)
