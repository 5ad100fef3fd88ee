"""The day-2 workflows of docs/deploy.md ("Day-2 workflows") are what the tool does: each is
re-run here on a temporary copy of its inventory, the `fabricgen diff` output pasted in the docs
must be the output of that run (shortened by `excerpt`, the same rule both ways), and what each
workflow promises is checked on the plans: adding a pod moves nothing on existing pods, a
replaced leaf changes only its serial, a spine's new model moves its ports and cables while its
neighbours change only in descriptions."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.artifacts.netbox import netbox
from fabricgen.cli import main
from fabricgen.core.model import Device, Plan
from fabricgen.diffing.inventory import diff_plans
from fabricgen.diffing.markdown import markdown_report
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES, ROOT

POD = EXAMPLES / "pod-roce-400g" / "fabric.yml"
THREE_TIER = ROOT / "tests" / "data" / "workflows" / "three-tier.yml"
WORKFLOWS: dict[str, tuple[Path, tuple[tuple[str, str], ...], tuple[str, ...]]] = {
    # name: (inventory, the edit as text replacements, the devices whose config diff the docs show)
    "add-pod": (THREE_TIER, (("pods:\n  count: 2\n", "pods:\n  count: 3\n"),), ("wf3-ss1-01",)),
    "replace-leaf": (POD, (("serial: JPE23451234", "serial: JPE24519876"),), ()),
    "spine-model": (
        POD,
        (
            (
                '  name: "pod1-spine{index:02d}"\n',
                '  name: "pod1-spine{index:02d}"\n  nodes:\n    - index: 2\n      model: arista-7060x6-64pe\n',
            ),
        ),
        ("pod1-leaf01",),
    ),
}
SHOWN_ITEMS = 4
"""Items of each list of the report the docs show (the rest is counted)."""
DOC = ROOT / "docs" / "deploy.md"


def edited(name: str, tmp: Path) -> tuple[Path, Path]:
    """The workflow's inventory and a copy with its edit applied (the edit must apply)."""
    inventory, edits, _ = WORKFLOWS[name]
    text = inventory.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, f"{name}: the edit {old!r} does not apply to {inventory}"
        text = text.replace(old, new)
    changed = tmp / name / "fabric.yml"
    changed.parent.mkdir(parents=True)
    changed.write_text(text, encoding="utf-8")
    return inventory, changed


def excerpt(report: str, devices: tuple[str, ...]) -> str:
    """The report's lists cut to SHOWN_ITEMS items each, then the config diffs of `devices`."""
    summary, _, diffs = report.partition("\n--- a/configs/")
    lines: list[str] = []
    shown = 0
    for line in summary.rstrip("\n").splitlines():
        if not line.startswith("  "):
            total = int(re.sub(r".*\((\d+)\):$", r"\1", line))
            shown = 0
            lines.append(line)
        elif shown < SHOWN_ITEMS:
            lines.append(line)
            shown += 1
            if shown == SHOWN_ITEMS and total > SHOWN_ITEMS:
                lines.append(f"  ... {total - SHOWN_ITEMS} more")
    text = "\n".join(lines) + "\n"
    for block in ("--- a/configs/" + diffs).split("\n\n--- a/configs/") if diffs else []:
        body = block if block.startswith("--- a/configs/") else "--- a/configs/" + block
        if body.split("/configs/", 1)[1].split(".cfg", 1)[0] in devices:
            text += "\n" + body.rstrip("\n") + "\n"
    return text


def run_workflow(name: str, tmp: Path) -> str:
    before, after = edited(name, tmp)
    result = CliRunner().invoke(main, ["diff", str(before), str(after)])
    assert result.exit_code == 0, result.output
    return excerpt(result.output, WORKFLOWS[name][2])


def pasted(name: str) -> str:
    """The fenced block after `<!-- fabricgen diff: NAME -->` in docs/deploy.md."""
    found = re.search(rf"<!-- fabricgen diff: {name} -->\n```text\n(.*?)```\n", DOC.read_text(encoding="utf-8"), re.DOTALL)
    assert found, f"docs/deploy.md has no block <!-- fabricgen diff: {name} -->"
    return found.group(1)


@pytest.mark.parametrize("name", sorted(WORKFLOWS))
def test_the_docs_show_the_real_diff_of_each_workflow(name: str, tmp_path: Path) -> None:
    fresh = run_workflow(name, tmp_path)
    assert pasted(name) == fresh, f"docs/deploy.md's block for {name} is out of date; today's output:\n{fresh}"


def test_the_excerpt_rule_cuts_lists_and_keeps_named_configs() -> None:
    report = (
        "devices changed (6):\n" + "".join(f"  ~ d{i}\n" for i in range(6)) + "\n--- a/configs/d1.cfg\n+x\n\n--- a/configs/d2.cfg\n+y\n"
    )
    assert (
        excerpt(report, ("d2",))
        == "devices changed (6):\n" + "".join(f"  ~ d{i}\n" for i in range(4)) + "  ... 2 more\n\n--- a/configs/d2.cfg\n+y\n"
    )


def _plans(name: str, tmp: Path) -> tuple[Plan, Plan]:
    before, after = edited(name, tmp)
    return load_and_plan(before).plan, load_and_plan(after).plan


def test_adding_a_pod_changes_only_the_super_spines_and_only_by_adding(tmp_path: Path) -> None:
    old, new = _plans("add-pod", tmp_path)
    grown = diff_plans(old, new)
    assert grown.devices_added == ["wf3-p3-leaf01", "wf3-p3-leaf02", "wf3-p3-spine01", "wf3-p3-spine02"]
    assert grown.devices_removed == [] and grown.cables_removed == [] and grown.cables_moved == []
    assert grown.devices_changed == [f"wf3-ss{plane}-{index:02d}" for plane in (1, 2) for index in (1, 2, 3, 4)]
    after = {d.name: d for d in new.devices}
    for device in old.devices:
        now = after[device.name]
        if device.role != "superspine":
            assert now == device, f"{device.name} changed when a pod was added"
            continue
        # every existing port, address and session of a super-spine stays; one of each is added
        assert set(device.interfaces) < set(now.interfaces) and len(now.interfaces) == len(device.interfaces) + 1
        assert set(device.bgp_neighbors) < set(now.bgp_neighbors)
        assert (now.loopback, now.asn, now.management) == (device.loopback, device.asn, device.management)
    assert all(line.endswith("remote ASN: - -> 4200000103") for line in grown.values_changed)  # new sessions to pod 3 only


def _devices_csv(plan: Plan) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(netbox(plan, RenderContext())["devices.csv"])))


def test_a_replaced_leaf_changes_only_its_serial(tmp_path: Path) -> None:
    old, new = _plans("replace-leaf", tmp_path)
    result = diff_plans(old, new)
    assert result.devices_changed == ["pod1-leaf03"]
    assert result.values_changed == ["pod1-leaf03 serial: JPE23451234 -> JPE24519876"]
    assert result.config_diffs == {} and not result.cables_added and not result.cables_removed
    before, after = {d.name: d for d in old.devices}, {d.name: d for d in new.devices}
    assert replace(after["pod1-leaf03"], serial="JPE23451234") == before["pod1-leaf03"]
    rows_before, rows_after = _devices_csv(old), _devices_csv(new)
    changed = [(a, b) for a, b in zip(rows_before, rows_after, strict=True) if a != b]
    leaf03 = next(row for row in rows_before if row["name"] == "pod1-leaf03")
    assert changed == [(leaf03, {**leaf03, "serial": "JPE24519876"})]


def _without_descriptions(device: Device) -> tuple[object, ...]:
    """The device without the peer's port names (what its descriptions print)."""
    return (
        replace(device, interfaces=(), bgp_neighbors=()),
        tuple(replace(i, description="", peer_interface="") for i in device.interfaces),
        tuple(replace(n, description="", peer_interface="") for n in device.bgp_neighbors),
    )


def test_a_spine_s_new_model_moves_its_ports_and_its_neighbours_change_only_descriptions(tmp_path: Path) -> None:
    old, new = _plans("spine-model", tmp_path)
    result = diff_plans(old, new)
    before, after = {d.name: d for d in old.devices}, {d.name: d for d in new.devices}
    spine_was, spine_now = before["pod1-spine02"], after["pod1-spine02"]
    # the spine keeps its identity and every /31 (by address), on new port names
    assert (spine_now.loopback, spine_now.asn, spine_now.management) == (spine_was.loopback, spine_was.asn, spine_was.management)
    assert {(i.address, i.peer_device) for i in spine_now.interfaces} == {(i.address, i.peer_device) for i in spine_was.interfaces}
    assert {i.name for i in spine_now.interfaces} != {i.name for i in spine_was.interfaces}
    for name, device in before.items():
        if name == "pod1-spine02":
            continue
        if device.role == "leaf":
            assert _without_descriptions(after[name]) == _without_descriptions(device), f"{name} changed beyond descriptions"
        else:
            assert after[name] == device
    for name, text in result.config_diffs.items():
        if name != "pod1-spine02":
            changed = [line for line in text.splitlines()[2:] if line[:1] in "+-"]
            assert changed and all(" description pod1-spine02 " in line for line in changed), name
    # one cable kept its spine port (Ethernet1/1), the other 63 are re-patched at the spine end
    assert not result.cables_added and not result.cables_removed
    assert len(result.cables_moved) == 8 * 8 - 1
    assert all(" -- pod1-spine02 " in line for line in result.cables_moved)
    summary = markdown_report(result, "spine model")
    assert "| cables | 0 | 0 | 63 |" in summary and "Cables re-patched (one end moves)" in summary
