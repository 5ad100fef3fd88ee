"""Every playbook passes `ansible-playbook --syntax-check` against a rendered inventory, and
ansible-lint passes with the production profile, offline (.ansible-lint)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.standins.runner import BIN, ROOT, PlaybookRunner

pytestmark = pytest.mark.skipif(
    shutil.which("ansible-lint", path=str(BIN)) is None, reason="needs the deploy extra (ansible, ansible-lint)"
)

PLAYBOOKS = sorted(p.name for p in (ROOT / "playbooks").glob("*.yml"))


def test_the_three_playbooks_exist() -> None:
    assert {"backup.yml", "deploy.yml", "rollback.yml"} <= set(PLAYBOOKS)


@pytest.fixture(scope="module")
def inventories(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("render")
    for name in ("pod-mixed", "ib-hdr"):
        subprocess.run(
            [str(BIN / "fabricgen"), "render", str(ROOT / "inventories" / name), "-o", str(out / name)], check=True, capture_output=True
        )
    return [out / "pod-mixed" / "ansible" / "hosts.yml", out / "ib-hdr" / "ansible" / "hosts.yml"]


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_syntax_check(playbook: str, inventories: list[Path], tmp_path: Path) -> None:
    result = PlaybookRunner(tmp_path, inventories).run(playbook, "--syntax-check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_deploy_targets_the_rendered_groups(inventories: list[Path], tmp_path: Path) -> None:
    result = PlaybookRunner(tmp_path, inventories).run("deploy.yml", "--list-hosts")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pod2-spine01" in result.stdout and "pod2-leaf08" in result.stdout and "ib1-sm1" in result.stdout
    assert "Could not match" not in result.stderr


def test_ansible_lint_production_profile_offline(tmp_path: Path) -> None:
    env = PlaybookRunner(tmp_path, []).env()
    result = subprocess.run([str(BIN / "ansible-lint")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Profile 'production' was required, and it passed" in output
