"""The docs are complete and self-contained: every schema key is in docs/inventory.md, every
link resolves inside the repository, and every `fabricgen` command in the docs parses with
the real command line and names files that exist (the CI job's commands are run)."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import click
import pytest

from fabricgen.inventory.schemafile import inlined
from tests.conftest import ROOT

DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [ROOT / "README.md", *DOCS]


def key_paths(node: dict[str, Any], prefix: str = "") -> list[str]:
    paths = []
    for key, sub in node.get("properties", {}).items():
        path = f"{prefix}.{key}" if prefix else key
        paths.append(path)
        paths.extend(key_paths(sub, path))
        items = sub.get("items")
        if isinstance(items, dict):
            paths.extend(key_paths(items, f"{path}[]"))
        extra = sub.get("additionalProperties")
        if isinstance(extra, dict):
            paths.extend(key_paths(extra, f"{path}.<name>"))
    return paths


def undocumented(schema: dict[str, Any], text: str) -> list[str]:
    """Schema keys that `text` never names in backticks. A container (`roce.ecn`) counts as
    documented through its documented children."""
    paths = key_paths(schema)
    documented = {path for path in paths if f"`{path}`" in text}
    return [
        path
        for path in paths
        if path not in documented and not any(d.startswith(f"{path}.") or d.startswith(f"{path}[]") for d in documented)
    ]


def _schema() -> dict[str, Any]:
    """The published file with its shared `$defs` inlined: every key where an inventory writes it."""
    return inlined(json.loads((ROOT / "schemas" / "fabric.schema.json").read_text(encoding="utf-8")))


def test_every_schema_key_is_in_the_inventory_reference() -> None:
    """docs/inventory.md promises every key; the other pages go deeper but do not count here."""
    assert undocumented(_schema(), (ROOT / "docs" / "inventory.md").read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("key", ["pods.count", "superspines.per_spine", "servers.attachment", "servers.rails", "jobs.<name>.mfu"])
def test_the_reference_check_catches_a_missing_key(key: str) -> None:
    text = (ROOT / "docs" / "inventory.md").read_text(encoding="utf-8")
    assert f"`{key}`" in text
    assert key in undocumented(_schema(), text.replace(f"`{key}`", "`(removed)`"))


def test_packaged_schema_is_the_published_one() -> None:
    from fabricgen.inventory.schema import fabric_schema

    assert fabric_schema() == _schema()


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as dashes."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    return {_slug(line.lstrip("#")) for line in page.read_text(encoding="utf-8").splitlines() if line.startswith("#")}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_link_resolves_inside_the_repository(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert "../shared" not in text and "/work/" not in text, "a path outside the repository"
    for target in _LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue  # an absolute URL (public sources)
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        assert resolved.is_relative_to(ROOT), f"{page.name}: {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: {target} does not exist"
        if anchor and resolved.suffix == ".md":
            assert anchor in _anchors(resolved), f"{page.name}: {target}: no such heading"


def _shell_blocks(text: str) -> list[str]:
    return re.findall(r"```(?:sh|bash|shell)\n(.*?)```", text, flags=re.DOTALL)


def doc_commands() -> list[tuple[str, str]]:
    """(page, command line) of every `fabricgen ...` command in a shell block of the docs;
    `a && b` and pipes count as separate commands, redirections are dropped."""
    found = []
    for page in PAGES:
        for block in _shell_blocks(page.read_text(encoding="utf-8")):
            for line in block.replace("\\\n", " ").splitlines():
                line = line.split(" #", 1)[0]
                for command in re.split(r"&&|\|\||;|\|", line):
                    command = re.sub(r"\s[12]?>\s*\S+", "", command).strip()
                    if command.startswith("fabricgen "):
                        found.append((page.name, command))
    return found


COMMANDS = doc_commands()
GENERATED = ("build/",)
"""Paths the docs name that exist only after `fabricgen render` or a backup."""
REPOSITORY = ("inventories/", "playbooks/", "docs/", "schemas/", "tests/", "templates/")
"""Paths the docs name in the repository: they must exist."""
OUTPUTS = ("-o", "--output", "--markdown", "--keep")
"""Options whose value fabricgen writes (need not exist)."""
USER_FILES = ("ibnetdiscover.out", "fabric.ibnet")
"""Files a user makes on their own fabric (the docs show how: `ibnetdiscover > fabric.ibnet`)."""


def _parse(args: list[str]) -> None:
    """Parse a command line with the real CLI, down to the leaf command, without running it.
    (The groups take no options of their own in the docs: the first words name the command.)"""
    from fabricgen.cli import main

    command: click.Command = main
    name, rest = "fabricgen", list(args)
    while isinstance(command, click.Group):
        name, *rest = rest
        sub = command.get_command(click.Context(command), name)
        assert sub is not None, f"no command {name!r}"
        command = sub
    command.make_context(name, rest, resilient_parsing=False)


def test_the_docs_have_commands() -> None:
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize(("page", "line"), COMMANDS, ids=[f"{p}:{c[:60]}" for p, c in COMMANDS])
def test_every_command_in_the_docs_parses_and_names_real_files(page: str, line: str, tmp_path: Path) -> None:
    args = shlex.split(line.replace("...", ""))[1:]
    for before, arg in zip(["", *args], args, strict=False):
        if arg.startswith(REPOSITORY) and before not in OUTPUTS:
            assert (ROOT / arg).exists(), f"{page}: {line}: {arg} does not exist"
    if any(arg.startswith(GENERATED) for arg in args):
        return  # the folder exists only after a render; that command's own tests run it
    for name in USER_FILES:
        (tmp_path / name).write_text("", encoding="utf-8")
    args = [str(tmp_path / arg) if arg in USER_FILES else arg for arg in args]
    try:
        _parse([str(ROOT / arg) if arg.startswith(REPOSITORY) else arg for arg in args])
    except click.exceptions.Exit:
        pass
    except click.UsageError as exc:
        raise AssertionError(f"{page}: {line}: {exc.format_message()}") from None


def _workflow() -> dict[str, Any]:
    """The GitHub Actions job documented in docs/artifacts.md."""
    import yaml

    text = (ROOT / "docs" / "artifacts.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL) if b.startswith("# .github/workflows/"))
    workflow: dict[str, Any] = yaml.safe_load(block)
    return workflow


def test_the_documented_ci_job_runs_its_summary_command(tmp_path: Path) -> None:
    """The summary step, as written, on a repository whose pull request changes a DSCP value."""
    import os
    import shutil
    import subprocess
    import sys

    step = next(s for s in _workflow()["jobs"]["summary"]["steps"] if s.get("name") == "what the change does")
    script = step["run"].replace("${{ github.base_ref }}", "main")
    assert "--format markdown" in script and "${{" not in script
    repo = tmp_path / "repo"
    for name in ("pod-roce-400g", "pod-mixed"):
        shutil.copytree(ROOT / "inventories" / name, repo / "inventories" / name)
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "PYTHONPATH": str(ROOT)}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fabricgen").write_text(f'#!/bin/sh\nexec {sys.executable} -m fabricgen "$@"\n', encoding="utf-8")
    (bin_dir / "fabricgen").chmod(0o755)
    env["PATH"] = f"{bin_dir}:{env['PATH']}"

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args], check=True, env=env)

    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-qm", "base")
    git("update-ref", "refs/remotes/origin/main", "main")  # what actions/checkout with fetch-depth 0 provides
    git("checkout", "-qb", "change")
    inventory = repo / "inventories" / "pod-roce-400g" / "fabric.yml"
    text = inventory.read_text(encoding="utf-8")
    assert "dscp: {data: 26, cnp: 48}" in text
    inventory.write_text(text.replace("dscp: {data: 26, cnp: 48}", "dscp: {data: 24, cnp: 48}"), encoding="utf-8")
    git("commit", "-qam", "DSCP 24")
    run = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=repo, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    summary = (repo / "summary.md").read_text(encoding="utf-8")
    assert "### fabricgen diff: pod1 (origin/main -> working tree)" in summary
    assert "- `roce.dscp.data: 26 -> 24`" in summary
    assert "### fabricgen diff: pod2 (origin/main -> working tree)\n\nNo differences." in summary


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_repository_path_in_the_shell_examples_exists(page: Path) -> None:
    """ansible-playbook lines and the rest: `playbooks/deploy.yml`, `inventories/...` are real."""
    for block in _shell_blocks(page.read_text(encoding="utf-8")):
        for word in re.findall(r"(?<![\w./{$-])((?:inventories|playbooks|schemas|benchmarks)/[\w./-]+)", block):
            assert (ROOT / word.rstrip(".")).exists(), f"{page.name}: {word} does not exist"
