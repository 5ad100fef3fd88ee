"""The writer: atomic swaps, minimal rewrites, foreign files kept, paths confined."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.diagnostics import FabricError
from fabricgen.write import MANIFEST, compare, safe_relative, write_tree
from tests.conftest import EXAMPLES


def test_first_write_then_nothing_changes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write_tree(out, {"a.txt": "a\n", "sub/b.txt": "b\n"})
    assert first.added == ["a.txt", "sub/b.txt"]
    inode = (out / "a.txt").stat().st_ino
    again = write_tree(out, {"a.txt": "a\n", "sub/b.txt": "b\n"})
    assert not again.differs
    assert (out / "a.txt").stat().st_ino == inode


def test_only_changed_files_are_rewritten(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"a.txt": "a\n", "b.txt": "b\n"})
    inode_a = (out / "a.txt").stat().st_ino
    summary = write_tree(out, {"a.txt": "a\n", "b.txt": "B\n", "c.txt": "c\n"})
    assert (summary.changed, summary.added, summary.unchanged) == (["b.txt"], ["c.txt"], ["a.txt"])
    assert (out / "a.txt").stat().st_ino == inode_a
    assert (out / "b.txt").read_text() == "B\n"


def test_stale_owned_files_go_foreign_files_stay(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"configs/x.cfg": "x\n", "configs/y.cfg": "y\n"})
    (out / "running").mkdir()
    (out / "running" / "x.cfg").write_text("backup\n")
    summary = write_tree(out, {"configs/x.cfg": "x\n"})
    assert summary.removed == ["configs/y.cfg"]
    assert not (out / "configs" / "y.cfg").exists()
    assert (out / "running" / "x.cfg").read_text() == "backup\n"
    assert (out / MANIFEST).read_text() == "configs/x.cfg\n"


def test_limit_keeps_other_owned_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"configs/x.cfg": "x\n", "configs/y.cfg": "y\n"})
    summary = write_tree(out, {"configs/x.cfg": "X\n"}, keep_unlisted_owned=True)
    assert summary.removed == []
    assert (out / "configs" / "y.cfg").read_text() == "y\n"
    assert "configs/y.cfg" in (out / MANIFEST).read_text()


@pytest.mark.parametrize("bad", ["/etc/passwd", "../escape", "a/../../b", "~root/x", "a\\b", ""])
def test_paths_outside_the_output_are_refused(tmp_path: Path, bad: str) -> None:
    with pytest.raises(FabricError):
        safe_relative(bad)
    with pytest.raises(FabricError):
        write_tree(tmp_path / "out", {bad: "x"})
    assert not (tmp_path / "out").exists()


def test_compare_reports_without_writing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    summary = compare(out, {"a.txt": "a\n"})
    assert summary.added == ["a.txt"] and not out.exists()


def test_failed_render_leaves_previous_output(tmp_path: Path) -> None:
    out = tmp_path / "build"
    runner = CliRunner()
    assert runner.invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(out), "-q"]).exit_code == 0
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    broken = tmp_path / "fabric.yml"
    broken.write_text((EXAMPLES / "pod-roce-400g" / "fabric.yml").read_text().replace("count: 8", "count: eight"))
    result = runner.invoke(main, ["render", str(broken), "-o", str(out)])
    assert result.exit_code == 2
    after = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".build.")]


def test_render_check_detects_stale_output(tmp_path: Path) -> None:
    out = tmp_path / "build"
    runner = CliRunner()
    inventory = str(EXAMPLES / "pod-roce-400g")
    assert runner.invoke(main, ["render", inventory, "-o", str(out), "-q"]).exit_code == 0
    assert runner.invoke(main, ["render", inventory, "-o", str(out), "--check"]).exit_code == 0
    (out / "plan" / "fabric.json").write_text("{}\n")
    stale = runner.invoke(main, ["render", inventory, "-o", str(out), "--check"])
    assert stale.exit_code == 1
    assert "changed:" in stale.stdout and "plan/fabric.json" in stale.stdout
    assert (out / "plan" / "fabric.json").read_text() == "{}\n"
