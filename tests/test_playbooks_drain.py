"""drain.yml's pre-flight for real (ansible-playbook on the rendered inventory of the shipped
example `inventories/pod-roce-400g`): two of its four spines drained together leave every 1:1
leaf at 2:1, above the default `oversubscription.during_change` 1.5:1, so the run stops before
any switch is contacted, naming the second spine; one spine passes the pre-flight. Expected
figures from the inventory: 8 leaves x 4 spines x 8 links of 400G, 32 servers x 400G per leaf."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.standins.runner import BIN, ROOT, PlaybookRunner, render

pytestmark = pytest.mark.skipif(not (BIN / "ansible-playbook").exists(), reason="needs the deploy extra (ansible)")


@pytest.fixture(scope="module")
def runner(tmp_path_factory: pytest.TempPathFactory) -> PlaybookRunner:
    out = tmp_path_factory.mktemp("pod1")
    render(ROOT / "inventories" / "pod-roce-400g", out / "pod1")
    return PlaybookRunner(out, [out / "pod1" / "ansible" / "hosts.yml"])


def test_two_of_four_spines_are_refused_naming_the_second_before_any_switch_is_contacted(runner: PlaybookRunner) -> None:
    result = runner.run("drain.yml", "--limit", "pod1-spine01,pod1-spine02")
    assert result.returncode != 0, result.stdout[-3000:]
    # 8 x 400G from each spine to each leaf: two spines out take 6400 of its 12800 Gbps up
    assert (
        "draining pod1-spine01, pod1-spine02: pod1-spine02 would break it: pod1-leaf01 at 2:1 (12800G down, 6400G of 12800G up),"
        " above oversubscription.during_change 1.5:1" in result.stdout
    ), result.stdout[-3000:]
    assert "nothing was changed" in result.stdout
    assert "Drain | one switch at a time" not in result.stdout  # the drain play never started
    recap = [line.split() for line in result.stdout.splitlines() if "unreachable=" in line]
    assert recap and all("changed=0" in line and "unreachable=0" in line for line in recap), recap  # nothing contacted or changed


def test_one_spine_of_four_passes_the_pre_flight(runner: PlaybookRunner) -> None:
    # --check stops at the first connection (there is no switch here); the pre-flight's verdict is what counts
    result = runner.run("drain.yml", "--limit", "pod1-spine01", "--check")
    assert "would break it" not in result.stdout, result.stdout[-3000:]
    assert "Drain | one switch at a time" in result.stdout, result.stdout[-3000:]


def test_the_playbooks_exist_and_name_their_limit() -> None:
    for name in ("drain.yml", "undrain.yml"):
        assert "--limit" in (ROOT / "playbooks" / name).read_text()
    assert Path(ROOT / "playbooks" / "tasks" / "drain_change.yml").is_file()
