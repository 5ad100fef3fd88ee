"""`diff` shows values in the units the inventory is written in (`150KB`, `30m`, `3:1`), never
raw bytes or floats, and lengths may be written in km. Expected strings are the inventory's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabricgen.diffing.inventory import diff_plans
from fabricgen.pipeline import load_and_plan
from tests.fabrics import fabric, write


def _plan(tmp_path: Path, name: str, **changes: Any) -> Any:
    return load_and_plan(write(tmp_path, fabric(**changes), name)).plan


def test_policy_changes_show_sizes_and_ratios_as_written(tmp_path: Path) -> None:
    old = _plan(tmp_path, "old.yml", roce={"ecn": {"min": "150KB", "max": "3MB"}})
    new = _plan(tmp_path, "new.yml", roce={"ecn": {"min": "300KB", "max": "3MB"}}, oversubscription={"max_ratio": "3:1"})
    changes = diff_plans(old, new).policy_changed
    assert "roce.ecn.min: 150KB -> 300KB" in changes
    assert "oversubscription.max_ratio: 1:1 -> 3:1" in changes
    assert not any("bytes" in line for line in changes), changes


def test_lengths_in_km_are_metres_and_a_cable_change_shows_them_canonically(tmp_path: Path) -> None:
    old = _plan(tmp_path, "old.yml", cabling={"length": {"leaf-spine": "30m"}})
    new = _plan(tmp_path, "new.yml", cabling={"length": {"leaf-spine": "0.5km"}})
    assert {link.length_m for link in new.links if link.kind == "leaf-spine"} == {500.0}
    changed = diff_plans(old, new).cables_changed
    assert changed and all(line.endswith("400G 30m -> 400G 500m") for line in changed), changed[:2]


def test_two_km_is_two_thousand_metres(tmp_path: Path) -> None:
    plan = _plan(tmp_path, "f.yml", cabling={"length": {"leaf-spine": "2km"}})
    assert {link.length_m for link in plan.links if link.kind == "leaf-spine"} == {2000.0}
