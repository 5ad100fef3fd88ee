"""Every playbook passes `ansible-playbook --syntax-check` against a rendered inventory, and
ansible-lint passes with the production profile, offline (.ansible-lint)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.standins.runner import BIN, ROOT, PlaybookRunner, render

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
        render(ROOT / "inventories" / name, out / name)
    return [out / "pod-mixed" / "ansible" / "hosts.yml", out / "ib-hdr" / "ansible" / "hosts.yml"]


@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_syntax_check(playbook: str, inventories: list[Path], tmp_path: Path) -> None:
    result = PlaybookRunner(tmp_path, inventories).run(playbook, "--syntax-check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_deploy_targets_the_rendered_groups(inventories: list[Path], tmp_path: Path) -> None:
    result = PlaybookRunner(tmp_path, inventories).run("deploy.yml", "--list-hosts")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "pod2-spine01" in result.stdout and "pod2-leaf08" in result.stdout and "ib1-sm1" in result.stdout
    # groups deploy.yml builds at run time (SM standby/master, canaries, rollout) are empty when
    # only listing; every group the inventory must provide matches
    unmatched = re.findall(r"Could not match supplied host pattern, ignoring: (\S+)", result.stderr)
    assert all(name.startswith("fabricgen_") for name in unmatched), unmatched


def test_ansible_lint_production_profile_offline(tmp_path: Path) -> None:
    env = PlaybookRunner(tmp_path, []).env()
    result = subprocess.run([str(BIN / "ansible-lint")], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Profile 'production' was required, and it passed" in output


def _tasks(node: object) -> list[dict[str, object]]:
    """Every task in a playbook / tasks file, blocks, rescue and always included."""
    found: list[dict[str, object]] = []
    if isinstance(node, list):
        for item in node:
            found += _tasks(item)
    elif isinstance(node, dict):
        if any(key in node for key in ("block", "rescue", "always", "tasks", "pre_tasks")):
            for key in ("block", "rescue", "always", "tasks", "pre_tasks"):
                found += _tasks(node.get(key, []))
        else:
            found.append(node)
    return found


def test_running_configs_and_staged_configs_never_reach_the_log() -> None:
    """A task that reads `show running-config` or handles the staged config (management overlay)
    carries no_log: at -v its result would print password hashes and keys."""
    import yaml

    sensitive = ("show running-config", "fabricgen_switch_staged", "_running_read", "ansible_password")
    checked = 0
    for path in sorted((ROOT / "playbooks").rglob("*.yml")):
        for task in _tasks(yaml.safe_load(path.read_text())):
            body = {k: v for k, v in task.items() if k not in ("name", "when", "vars", "loop", "until", "failed_when", "changed_when")}
            text = yaml.safe_dump(body)
            if any(word in text for word in sensitive) and "fabricgen_diff" not in text and "fabricgen_lockout_problems" not in text:
                checked += 1
                # assert / fail print only messages built by fabricgen's filters, never the configs
                exempt = ("ansible.builtin.include_role", "ansible.builtin.assert", "ansible.builtin.fail")
                if "no_log" not in task and not any(module in text for module in exempt):
                    raise AssertionError(f"{path.relative_to(ROOT)}: '{task.get('name')}' handles a running/staged config without no_log")
    assert checked >= 8


def test_awx_files_pin_the_collections_the_playbooks_use() -> None:
    import re

    import yaml

    ee = yaml.safe_load((ROOT / "execution-environment.yml").read_text())
    assert ee["version"] == 3 and ee["dependencies"]["galaxy"] == "requirements.yml"
    pinned = {c["name"] for c in yaml.safe_load((ROOT / "requirements.yml").read_text())["collections"]}
    used = set()
    for path in (ROOT / "playbooks").rglob("*.yml"):
        text = path.read_text()
        used |= set(re.findall(r"^\s+(?:- )?((?:arista|cisco|ansible)\.[a-z_]+)\.[a-z_]+:", text, re.M))
        used |= set(re.findall(r"\b((?:arista|cisco|ansible)\.[a-z_]+)\.(?:httpapi|network_cli)\b", text))  # connection plugins
    used.discard("ansible.builtin")
    assert used == pinned, (sorted(used - pinned), sorted(pinned - used))  # nothing missing, nothing unused


def test_awx_templates_name_real_playbooks_and_surveys_ask_for_variables_they_read() -> None:
    import json

    import yaml

    templates = yaml.safe_load((ROOT / "awx" / "job-templates.yml").read_text())["job_templates"]
    playbooks = "".join(p.read_text() for p in (ROOT / "playbooks").rglob("*.yml"))
    for template in templates:
        assert (ROOT / template["playbook"]).is_file(), template["name"]
        if template.get("survey_spec_file"):
            survey = json.loads((ROOT / template["survey_spec_file"]).read_text())
            for question in survey["spec"]:
                assert question["variable"] in playbooks, question["variable"]  # no dead knob
