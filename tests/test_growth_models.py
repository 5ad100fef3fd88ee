"""`fabricgen plan` growth headroom and `--grow-to`, and `fabricgen models`.

Expected figures come from the inventories and the allocation rules in docs/inventory.md:
pod-roce-400g has 8 x 400G between each leaf and spine, 64-port switches, so a leaf takes 8
ports of each spine (64 / 8 = 8 leaves) and 4 spine slots x 8 links x 2 = 64 fabric addresses
(a /22 holds 16 leaves); cluster-3tier's super-spines take 4 ports per pod (64 / 4 = 16 pods)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from fabricgen.cli import main
from tests.conftest import EXAMPLES, ROOT


def _plan(*args: str) -> str:
    result = CliRunner().invoke(main, ["plan", *args], terminal_width=200)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())  # table borders and wrapping aside


def test_plan_shows_headroom_per_pool_and_tier() -> None:
    text = _plan(str(EXAMPLES / "pod-roce-400g"))
    assert "Growth headroom: by leaf (leaves.count, today 8)" in text
    assert "addressing.fabric 10.1.0.0/22 │ 64 addresses │ 16 leaves" in text
    assert "spine ports │ 8 ports │ 8 leaves" in text
    assert "one leaf adds 1 leaf and 32 GPU ports" in text  # 4 servers x 8 NICs


def test_plan_shows_pods_and_leaves_per_pod_of_a_three_tier_fabric() -> None:
    text = _plan(str(EXAMPLES / "cluster-3tier"))
    assert "Growth headroom: by pod (pods.count, today 8)" in text
    assert "super-spine ports │ 4 ports │ 16 pods" in text
    assert "Growth headroom: by leaf per pod (leaves.count, today 16)" in text
    # spines: 64 x 800G cages as 2 x 400G; 16 leaves x 4 links use 32 cages, 8 super-spines x 4 the other 32
    assert "spine ports │ 2 ports │ 16 leaves per pod" in text


def test_grow_to_sizes_the_pools_for_the_target() -> None:
    text = _plan(str(EXAMPLES / "pod-roce-400g"), "--grow-to", "8192 gpus")
    # 8192 / 32 GPU ports per leaf = 256 leaves; 256 x 64 fabric addresses = 16384 = a /18
    assert "to grow to 8192 gpus: 256 leaves (leaves.count)" in text
    assert "addressing.fabric: 16384 addresses needed, 10.1.0.0/22 holds 1024: too small: use at least a /18" in text
    assert "spine ports: 8 per leaf: short: ports for 8 leaves" in text
    small = _plan(str(EXAMPLES / "pod-roce-400g"), "--grow-to", "12")
    assert "addressing.fabric: 768 addresses needed, 10.1.0.0/22 holds 1024: fits" in small


def test_grow_to_refuses_what_it_cannot_read() -> None:
    result = CliRunner().invoke(main, ["plan", str(EXAMPLES / "pod-roce-400g"), "--grow-to", "lots"])
    assert result.exit_code == 2
    assert "write a target like '12 leaves', '8192 gpus' or '16 pods'" in result.output


def test_models_lists_the_catalog() -> None:
    catalog = yaml.safe_load((ROOT / "fabricgen" / "data" / "catalog.yml").read_text(encoding="utf-8"))["models"]
    result = CliRunner().invoke(main, ["models", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)}
    assert sorted(rows) == sorted(catalog)
    for name, entry in catalog.items():
        assert rows[name]["vendor"] == entry["vendor"]
        assert rows[name]["ports"] == entry["ports"]
        assert rows[name]["speed"] == f"{entry['speed']}G"
        assert rows[name]["platforms"] == entry["platforms"]
        assert rows[name]["breakouts"] == {f"{speed}G": count for speed, count in entry.get("breakouts", {entry["speed"]: 1}).items()}
    table = CliRunner().invoke(main, ["models"], terminal_width=200)
    assert table.exit_code == 0
    assert "arista-7060x6-64pe" in table.output and "2 x 400G" in table.output


def test_models_with_an_inventory_adds_its_own(tmp_path: Path) -> None:
    from tests.fabrics import fabric, write

    own = {"my-switch": {"vendor": "Acme", "ports": 32, "speed": 400, "form_factor": "QSFP-DD", "platforms": ["eos"]}}
    path = write(tmp_path, fabric(models=own))
    result = CliRunner().invoke(main, ["models", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "my-switch" in {row["name"] for row in json.loads(result.output)}
