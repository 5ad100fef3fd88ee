"""`fabricgen render --check` (CI gate), `--json` and the progress bar's terminal detection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen import cli
from fabricgen.cli import main
from tests.conftest import EXAMPLES, example_plan

INVENTORY = str(EXAMPLES / "pod-mixed")


def _render(out: Path, *args: str, stream: str = "output") -> tuple[int, str]:
    """Exit code and what the command printed: both streams (`output`), or one (`stdout`: the
    JSON summary, without the inventory's warnings, which go to stderr)."""
    result = CliRunner().invoke(main, ["render", INVENTORY, "-o", str(out), *args])
    return result.exit_code, getattr(result, stream)


def _snapshot(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_check_passes_on_a_fresh_render(tmp_path: Path) -> None:
    out = tmp_path / "pod2"
    assert _render(out, "-q")[0] == 0
    code, output = _render(out, "--check")
    assert code == 0, output
    assert "up to date" in output


@pytest.mark.parametrize("damage", ["edit", "delete", "extra-owned"])
def test_check_fails_and_lists_the_difference_without_writing(tmp_path: Path, damage: str) -> None:
    out = tmp_path / "pod2"
    _render(out, "-q")
    if damage == "edit":
        (out / "cabling.csv").write_text("tampered\n", encoding="utf-8")
        expected = f"changed: {out / 'cabling.csv'}"
    elif damage == "delete":
        (out / "bom.csv").unlink()
        expected = f"added: {out / 'bom.csv'}"
    else:
        manifest = out / ".fabricgen-manifest"
        manifest.write_text(manifest.read_text(encoding="utf-8") + "configs/retired.cfg\n", encoding="utf-8")
        (out / "configs" / "retired.cfg").write_text("old\n", encoding="utf-8")
        expected = f"removed: {out / 'configs' / 'retired.cfg'}"
    before = _snapshot(out)
    code, output = _render(out, "--check")
    assert code == 1
    assert expected in output
    assert _snapshot(out) == before


def test_check_on_a_missing_output_fails(tmp_path: Path) -> None:
    code, _ = _render(tmp_path / "nothing", "--check")
    assert code == 1
    assert not (tmp_path / "nothing").exists()


def test_json_summary(tmp_path: Path) -> None:
    out = tmp_path / "pod2"
    code, output = _render(out, "--json", stream="stdout")
    assert code == 0
    data = json.loads(output)
    assert data["fabric"] == "pod2" and data["check"] is False and data["differs"] is True
    assert "cabling.csv" in data["added"] and "lab/pod2.clab.yml" in data["added"]
    assert "pod2-leaf01" in data["devices_changed"]
    code, output = _render(out, "--check", "--json", stream="stdout")
    assert code == 0
    data = json.loads(output)
    assert data["check"] is True and data["differs"] is False and data["added"] == []


def test_progress_only_on_a_terminal_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(type(cli.err_console), "is_terminal", property(lambda self: True))
    monkeypatch.delenv("CI", raising=False)
    assert cli.progress_wanted()
    monkeypatch.setenv("CI", "true")
    assert not cli.progress_wanted()
    monkeypatch.setattr(type(cli.err_console), "is_terminal", property(lambda self: False))
    monkeypatch.delenv("CI", raising=False)
    assert not cli.progress_wanted()


def test_progress_bar_renders_the_same_files(tmp_path: Path) -> None:
    from fabricgen.render.context import RenderContext

    plan = example_plan("pod-mixed")
    cli.write_with_progress(tmp_path / "bar", plan, RenderContext(), show=True)
    cli.write_with_progress(tmp_path / "plain", plan, RenderContext(), show=False)
    bar = {p.relative_to(tmp_path / "bar"): p.read_bytes() for p in (tmp_path / "bar").rglob("*") if p.is_file()}
    plain = {p.relative_to(tmp_path / "plain"): p.read_bytes() for p in (tmp_path / "plain").rglob("*") if p.is_file()}
    assert bar == plain and len(bar) > 10
