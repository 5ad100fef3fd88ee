"""`fabricgen diff`: plan against plan, git revisions, and running-config remediation/rollback
with hier_config on captured running configs of both platforms (tests/data/running/)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.diffing.inventory import diff_plans, report
from fabricgen.diffing.running import diff_running, remediate
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES, ROOT, example_plan

RUNNING = ROOT / "tests" / "data" / "running"
POD1 = (EXAMPLES / "pod-roce-400g" / "fabric.yml").read_text(encoding="utf-8")


def _inventory(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fabric.yml").write_text(text, encoding="utf-8")
    return folder


# Three edits a change window typically carries: one address, one BGP neighbor gone, one ECN threshold.
EOS_EDITS = (
    ("ip address 10.1.0.3/31", "ip address 10.1.0.5/31"),
    ("   neighbor 10.1.0.2 peer group SPINES\n   neighbor 10.1.0.2 description pod1-spine02 Ethernet1/1\n", ""),
    ("minimum-threshold 150 kbytes", "minimum-threshold 300 kbytes"),
)
NXOS_EDITS = (
    ("ip address 10.21.0.3/31", "ip address 10.21.0.5/31"),
    ("  neighbor 10.21.0.2\n    inherit peer SPINES\n    description pod2-spine02 Ethernet1/1\n", ""),
    ("minimum-threshold 950 kbytes", "minimum-threshold 1200 kbytes"),
)


def _edited(text: str, edits: tuple[tuple[str, str], ...]) -> str:
    for old, new in edits:
        assert old in text
        text = text.replace(old, new)
    return text


def test_eos_remediation_and_rollback() -> None:
    running = (RUNNING / "pod1-leaf01.cfg").read_text(encoding="utf-8")
    remediation, rollback = remediate("eos", running, _edited(running, EOS_EDITS))
    assert remediation.splitlines() == [
        "qos profile ROCE-LOSSLESS",
        "  uc-tx-queue 3",
        "    no random-detect ecn minimum-threshold 150 kbytes maximum-threshold 3000 kbytes max-mark-probability 7 weight 0",
        "    random-detect ecn minimum-threshold 300 kbytes maximum-threshold 3000 kbytes max-mark-probability 7 weight 0",
        "interface Ethernet34/1",
        "  ip address 10.1.0.5/31",
        "router bgp 65101",
        "  no neighbor 10.1.0.2 peer group SPINES",
        "  no neighbor 10.1.0.2 description pod1-spine02 Ethernet1/1",
    ]
    assert "  ip address 10.1.0.3/31" in rollback.splitlines()
    assert "  neighbor 10.1.0.2 peer group SPINES" in rollback.splitlines()
    assert (
        "    random-detect ecn minimum-threshold 150 kbytes maximum-threshold 3000 kbytes max-mark-probability 7 weight 0"
        in rollback.splitlines()
    )
    # Rolling back the remediated config restores the running config: nothing left to do.
    assert remediate("eos", running, running) == ("", "")


def test_nxos_remediation_and_rollback() -> None:
    running = (RUNNING / "pod2-leaf01.cfg").read_text(encoding="utf-8")
    remediation, rollback = remediate("nxos", running, _edited(running, NXOS_EDITS))
    assert remediation.splitlines() == [
        "policy-map type queuing QOS_OUT",
        "  class type queuing c-out-8q-q3",
        "    no random-detect minimum-threshold 950 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn",
        "    random-detect minimum-threshold 1200 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn",
        "interface Ethernet1/34",
        "  ip address 10.21.0.5/31",
        "router bgp 4200000101",
        "  no neighbor 10.21.0.2",
    ]
    assert rollback.splitlines()[-3:] == ["  neighbor 10.21.0.2", "    inherit peer SPINES", "    description pod2-spine02 Ethernet1/1"]
    assert "  ip address 10.21.0.3/31" in rollback.splitlines()


def test_diff_running_reports_missing_and_unknown_devices() -> None:
    result = diff_running(
        {"a": "hostname a\n", "ghost": "hostname ghost\n"}, {"a": "hostname a\n", "b": "hostname b\n"}, {"a": "eos", "b": "eos"}
    )
    assert [r.device for r in result.remediations] == ["a"]
    assert result.remediations[0].remediation == ""
    assert result.missing_running == ["b"]
    assert result.unknown_running == ["ghost"]


def test_cli_running_writes_remediation_and_rollback(tmp_path: Path) -> None:
    """End to end from a build folder: rendered configs/ and plan/fabric.json, backups in running/."""
    build = tmp_path / "build" / "pod1"
    assert CliRunner().invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(build), "-q"]).exit_code == 0
    running_text = (RUNNING / "pod1-leaf01.cfg").read_text(encoding="utf-8")
    # Stand in for the rendered config with the edited capture (the device templates are not under test here).
    (build / "configs" / "pod1-leaf01.cfg").write_text(_edited(running_text, EOS_EDITS), encoding="utf-8")
    (build / "running").mkdir()
    shutil.copy(RUNNING / "pod1-leaf01.cfg", build / "running" / "pod1-leaf01.cfg")
    (build / "rollback").mkdir()
    (build / "rollback" / "pod1-old.cfg").write_text("stale\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", "--running", str(build / "running"), "--exit-code"])
    assert result.exit_code == 1, result.output
    assert "pod1-leaf01: 9 remediation line(s)" in result.output
    remediation = (build / "remediation" / "pod1-leaf01.cfg").read_text(encoding="utf-8")
    assert "  ip address 10.1.0.5/31\n" in remediation
    assert "  ip address 10.1.0.3/31\n" in (build / "rollback" / "pod1-leaf01.cfg").read_text(encoding="utf-8")
    assert not (build / "rollback" / "pod1-old.cfg").exists()
    # The render manifest does not own these files: a later render --check stays clean and keeps them.
    (build / "configs" / "pod1-leaf01.cfg").write_text(_render_config(tmp_path), encoding="utf-8")
    check = CliRunner().invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(build), "--check"])
    assert check.exit_code == 0, check.output
    assert (build / "remediation" / "pod1-leaf01.cfg").is_file()


def _render_config(tmp_path: Path) -> str:
    fresh = tmp_path / "fresh"
    CliRunner().invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(fresh), "-q"])
    return (fresh / "configs" / "pod1-leaf01.cfg").read_text(encoding="utf-8")


def test_cli_running_json(tmp_path: Path) -> None:
    build = tmp_path / "pod1"
    CliRunner().invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(build), "-q"])
    (build / "running").mkdir()
    rendered = (build / "configs" / "pod1-leaf02.cfg").read_text(encoding="utf-8")
    (build / "running" / "pod1-leaf02.cfg").write_text(rendered, encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", "--running", str(build / "running"), "--json", "--exit-code"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["differs"] is False
    assert data["devices"] == {"pod1-leaf02": {"remediation": "", "rollback": ""}}
    assert "pod1-leaf01" in data["missing_running"]


def test_plan_diff_lists_devices_cables_and_values(tmp_path: Path) -> None:
    old = example_plan("pod-roce-400g")
    changed = POD1.replace("leaf_asn: 65101", "leaf_asn: 65201").replace(
        "      management: 192.168.0.200\n", "      management: 192.168.0.201\n"
    )
    changed = changed.replace("  per_leaf: 4 ", "  per_leaf: 3 ")
    new = load_and_plan(_inventory(tmp_path / "new", changed)).plan
    result = diff_plans(old, new)
    assert result.devices_added == result.devices_removed == []
    assert result.devices_changed == sorted(d.name for d in old.devices)
    assert "pod1-leaf01 ASN: 65101 -> 65201" in result.values_changed
    assert "pod1-leaf03 management: 192.168.0.200 -> 192.168.0.201" in result.values_changed
    assert any(v.startswith("pod1-spine01 BGP neighbor ") and v.endswith("remote ASN: 65101 -> 65201") for v in result.values_changed)
    assert len(result.cables_removed) == 8 * 8  # one server (8 NICs) less on each of 8 leaves
    assert "pod1-leaf01-srv04 nic1 -- pod1-leaf01 Ethernet25/1" in result.cables_removed
    assert result.cables_added == []
    text = report(result)
    assert "cables removed (64):" in text


def test_plan_diff_of_identical_plans_is_empty() -> None:
    plan = example_plan("pod-mixed")
    assert not diff_plans(plan, plan).differs
    assert report(diff_plans(plan, plan)) == "no differences\n"


def test_cli_diff_two_inventories_json(tmp_path: Path) -> None:
    new = _inventory(tmp_path / "new", POD1 + "# a comment changes nothing\n")
    result = CliRunner().invoke(main, ["diff", str(EXAMPLES / "pod-roce-400g"), str(new), "--json", "--exit-code"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["differs"] is False


def test_cli_diff_bad_usage_exits_2() -> None:
    result = CliRunner().invoke(main, ["diff", str(EXAMPLES / "pod-roce-400g")])
    assert result.exit_code == 2
    assert "two inventories" in result.output


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A throwaway git repository with two commits of one inventory."""
    root = tmp_path / "repo"
    inventory = _inventory(root / "inv", POD1)

    # Independent of the user's git configuration (signing, hooks, default branch).
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)

    git("init", "-q", "-b", "main")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "add", ".")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "one")
    (inventory / "fabric.yml").write_text(POD1.replace("spine_asn: 65000", "spine_asn: 64999"), encoding="utf-8")
    git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qam", "two")
    return root


def test_cli_diff_git_revisions(repo: Path) -> None:
    result = CliRunner().invoke(main, ["diff", "--rev", "HEAD~1", "--rev", "HEAD", str(repo / "inv")])
    assert result.exit_code == 0, result.output
    assert "pod1-spine01 ASN: 65000 -> 64999" in result.output
    # One revision: against the working tree (which equals HEAD here).
    same = CliRunner().invoke(main, ["diff", "--rev", "HEAD", str(repo / "inv"), "--exit-code"])
    assert same.exit_code == 0, same.output
    assert same.output == "no differences\n"


def test_cli_diff_unknown_revision_exits_2(repo: Path) -> None:
    result = CliRunner().invoke(main, ["diff", "--rev", "no-such-rev", str(repo / "inv")])
    assert result.exit_code == 2
    assert "no-such-rev" in result.output
    assert "Traceback" not in result.output


def test_plan_diff_of_a_grown_fabric_shows_new_devices_and_their_configs(tmp_path: Path) -> None:
    from tests.fabrics import fabric, write

    small = load_and_plan(write(tmp_path, fabric(), "small.yml")).plan
    big = load_and_plan(write(tmp_path, fabric(leaves={"count": 5}), "big.yml")).plan
    grown = diff_plans(small, big)
    assert grown.devices_added == ["t1-leaf05"]
    assert grown.config_diffs["t1-leaf05"].startswith("--- a/configs/t1-leaf05.cfg\n+++ b/configs/t1-leaf05.cfg\n")
    assert set(grown.devices_changed) == {"t1-spine01", "t1-spine02"}  # new downlinks; other leaves untouched
    assert len(grown.cables_added) == 2 * 2 + 4  # 2 spines x 2 links + 4 servers
    shrunk = diff_plans(big, small)
    assert shrunk.devices_removed == ["t1-leaf05"]
    assert "t1-leaf05" in shrunk.config_diffs


def test_a_changed_device_is_never_listed_without_what_changed() -> None:
    """A planned value no list names and no config prints (here the InfiniBand GUID of an
    Ethernet switch) still says which field changed."""
    from dataclasses import replace

    old = example_plan("pod-roce-400g")
    devices = tuple(replace(d, guid="0x0002c90300000001") if d.name == "pod1-leaf02" else d for d in old.devices)
    result = diff_plans(old, replace(old, devices=devices))
    assert result.devices_changed == ["pod1-leaf02"]
    assert result.config_diffs == {}
    assert result.values_changed == ["pod1-leaf02 guid: changed"]
