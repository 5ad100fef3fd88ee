"""An inventory as it was at a git revision (`fabricgen diff --rev REV INVENTORY`).

Reads the file with `git show REV:path` (no checkout, the working tree is untouched) and runs
the normal pipeline on a temporary copy, so problems are reported as `REV:path:line:col`.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.loader import resolve_inventory_path
from fabricgen.pipeline import Checked, load_and_plan


def show(rev: str, path: Path) -> tuple[str, str]:
    """(text of `path` at `rev`, its repository-relative name)."""
    path = path.resolve()
    try:
        top = subprocess.run(
            ["git", "-C", str(path.parent), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
        ).stdout.strip()
        relative = path.relative_to(Path(top).resolve()).as_posix()
        text = subprocess.run(["git", "-C", top, "show", f"{rev}:{relative}"], capture_output=True, text=True, check=True).stdout
    except (OSError, ValueError, subprocess.CalledProcessError) as exc:
        detail = exc.stderr.strip() if isinstance(exc, subprocess.CalledProcessError) else str(exc)
        raise FabricError([Diagnostic(f"cannot read {path} at revision {rev!r}: {detail}")]) from None
    return text, relative


def load_at_revision(rev: str, inventory: Path) -> Checked:
    text, relative = show(rev, resolve_inventory_path(inventory))
    with tempfile.TemporaryDirectory(prefix="fabricgen-rev-") as tmp:
        copy = Path(tmp) / "fabric.yml"
        copy.write_text(text, encoding="utf-8")
        return load_and_plan(copy, display_name=f"{rev}:{relative}")
