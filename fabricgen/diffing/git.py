"""An inventory as it was at a git revision (`fabricgen diff --rev REV INVENTORY`).

Reads the file with `git show REV:path` (no checkout, the working tree is untouched) and runs
the normal pipeline on a temporary copy, so problems are reported as `REV:path:line:col`.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.inventory.loader import resolve_inventory_path
from fabricgen.pipeline import Checked, load_and_plan

INSTEAD = "compare two files instead: fabricgen diff OLD/fabric.yml NEW/fabric.yml"


def _git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=False)


def _fail(message: str, hint: str) -> FabricError:
    return FabricError([Diagnostic(message, hint=hint)])


def show(rev: str, path: Path) -> tuple[str, str]:
    """(text of `path` at `rev`, its repository-relative name).

    Each way this can fail gets its own message and what to do instead, rather than git's
    `fatal:` text: no git, not a repository, an unknown revision, a file not committed there."""
    path = path.resolve()
    try:
        top_run = _git("-C", str(path.parent), "rev-parse", "--show-toplevel")
    except OSError:
        raise _fail(f"diff --rev needs git, which is not installed; cannot read {path} at {rev!r}", INSTEAD) from None
    if top_run.returncode != 0:
        raise _fail(f"{path} is not in a git repository, so there is no revision {rev!r} of it", INSTEAD) from None
    top = top_run.stdout.strip()
    relative = path.relative_to(Path(top).resolve()).as_posix()
    if _git("-C", top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode != 0:
        raise _fail(
            f"unknown revision {rev!r} in {top}",
            "name a branch, tag or commit that exists here (git branch -a; in CI fetch it first: git fetch origin main, "
            "or actions/checkout with fetch-depth: 0)",
        )
    shown = _git("-C", top, "show", f"{rev}:{relative}")
    if shown.returncode != 0:
        raise _fail(
            f"{relative} does not exist at revision {rev!r} (a new inventory, or one not committed yet)",
            "commit it first, or for a new fabric review `fabricgen plan` and `fabricgen render` instead; " + INSTEAD,
        )
    return shown.stdout, relative


def load_at_revision(rev: str, inventory: Path) -> Checked:
    text, relative = show(rev, resolve_inventory_path(inventory))
    with tempfile.TemporaryDirectory(prefix="fabricgen-rev-") as tmp:
        copy = Path(tmp) / "fabric.yml"
        copy.write_text(text, encoding="utf-8")
        return load_and_plan(copy, display_name=f"{rev}:{relative}")
