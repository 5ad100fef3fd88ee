"""`make duplicates` (pylint's duplicate-code with the settings in pyproject.toml) fails on a
block of six lines found twice and passes five: the check `make check` runs does what
docs/testing.md says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

BLOCK = [f"    total = total + {n} * value  # step {n}" for n in range(1, 7)]


def _module(tmp_path: Path, name: str, start: int, lines: list[str]) -> Path:
    """A function whose lines before and after `lines` are its own (`start` differs)."""
    path = tmp_path / f"{name}.py"
    body = "\n".join(lines)
    path.write_text(
        f'"""{name}."""\n\n\ndef {name}(value: int) -> int:\n    total = {start}\n{body}\n    return total - {start}\n', encoding="utf-8"
    )
    return path


def _pylint(*paths: Path) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "pylint", "--rcfile", str(ROOT / "pyproject.toml"), *map(str, paths)]
    return subprocess.run(argv, capture_output=True, text=True, check=False, cwd=paths[0].parent)


@pytest.mark.parametrize(("shared", "found"), [(6, True), (5, False)])
def test_a_block_of_six_repeated_lines_fails_the_check(tmp_path: Path, shared: int, found: bool) -> None:
    first = _module(tmp_path, "first", 1, BLOCK[:shared])
    second = _module(tmp_path, "second", 2, [line.replace("step", "stage") for line in BLOCK[:shared]])  # comments do not count
    done = _pylint(first, second)
    assert ("duplicate-code" in done.stdout) is found, done.stdout + done.stderr
    assert (done.returncode != 0) is found, done.stdout + done.stderr
