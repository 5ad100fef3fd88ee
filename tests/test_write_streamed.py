"""The streaming write of `fabricgen render` (fabricgen.render.stream): each render unit stages its
own files in whichever process runs it. The reference is the dict path, `write_tree(out,
render_files(plan, context))`: the same trees, manifests and summaries for any -j; and every
guarantee of the writer holds when the files arrive in parts from several processes."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import fabricgen.producers
import fabricgen.render.write
from fabricgen.cli import main
from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.model import Plan
from fabricgen.producers import write_rendered
from fabricgen.render.context import RenderContext
from fabricgen.render.parallel import run_each
from fabricgen.render.write import MANIFEST, STAGING, WriteSummary, write_tree
from tests.conftest import EXAMPLES, ROOT, example_plan
from tests.render_cases import rendered
from tests.test_write import _snapshot


def _summary(summary: WriteSummary) -> tuple[list[str], ...]:
    return summary.added, summary.changed, summary.unchanged, summary.removed


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize(("first", "second"), [("pod-roce-400g", "cluster-3tier"), ("ib-hdr", "pod-mixed")])
def test_streaming_writes_what_the_dict_path_writes(tmp_path: Path, first: str, second: str) -> None:
    """A first render into an empty folder, then another fabric over it (files added, changed,
    unchanged and removed): trees, manifests and summaries equal to the dict path's, -j 1 and 2."""
    reference = tmp_path / "dict"
    plans: list[Plan] = []
    expected = []
    for name in (first, second):
        plan, files = rendered(f"inventories/{name}")
        plans.append(plan)
        expected.append((_summary(write_tree(reference, files)), _files(reference)))
    assert expected[1][0][1] and expected[1][0][2] and expected[1][0][3], "the second render changes, keeps and removes files"
    for jobs in (1, 2):
        out = tmp_path / f"j{jobs}"
        for plan, (summary, tree) in zip(plans, expected, strict=True):
            assert _summary(write_rendered(out, plan, RenderContext(jobs=jobs))) == summary
            assert _files(out) == tree
            assert (out / MANIFEST).read_bytes() == tree[MANIFEST]
        assert not (out / STAGING).exists()


def test_render_check_and_limit_all_stream(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One render path: `render`, `render --check` and `render --limit` never build the whole
    mapping (render_files is not called); `--check` finds the tree `render` wrote up to date,
    and sees a changed file."""
    out = tmp_path / "out"

    def refused(*_args: object, **_kwargs: object) -> dict[str, str]:
        raise AssertionError("render must stream")

    monkeypatch.setattr(fabricgen.producers, "render_files", refused)
    runner = CliRunner()
    for jobs in ("1", "2"):
        result = runner.invoke(main, ["render", str(EXAMPLES / "pod-rail"), "-o", str(out), "-j", jobs])
        assert result.exit_code == 0, result.output
    assert " 0 changed" in result.stdout and " 0 added" in result.stdout and " 0 removed" in result.stdout
    for jobs in ("1", "2"):
        check = runner.invoke(main, ["render", str(EXAMPLES / "pod-rail"), "-o", str(out), "--check", "-j", jobs])
        assert check.exit_code == 0, check.output
    config = sorted((out / "configs").iterdir())[0]
    config.write_text("edited\n", encoding="utf-8")
    check = runner.invoke(main, ["render", str(EXAMPLES / "pod-rail"), "-o", str(out), "--check", "--json"])
    assert check.exit_code == 1 and json.loads(check.stdout)["changed"] == [f"configs/{config.name}"]
    limited = runner.invoke(main, ["render", str(EXAMPLES / "pod-rail"), "-o", str(out), "--limit", config.stem])
    assert limited.exit_code == 0, limited.output
    assert "1 changed" in limited.stdout and " 0 removed" in limited.stdout


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_run_each_runs_every_unit_once_and_keeps_their_order(jobs: int) -> None:
    for count in (0, 1, 2, 7):
        results = run_each([lambda index=index: (index, os.getpid()) for index in range(count)], jobs)
        assert [index for index, _pid in results] == list(range(count))
        assert len({pid for _index, pid in results}) <= jobs  # -j N: N processes, this one included


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_run_each_runs_the_local_units_in_this_process_first(jobs: int) -> None:
    """`render_files -j N` keeps the plan fragments in this process (too large to pickle back)
    and lets the workers take the rest, through the same fan-out as `render`."""
    here: list[int] = []
    units = [lambda index=index: (here.append(index), index, os.getpid())[1:] for index in range(9)]
    results = run_each(units, jobs, local=3)
    assert [index for index, _pid in results] == list(range(9))
    assert all(pid == os.getpid() for _index, pid in results[:3])
    assert here[:3] == [0, 1, 2]
    assert len({pid for _index, pid in results}) <= jobs


# --- Producers made for the test: what each unit hands to the writer is known exactly ----------


def _config(plan: Plan, context: RenderContext) -> dict[str, str]:
    return {"configs/a.cfg": "a\n", "configs/b.cfg": "b\n"}


def _notes(plan: Plan, context: RenderContext) -> dict[str, str]:
    return {"notes/readme.md": "notes\n"}


def _notes_v2(plan: Plan, context: RenderContext) -> dict[str, str]:
    return {"notes/readme.md": "notes, again\n", "notes/extra.md": "extra\n"}


def _escape(plan: Plan, context: RenderContext) -> dict[str, str]:
    return {"notes/ok.md": "ok\n", "notes/../../../../escaped.txt": "outside\n"}


def _twice(plan: Plan, context: RenderContext) -> dict[str, str]:
    return {"configs/a.cfg": "another a\n"}


def _broken(plan: Plan, context: RenderContext) -> dict[str, str]:
    raise FabricError([Diagnostic("templates/x.j2:3: undefined variable (from a worker)")])


PLAN = example_plan("pod-roce-400g")


def _write(out: Path, *producers: object, jobs: int = 1) -> WriteSummary:
    return write_rendered(out, PLAN, RenderContext(jobs=jobs), producers)  # type: ignore[arg-type]


@pytest.mark.parametrize("jobs", [1, 2])
def test_unchanged_files_keep_their_inode(tmp_path: Path, jobs: int) -> None:
    out = tmp_path / "out"
    first = _write(out, _config, _notes, jobs=jobs)
    assert first.added == ["configs/a.cfg", "configs/b.cfg", "notes/readme.md"]
    inodes = {rel: (out / rel).stat().st_ino for rel in first.added}
    again = _write(out, _config, _notes_v2, jobs=jobs)
    assert _summary(again) == (["notes/extra.md"], ["notes/readme.md"], ["configs/a.cfg", "configs/b.cfg"], [])
    assert {rel: (out / rel).stat().st_ino for rel in ("configs/a.cfg", "configs/b.cfg")} == {
        rel: inodes[rel] for rel in ("configs/a.cfg", "configs/b.cfg")
    }
    assert (out / "notes" / "readme.md").stat().st_ino != inodes["notes/readme.md"]
    assert (out / "notes" / "readme.md").read_text() == "notes, again\n"
    assert (out / MANIFEST).read_text() == "configs/a.cfg\nconfigs/b.cfg\nnotes/extra.md\nnotes/readme.md\n"


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_foreign_file_in_the_way_is_refused_before_anything_is_touched(tmp_path: Path, jobs: int) -> None:
    """The worker that stages notes/extra.md cannot know it is foreign (the check needs every
    path); the refusal must still come before configs and notes/readme.md change."""
    out = tmp_path / "out"
    _write(out, _config, _notes)
    (out / "notes" / "extra.md").write_text("mine\n")
    before = _snapshot(out)
    with pytest.raises(FabricError) as caught:
        _write(out, _twice, _notes_v2, jobs=jobs)
    assert "notes/extra.md" in caught.value.diagnostics[0].message
    assert _snapshot(out) == before


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_path_escape_from_a_producer_is_refused(tmp_path: Path, jobs: int) -> None:
    first = tmp_path / "new" / "out"
    with pytest.raises(FabricError) as caught:
        _write(first, _config, _escape, jobs=jobs)
    assert "refusing to write outside the output folder" in caught.value.diagnostics[0].message
    assert not (tmp_path / "new").exists()  # the folder this write created is gone again
    assert not (tmp_path / "escaped.txt").exists()
    out = tmp_path / "out"
    _write(out, _config)
    before = _snapshot(out)
    with pytest.raises(FabricError):
        _write(out, _notes, _escape, jobs=jobs)
    assert _snapshot(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_failing_unit_in_any_process_leaves_the_old_tree(tmp_path: Path, jobs: int) -> None:
    out = tmp_path / "out"
    _write(out, _config)
    before = _snapshot(out)
    with pytest.raises(FabricError) as caught:
        _write(out, _notes, _broken, _config, jobs=jobs)
    assert caught.value.diagnostics[0].message == "templates/x.j2:3: undefined variable (from a worker)"
    assert _snapshot(out) == before


def test_a_path_two_units_render_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _write(out, _notes)
    before = _snapshot(out)
    with pytest.raises(RuntimeError, match=r"rendered more than once: configs/a\.cfg"):
        _write(out, _config, _twice, jobs=2)
    assert _snapshot(out) == before


def test_a_foreign_folder_is_refused_before_anything_renders(tmp_path: Path) -> None:
    out = tmp_path / "docs"
    out.mkdir()
    (out / "README.md").write_text("mine\n")
    ran: list[str] = []

    def watched(plan: Plan, context: RenderContext) -> dict[str, str]:
        ran.append("rendered")
        return {"a.txt": "a\n"}

    with pytest.raises(FabricError) as caught:
        _write(out, watched)
    assert "fabricgen did not write it" in caught.value.diagnostics[0].message
    assert ran == []
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]


def test_modes_follow_the_umask_in_workers(tmp_path: Path) -> None:
    out = tmp_path / "out"
    previous = os.umask(0o027)
    try:
        _write(out, _config, _notes, jobs=2)
    finally:
        os.umask(previous)
    for rel in ("configs/a.cfg", "notes/readme.md", MANIFEST):
        assert stat.S_IMODE((out / rel).stat().st_mode) == 0o640, rel
    for folder in (out, out / "configs", out / "notes"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o750, folder


def test_an_interrupted_apply_is_finished_by_the_next_streamed_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "out"
    _write(out, _config, _notes)
    moved: list[str] = []
    real = os.replace

    def interrupted(source: str | Path, target: str | Path) -> None:
        if str(source).startswith(str(out / STAGING / "files")):
            moved.append(str(source))
            if len(moved) == 2:
                raise KeyboardInterrupt
        real(source, target)

    monkeypatch.setattr(fabricgen.render.write.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _write(out, _twice, _notes_v2, jobs=2)
    monkeypatch.setattr(fabricgen.render.write.os, "replace", real)
    assert (out / STAGING / "COMMITTED").is_file()  # committed: kept for the next run to finish
    summary = _write(out, _twice, _notes_v2)
    assert not summary.differs
    assert _files(out) == {
        MANIFEST: b"configs/a.cfg\nnotes/extra.md\nnotes/readme.md\n",
        "configs/a.cfg": b"another a\n",
        "notes/extra.md": b"extra\n",
        "notes/readme.md": b"notes, again\n",
    }


def test_a_second_writer_into_the_same_folder_is_refused(tmp_path: Path) -> None:
    """While one write holds the folder (its stage open, rendering), another must neither
    discard that stage as an interrupted one nor write: it is refused, nothing touched."""
    out = tmp_path / "out"
    _write(out, _config)
    (out / STAGING / "files").mkdir(parents=True)  # the first writer's stage, mid-render
    (out / STAGING / "files" / "a.cfg").write_text("staged by the first writer\n")
    before = _snapshot(out)
    holder = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        with pytest.raises(FabricError) as caught:
            _write(out, _notes, jobs=2)
        assert "another fabricgen is writing into" in caught.value.diagnostics[0].message
        assert _snapshot(out) == before
    finally:
        os.close(holder)
    assert _summary(_write(out, _config)) == ([], [], ["configs/a.cfg", "configs/b.cfg"], [])
    assert not (out / STAGING).exists()


KILLED_WHILE_STAGING = """
import os, signal, sys
from pathlib import Path
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from fabricgen.render.parallel import run_each
from fabricgen.producers import write_rendered

def staged(plan, context):
    return {"configs/a.cfg": "new a\\n", "configs/c.cfg": "c\\n"}

def killed(plan, context):
    os.kill(os.getpid(), signal.SIGKILL)

plan = load_and_plan(Path(sys.argv[1])).plan
write_rendered(Path(sys.argv[2]), plan, RenderContext(), (staged, killed))
"""


def test_a_render_killed_while_staging_leaves_the_old_tree_and_is_discarded(tmp_path: Path) -> None:
    """SIGKILL after one unit staged its files (so the stage holds a new configs/a.cfg, not
    committed): the old tree is whole, and the next write discards the stage."""
    out = tmp_path / "out"
    _write(out, _config)
    before = _snapshot(out)
    script = tmp_path / "killed.py"
    script.write_text(textwrap.dedent(KILLED_WHILE_STAGING), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.run([sys.executable, str(script), str(EXAMPLES / "pod-roce-400g"), str(out)], env=env, check=False)
    assert process.returncode == -signal.SIGKILL
    assert (out / STAGING / "files" / "configs" / "a.cfg").read_text() == "new a\n"
    assert not (out / STAGING / "COMMITTED").exists()
    assert {k: v for k, v in _snapshot(out).items() if not k.startswith(STAGING)} == before
    summary = _write(out, _config, _notes)
    assert _summary(summary) == (["notes/readme.md"], [], ["configs/a.cfg", "configs/b.cfg"], [])
    assert _files(out)["configs/a.cfg"] == b"a\n"
    assert not (out / STAGING).exists()
