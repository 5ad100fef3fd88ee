"""The writer: atomic swaps, minimal rewrites, foreign files kept, paths confined."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import fabricgen.render.write
from fabricgen.cli import main
from fabricgen.core.diagnostics import FabricError
from fabricgen.render.write import MANIFEST, STAGING, atomic_write_text, compare, safe_relative, write_tree
from tests.conftest import EXAMPLES
from tests.test_analyze_plans import inventory, write_inventory


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


# --- Output folders are never damaged -------------------------------------------------------


def _snapshot(root: Path) -> dict[str, tuple[str, bytes | str]]:
    """Every entry under `root` (files, symlinks, folders) with its content or target."""
    found: dict[str, tuple[str, bytes | str]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[rel] = ("link", os.readlink(path))
        elif path.is_dir():
            found[rel] = ("dir", "")
        else:
            found[rel] = ("file", path.read_bytes())
    return found


def test_a_foreign_non_empty_folder_is_refused_and_untouched(tmp_path: Path) -> None:
    out = tmp_path / "home"
    out.mkdir(mode=0o750)
    (out / "notes.txt").write_text("mine\n")
    (out / "plan.json").write_text("my own plan\n")
    (out / "empty").mkdir()
    (out / "link").symlink_to("notes.txt")
    before = _snapshot(out)
    with pytest.raises(FabricError) as caught:
        write_tree(out, {"plan.json": "{}\n", "configs/x.cfg": "x\n"})
    assert "is not empty and fabricgen did not write it" in caught.value.diagnostics[0].message
    assert _snapshot(out) == before
    assert stat.S_IMODE(out.stat().st_mode) == 0o750


def test_cli_refuses_a_foreign_folder_with_exit_2(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "README.md").write_text("my readme\n")
    result = CliRunner().invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(out), "-q"])
    assert result.exit_code == 2, result.output
    assert "fabricgen did not write it" in result.stderr and "Traceback" not in result.stderr
    assert (out / "README.md").read_text() == "my readme\n"
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]


def test_an_empty_existing_folder_is_used_in_place(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir(mode=0o710)
    inode = out.stat().st_ino
    write_tree(out, {"a.txt": "a\n"})
    assert out.stat().st_ino == inode
    assert stat.S_IMODE(out.stat().st_mode) == 0o710
    assert (out / "a.txt").read_text() == "a\n"


def test_own_folder_keeps_everything_it_did_not_write(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"configs/x.cfg": "x\n", "configs/y.cfg": "y\n", "plan.json": "{}\n"})
    out.chmod(0o751)
    (out / "running").mkdir()
    (out / "running" / "x.cfg").write_text("backup\n")
    (out / "empty").mkdir()
    (out / "configs" / "notes.md").write_text("notes\n")
    (out / "latest").symlink_to("configs")
    (out / "dangling").symlink_to("nowhere")
    foreign = {k: v for k, v in _snapshot(out).items() if k not in ("configs/x.cfg", "configs/y.cfg", "plan.json", MANIFEST)}
    inode = out.stat().st_ino
    summary = write_tree(out, {"configs/x.cfg": "X\n", "plan.json": "{}\n"})
    assert summary.removed == ["configs/y.cfg"]
    after = _snapshot(out)
    assert {k: after[k] for k in foreign} == foreign
    assert after["configs/x.cfg"] == ("file", b"X\n")
    assert "configs/y.cfg" not in after
    assert out.stat().st_ino == inode
    assert stat.S_IMODE(out.stat().st_mode) == 0o751
    assert not (out / STAGING).exists()


def test_a_foreign_file_where_fabricgen_would_write_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    write_tree(out, {"configs/x.cfg": "x\n"})
    (out / "configs" / "y.cfg").write_text("hand-made\n")
    with pytest.raises(FabricError) as caught:
        write_tree(out, {"configs/x.cfg": "X\n", "configs/y.cfg": "y\n"})
    assert "configs/y.cfg" in caught.value.diagnostics[0].message
    assert (out / "configs" / "y.cfg").read_text() == "hand-made\n"
    assert (out / "configs" / "x.cfg").read_text() == "x\n"


def test_a_symlinked_folder_is_never_written_through(tmp_path: Path) -> None:
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_tree(out, {"plan.json": "{}\n"})
    (out / "configs").symlink_to(elsewhere)
    with pytest.raises(FabricError) as caught:
        write_tree(out, {"plan.json": "{}\n", "configs/x.cfg": "x\n"})
    assert "configs (not a plain folder)" in caught.value.diagnostics[0].message
    assert list(elsewhere.iterdir()) == []


def test_output_dot_works(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", ".", "-q"])
    assert first.exit_code == 0, first.output
    assert (tmp_path / "plan" / "fabric.json").is_file() and (tmp_path / MANIFEST).is_file()
    again = runner.invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", "."])
    assert again.exit_code == 0, again.output
    assert " 0 changed" in again.stdout and " 0 added" in again.stdout


@pytest.mark.parametrize(("umask", "file_mode", "folder_mode"), [(0o022, 0o644, 0o755), (0o027, 0o640, 0o750)])
def test_modes_follow_the_umask(tmp_path: Path, umask: int, file_mode: int, folder_mode: int) -> None:
    out = tmp_path / "out"
    previous = os.umask(umask)
    try:
        write_tree(out, {"configs/x.cfg": "x\n", "plan.json": "{}\n"})
        write_tree(out, {"configs/x.cfg": "X\n", "plan.json": "{}\n", "hosts/a.md": "a\n"})
    finally:
        os.umask(previous)
    for path in [out / "configs" / "x.cfg", out / "plan.json", out / "hosts" / "a.md", out / MANIFEST]:
        assert stat.S_IMODE(path.stat().st_mode) == file_mode, path
    for path in [out, out / "configs", out / "hosts"]:
        assert stat.S_IMODE(path.stat().st_mode) == folder_mode, path


def test_analyze_report_modes_follow_the_umask(tmp_path: Path) -> None:
    """`analyze --markdown` writes its report and charts 0644 with umask 022 (it used to leave them 0600)."""
    path = write_inventory(tmp_path / "f", inventory(leaves=2, jobs={"hand": {"params": "7B"}}))
    out = tmp_path / "docs" / "analysis.md"
    previous = os.umask(0o022)
    try:
        result = CliRunner().invoke(main, ["analyze", str(path), "--trials", "4", "--markdown", str(out)])
    finally:
        os.umask(previous)
    assert result.exit_code == 0, result.output
    written = sorted(out.parent.iterdir())
    assert [p.name for p in written] == ["analysis-hand.svg", "analysis.md"]
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {0o644}


def test_atomic_write_text_respects_the_umask(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "report.md"
    previous = os.umask(0o027)
    try:
        atomic_write_text(target, "# report\n")
        atomic_write_text(target, "# report, again\n")
    finally:
        os.umask(previous)
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert target.read_text() == "# report, again\n"
    assert [p.name for p in target.parent.iterdir()] == ["report.md"]


def test_a_failure_while_staging_leaves_the_old_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    write_tree(out, {f"configs/d{i}.cfg": f"old {i}\n" for i in range(5)})
    before = _snapshot(out)
    written = []
    real = fabricgen.render.write._write_text

    def failing(path: Path, text: str) -> None:
        written.append(path)
        if len(written) == 3:
            raise OSError(28, "No space left on device")
        real(path, text)

    monkeypatch.setattr(fabricgen.render.write, "_write_text", failing)
    with pytest.raises(FabricError) as caught:
        write_tree(out, {f"configs/d{i}.cfg": f"new {i}\n" for i in range(5)})
    assert "No space left on device" in caught.value.diagnostics[0].message
    assert _snapshot(out) == before


def test_an_interrupted_commit_is_finished_by_the_next_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    write_tree(out, {f"configs/d{i}.cfg": f"old {i}\n" for i in range(5)})
    new = {f"configs/d{i}.cfg": f"new {i}\n" for i in range(4)}
    moved = []
    real = os.replace

    def interrupted(source: str | Path, target: str | Path) -> None:
        if str(source).startswith(str(out / STAGING / "files")):
            moved.append(source)
            if len(moved) == 3:
                raise KeyboardInterrupt
        real(source, target)

    monkeypatch.setattr(fabricgen.render.write.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_tree(out, new)
    monkeypatch.setattr(fabricgen.render.write.os, "replace", real)
    assert (out / STAGING / "COMMITTED").is_file()
    summary = write_tree(out, new)
    assert not summary.differs
    assert {k: v for k, v in _snapshot(out).items() if v[0] == "file" and k != MANIFEST} == {
        k: ("file", v.encode()) for k, v in new.items()
    }
    assert not (out / STAGING).exists()


def test_kill_9_during_a_large_render_leaves_a_whole_tree(tmp_path: Path) -> None:
    """The old tree of a small fabric, then a large fabric rendered into the same folder and
    killed with SIGKILL as soon as its stage appears (polled, not slept). Without a commit
    marker the old tree must be byte for byte what it was; with one, the next run must finish
    the new tree. Never a mix."""
    out = tmp_path / "build"
    runner = CliRunner()
    assert runner.invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(out), "-q"]).exit_code == 0
    (out / "running").mkdir()
    (out / "running" / "backup.cfg").write_text("keep\n")
    before = _snapshot(out)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "fabricgen", "render", str(EXAMPLES / "cluster-3tier"), "-o", str(out), "-q"]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    try:
        while not (out / STAGING).exists():
            assert process.poll() is None, process.stderr.read() if process.stderr else ""
            assert time.monotonic() < deadline, "no stage after 300 s"
            time.sleep(0.002)  # a spinning poll would take a core from the render it waits for
        process.kill()
    finally:
        process.wait()
    assert process.returncode == -signal.SIGKILL
    if (out / STAGING / "COMMITTED").exists():  # the kill came after the commit point
        assert runner.invoke(main, ["render", str(EXAMPLES / "cluster-3tier"), "-o", str(out), "--check"]).exit_code == 1
        assert runner.invoke(main, ["render", str(EXAMPLES / "cluster-3tier"), "-o", str(out), "-q"]).exit_code == 0
        assert runner.invoke(main, ["render", str(EXAMPLES / "cluster-3tier"), "-o", str(out), "--check"]).exit_code == 0
        return
    after = {k: v for k, v in _snapshot(out).items() if not k.startswith(STAGING)}
    assert after == before
    check = runner.invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(out), "--check"])
    assert check.exit_code == 0, check.output


def test_a_hand_edited_manifest_cannot_reach_outside(tmp_path: Path) -> None:
    out = tmp_path / "out"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    write_tree(out, {"a.txt": "a\n"})
    (out / MANIFEST).write_text("a.txt\n../victim.txt\n/etc/hostname\n")
    summary = write_tree(out, {"b.txt": "b\n"})
    assert summary.removed == ["a.txt"]
    assert victim.read_text() == "precious\n"


def test_removal_never_follows_a_symlinked_folder(tmp_path: Path) -> None:
    out = tmp_path / "out"
    elsewhere = tmp_path / "elsewhere"
    write_tree(out, {"configs/x.cfg": "x\n", "plan.json": "{}\n"})
    (out / "configs" / "x.cfg").unlink()
    (out / "configs").rmdir()
    elsewhere.mkdir()
    (elsewhere / "x.cfg").write_text("not fabricgen's\n")
    (out / "configs").symlink_to(elsewhere)
    write_tree(out, {"plan.json": "{}\n"})
    assert (elsewhere / "x.cfg").read_text() == "not fabricgen's\n"
    assert (out / "configs").is_symlink()


def test_an_unwritable_output_is_bad_input_not_a_bug(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x\n")
    result = CliRunner().invoke(main, ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(blocker / "out"), "-q"])
    assert result.exit_code == 2, result.output
    assert "cannot write the output folder" in result.stderr and "internal error" not in result.stderr


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab0_.-+/~\\\n :", max_size=14))
def test_plain_path_fast_path_agrees_with_the_full_check(path: str) -> None:
    """A path the fast path accepts is one the full check accepts unchanged."""
    if not fabricgen.render.write._PLAIN_PATH.match(path):
        return
    original = fabricgen.render.write._PLAIN_PATH
    fabricgen.render.write._PLAIN_PATH = re.compile(r"(?!)")  # matches nothing: the full check runs
    try:
        assert safe_relative(path) == path
    finally:
        fabricgen.render.write._PLAIN_PATH = original
