"""A corpus of broken inventories, one fault each (tests/data/broken/*.yml).

Each file states on its second line the diagnostic it must produce: `# expect: LINE:COL: path: message`.
The CLI must exit 2, print that diagnostic with file, line, column and key path, print no
traceback, and write nothing. Files named `warning-*` expect `LINE:COL: warning: path: message`:
`validate` prints the warning and exits 0.
"""

from __future__ import annotations

import resource
import subprocess
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.core.diagnostics import FabricError
from fabricgen.inventory import loader

CORPUS = Path(__file__).parent / "data" / "broken"
CASES = sorted(p for p in CORPUS.glob("*.yml") if not p.name.startswith("warning-"))
WARNINGS = sorted(CORPUS.glob("warning-*.yml"))
PENDING: dict[str, str] = {}
"""Cases waiting for another change, by file stem, with the reason (run as non-strict xfail)."""


def expectation(path: Path) -> str:
    """The `# expect:` line (the files' first two lines are ASCII, whatever follows them)."""
    second = path.read_bytes().split(b"\n")[1].decode("utf-8")
    assert second.startswith("# expect: "), f"{path.name} lacks its '# expect:' line"
    return second.removeprefix("# expect: ")


def test_corpus_is_large_enough() -> None:
    assert len(CASES) >= 25


def _case(path: Path) -> object:
    marks = [pytest.mark.xfail(reason=PENDING[path.stem], strict=False)] if path.stem in PENDING else []
    return pytest.param(path, id=path.stem, marks=marks)


@pytest.mark.parametrize("path", [_case(p) for p in CASES])
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
    validated = CliRunner().invoke(main, ["validate", shown])  # what CI runs: it must refuse the same, once
    assert validated.exit_code == 2, validated.output
    assert validated.stderr.count(f"{shown}:{expectation(path)}") == 1


def _bounded_process() -> None:
    """Limits for the child: 1 GiB of address space and 60 s of CPU time (it needs about 140 MB
    and 2 s even for the alias bomb; the bomb expanded would need tens of GB). CPU time, not wall
    time, so a loaded machine cannot fail the test; a broken guard still fails it."""
    resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))


@pytest.mark.parametrize("name", ["alias-bomb", "unsafe-tag", "yaml-syntax", "list-not-mapping"])
def test_no_traceback_in_a_real_process(name: str) -> None:
    path = CORPUS / f"{name}.yml"
    command = [sys.executable, "-m", "fabricgen", "validate", str(path)]
    # The wall-clock timeout only guards against a hang; the bounds are the child's rlimits.
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, preexec_fn=_bounded_process, check=False)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"{path}:{expectation(path).split(':')[0]}:" in done.stderr


def _alias_bomb(levels: int) -> str:
    """'Billion laughs': a0 lists 10 values, each further level 10 aliases of the one before, so
    the document stands for 10 ** (levels + 1) values."""
    lines = ["a0: &a0 [" + ", ".join(["x"] * 10) + "]"]
    lines += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("levels", [6, 40])
def test_an_alias_bomb_costs_a_bounded_number_of_expansions(levels: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """10 ** 7 or 10 ** 41 values: the loader converts exactly one value more than its bound and
    stops, with the same small memory peak. Counted and measured in-process, never timed."""
    bound = 20_000
    monkeypatch.setattr(loader, "MAX_NODES", bound)
    converted = 0
    convert = loader._Converter.convert

    def counted(self: Any, node: Any, path: loader.PathKey) -> Any:
        nonlocal converted
        converted += 1
        return convert(self, node, path)

    monkeypatch.setattr(loader._Converter, "convert", counted)
    tracemalloc.start()
    try:
        with pytest.raises(FabricError) as caught:
            loader.parse_inventory_text(_alias_bomb(levels), "bomb.yml")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert converted == bound + 1
    assert peak < 16 * 2**20, peak  # about 4 MB for 20,000 values; the smaller bomb expanded would take gigabytes
    assert [d.message for d in caught.value.diagnostics] == [f"document expands to more than {bound} values"]


def test_missing_file_is_bad_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["validate", str(tmp_path / "nope.yml")])
    assert result.exit_code == 2
    assert "cannot read inventory" in result.stderr


@pytest.mark.parametrize("path", WARNINGS, ids=[p.stem for p in WARNINGS])
def test_warning_is_reported_and_the_inventory_stays_valid(path: Path) -> None:
    shown = str(path.relative_to(Path.cwd())) if path.is_relative_to(Path.cwd()) else str(path)
    result = CliRunner().invoke(main, ["validate", shown])
    assert result.exit_code == 0, result.output
    assert f"{shown}:{expectation(path)}" in result.stderr
    assert "Traceback" not in result.stderr + result.stdout


@pytest.mark.parametrize(
    ("encoding", "expected"),
    [
        ("utf-16", ":1:1: the file is UTF-16 (little-endian) text (byte-order mark at byte 0), not UTF-8 (hint: save it as UTF-8)"),
        ("utf-16-be", ":1:1: NUL byte at byte 0 (hint: the file looks like UTF-16 text; save it as UTF-8)"),
        ("utf-16-le", ":1:2: NUL byte at byte 1 (hint: the file looks like UTF-16 text; save it as UTF-8)"),
    ],
)
def test_utf16_files_are_named_as_such(tmp_path: Path, encoding: str, expected: str) -> None:
    path = tmp_path / "fabric.yml"
    path.write_bytes((CORPUS.parent.parent.parent / "inventories" / "pod-roce-400g" / "fabric.yml").read_text().encode(encoding))
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    assert f"{path}{expected}" in result.stderr
