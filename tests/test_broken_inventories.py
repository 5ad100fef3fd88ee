"""A corpus of broken inventories, one fault each (tests/data/broken/*.yml).

Each file states on its second line the diagnostic it must produce: `# expect: LINE:COL: path: message`.
The CLI must exit 2, print that diagnostic with file, line, column and key path, print no
traceback, and write nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main

CORPUS = Path(__file__).parent / "data" / "broken"
CASES = sorted(CORPUS.glob("*.yml"))


def expectation(path: Path) -> str:
    second = path.read_text(encoding="utf-8").split("\n")[1]
    assert second.startswith("# expect: "), f"{path.name} lacks its '# expect:' line"
    return second.removeprefix("# expect: ")


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 25


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_broken_inventory_is_reported(path: Path, tmp_path: Path) -> None:
    shown = str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["render", shown, "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert f"{shown}:{expectation(path)}" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "nothing written" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("name", ["alias-bomb", "unsafe-tag", "yaml-syntax", "list-not-mapping"])
def test_no_traceback_in_a_real_process(name: str) -> None:
    path = CORPUS / f"{name}.yml"
    done = subprocess.run([sys.executable, "-m", "fabricgen", "validate", str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert f"{path}:{expectation(path).split(':')[0]}:" in done.stderr


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "nope.yml")])
    assert result.exit_code == 2
    assert "cannot read inventory" in result.stderr
