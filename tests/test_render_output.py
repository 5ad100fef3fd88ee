"""Properties of every rendered config: clean text, byte-identical across hash seeds, stable
when a leaf is added, and the RoCE switches (ECN, watchdog) followed to the letter."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jinja2.exceptions import SecurityError

from fabricgen.configs.devices import config_device
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from fabricgen.render.templating import environment
from fabricgen.render.tidy import leftovers
from tests.conftest import ROOT
from tests.render_cases import device_configs, inventory_ids, rendered

INVENTORIES = inventory_ids()


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_configs_are_clean_text(inventory: str) -> None:
    plan, files = rendered(inventory)
    assert {config_device(path) for path in files if path.startswith("configs/")} >= {d.name for d in plan.devices}
    for path, text in files.items():
        lines = text.split("\n")
        assert text.endswith("\n") and not text.endswith("\n\n"), path
        assert [n for n, line in enumerate(lines, 1) if line != line.rstrip()] == [], f"{path}: trailing whitespace"
        assert [n for n, (a, b) in enumerate(itertools.pairwise(lines), 1) if a == b == ""] == [], f"{path}: blank-line run"
        assert "\t" not in text, path
        if path.startswith("configs/"):  # hosts.yml carries Ansible's own {{ inventory_dir }} on purpose
            assert leftovers(text) == [], path


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_indentation_follows_the_platform(inventory: str) -> None:
    """EOS indents by 3 and separates blocks with `!`; NX-OS indents by 2."""
    for device, config in device_configs(inventory):
        step = 3 if device.platform == "eos" else 2
        for line in config.splitlines():
            indent = len(line) - len(line.lstrip(" "))
            assert indent % step == 0, f"{device.name}: {line!r}"
        if device.platform == "eos":
            assert "\n!\ninterface Loopback0\n" in config
            assert config.endswith("\nend\n")


SEEDS = {"1": {"PATH": "/usr/bin:/bin"}, "4242": dict(os.environ)}
"""Hash seed -> the rest of the environment: the first interpreter also runs without the caller's
environment (no locale, no HOME), so the trees cannot depend on it either."""

_RENDER_EACH = """\
import sys
from fabricgen.cli import main
for inventory, out in zip(sys.argv[1::2], sys.argv[2::2]):
    try:
        main(["render", "-q", inventory, "-o", out])
    except SystemExit as done:
        if done.code:
            raise
"""


@pytest.fixture(scope="module")
def seeded_renders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`fabricgen render -q` of every inventory into SEED/INVENTORY: one fresh interpreter per
    hash seed renders them all (an interpreter start per inventory would add nothing but time)."""
    base = tmp_path_factory.mktemp("seeds")
    for seed, env in SEEDS.items():
        argv = [str(arg) for inventory in INVENTORIES for arg in (ROOT / inventory, base / seed / inventory)]
        command = [sys.executable, "-c", _RENDER_EACH, *argv]
        subprocess.run(command, check=True, env={**env, "PYTHONHASHSEED": seed}, cwd=ROOT, timeout=900)
    return base


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_render_is_deterministic_across_hash_seeds(inventory: str, seeded_renders: Path) -> None:
    first, second = (_tree(seeded_renders / seed / inventory) for seed in SEEDS)
    assert any(p.startswith("configs/") for p in first)
    assert {"hosts.csv", "cabling.csv", "bom.csv", "README.md"} <= set(first)  # the artifacts are compared too
    assert any(p.startswith("lab/") for p in first)
    assert first == second


@pytest.mark.parametrize(
    ("inventory", "new_leaf"), [("inventories/pod-mixed", "pod2-leaf09"), ("tests/goldens/inventories/tiny-eos", "teos-leaf3")]
)
def test_adding_a_leaf_changes_only_that_leaf_and_the_spines(inventory: str, new_leaf: str, tmp_path: Path) -> None:
    src = ROOT / inventory / "fabric.yml"
    doc = yaml.safe_load(src.read_text(encoding="utf-8"))
    doc["leaves"]["count"] += 1
    grown = tmp_path / "grown"
    grown.mkdir()
    (grown / "fabric.yml").write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    plan, before = rendered(inventory)
    grown_plan = load_and_plan(grown).plan
    after = render_files(grown_plan, RenderContext())
    changed = {p for p in set(before) | set(after) if p.startswith("configs/") and before.get(p) != after.get(p)}
    spines = {f"configs/{d.name}.cfg" for d in plan.devices if d.role == "spine"}
    assert f"configs/{new_leaf}.cfg" in changed and f"configs/{new_leaf}.cfg" not in before
    assert changed - spines == {f"configs/{new_leaf}.cfg"}


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_ecn_and_watchdog_switches(inventory: str) -> None:
    """ECN off: no WRED/ECN line at all (PFC-only profile). Watchdog off: no watchdog line."""
    plan, _ = rendered(inventory)
    assert plan.roce is not None
    for _device, config in device_configs(inventory):
        assert ("random-detect" in config) == plan.roce.ecn_enabled
        assert ("watchdog" in config or "watch-dog" in config) == plan.roce.pfc_watchdog
        assert "None" not in config


def test_fixtures_cover_both_switch_states() -> None:
    policies = [rendered(i)[0].roce for i in INVENTORIES]
    assert {p.ecn_enabled for p in policies if p} == {True, False}
    assert {p.pfc_watchdog for p in policies if p} == {True, False}
    platforms = {(d.platform, d.role) for i in INVENTORIES for d in rendered(i)[0].devices}
    assert {("eos", "leaf"), ("eos", "spine"), ("nxos", "leaf"), ("nxos", "spine")} <= platforms


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_no_secrets_in_configs(inventory: str) -> None:
    for device, config in device_configs(inventory):
        for word in ("username", "secret", "password", "snmp-server community", "key "):
            assert word not in config, f"{device.name}: {word}"


def test_user_template_overrides_one_feature_in_the_sandbox(tmp_path: Path) -> None:
    """A per-fabric override replaces one feature file; the rest still comes from the built-in
    templates, and everything runs in Jinja's immutable sandbox."""
    override = tmp_path / "templates" / "eos"
    override.mkdir(parents=True)
    (override / "header.j2").write_text("! {{ device.name }} (site header)\n!\n", encoding="utf-8")
    plan, files = rendered("tests/goldens/inventories/tiny-eos")
    custom = render_files(plan, RenderContext(user_template_dirs=(tmp_path / "templates",)))
    name = "configs/teos-leaf1.cfg"
    assert custom[name].startswith("! teos-leaf1 (site header)\n!\nservice routing protocols model multi-agent\n")
    assert custom[name].split("service routing", 1)[1] == files[name].split("service routing", 1)[1]
    (override / "header.j2").write_text("{{ device.interfaces.__class__.__mro__ }}\n", encoding="utf-8")
    environment.cache_clear()
    with pytest.raises(SecurityError):
        render_files(plan, RenderContext(user_template_dirs=(tmp_path / "templates",)))


def test_readme_leaf_excerpt_is_what_render_writes() -> None:
    """The README's rendered-leaf excerpt is cut from the real pod1-leaf01 config, in order."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    excerpt = readme.split("## What a rendered leaf looks like", 1)[1].split("```", 2)[1].strip("\n").split("\n")
    _, files = rendered("inventories/pod-roce-400g")
    config = files["configs/pod1-leaf01.cfg"].split("\n")
    position = 0
    for line in excerpt:
        position = config.index(line, position) + 1
