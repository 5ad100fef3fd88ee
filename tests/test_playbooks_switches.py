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
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.standin_switches import Lab, standin_switches
from tests.standins.runner import BIN, ROOT, PlaybookRunner, render

pytestmark = pytest.mark.skipif(shutil.which("ansible-playbook", path=str(BIN)) is None, reason="needs the deploy extra (ansible)")


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    with standin_switches(tmp_path) as running:
        yield running


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


def test_list_hosts_of_the_three_tier_example_is_every_switch(tmp_path: Path) -> None:
    build = tmp_path / "cl1"
    render(ROOT / "inventories" / "cluster-3tier", build)
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
