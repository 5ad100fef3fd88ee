"""Write rendered files: atomically, minimally, and only inside the output folder.

The new tree is assembled in a temporary sibling folder and swapped in with two renames, so an
interrupted or failed render leaves the previous output as it was. Files whose content did not
change are hard-linked from the old tree (not rewritten: their inode and mtime stay), files the
previous render wrote but this one does not are dropped, and files fabricgen never wrote (the
playbooks' `running/` backups, for example) are carried over untouched. A manifest lists what
fabricgen owns.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from fabricgen.diagnostics import Diagnostic, FabricError

MANIFEST = ".fabricgen-manifest"


@dataclass(slots=True)
class WriteSummary:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.added or self.changed or self.removed)


def safe_relative(path: str) -> str:
    """Refuse absolute paths, '..', and anything that would land outside the output folder."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or not pure.parts or any(part in ("..", "") for part in pure.parts) or "\\" in path or path.startswith("~"):
        raise FabricError([Diagnostic(f"refusing to write outside the output folder: {path!r}")])
    return str(pure)


def _read_manifest(out: Path) -> set[str]:
    try:
        return set((out / MANIFEST).read_text(encoding="utf-8").split("\n")) - {""}
    except OSError:
        return set()


def compare(out: Path, files: dict[str, str]) -> WriteSummary:
    """What writing `files` into `out` would change, without writing."""
    summary = WriteSummary()
    for rel, content in sorted(files.items()):
        target = out / safe_relative(rel)
        try:
            old = target.read_bytes()
        except OSError:
            summary.added.append(rel)
            continue
        (summary.unchanged if old == content.encode("utf-8") else summary.changed).append(rel)
    summary.removed = sorted(_read_manifest(out) - set(files))
    return summary


def write_tree(out: Path, files: dict[str, str], *, keep_unlisted_owned: bool = False) -> WriteSummary:
    """Make `out` hold exactly `files` (plus foreign files). With `keep_unlisted_owned`
    (used by --limit), files fabricgen wrote before and does not produce now are kept."""
    files = {safe_relative(rel): content for rel, content in files.items()}
    summary = compare(out, files)
    owned_before = _read_manifest(out)
    if keep_unlisted_owned:
        summary.removed = []
    if not summary.differs and out.exists():
        return summary
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    try:
        owned = set(files)
        if out.exists():
            for old in sorted(out.rglob("*")):
                if old.is_dir() or old.is_symlink():
                    continue
                rel = old.relative_to(out).as_posix()
                if rel == MANIFEST or rel in files:
                    continue
                is_owned = rel in owned_before
                if is_owned and not keep_unlisted_owned:
                    continue
                if is_owned:
                    owned.add(rel)
                _link_or_copy(old, staging / rel)
        for rel in summary.unchanged:
            _link_or_copy(out / rel, staging / rel)
        for rel in (*summary.added, *summary.changed):
            target = staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(files[rel], encoding="utf-8", newline="\n")
        (staging / MANIFEST).write_text("".join(f"{rel}\n" for rel in sorted(owned)), encoding="utf-8")
        _swap(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return summary


def _link_or_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _swap(staging: Path, out: Path) -> None:
    if not out.exists():
        staging.rename(out)
        return
    retired = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    retired.rmdir()
    out.rename(retired)
    try:
        staging.rename(out)
    except BaseException:
        retired.rename(out)
        raise
    shutil.rmtree(retired, ignore_errors=True)
