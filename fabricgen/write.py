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
    return _compare(out, {safe_relative(rel): content for rel, content in files.items()})


_CHUNK = 1 << 24
"""Characters compared at a time: a 340 MB plan.json is never held twice as bytes."""


def _same(path: Path, content: str) -> bool | None:
    """Whether the file at `path` holds `content` (UTF-8); None when it cannot be read.

    The size is checked first (for ASCII text the length in characters is the length in bytes),
    then the text in chunks, so an unchanged file is read once and a changed one usually not at all."""
    try:
        with path.open("rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if content.isascii():
                if size != len(content):
                    return False
                return all(
                    handle.read(_CHUNK) == content[start : start + _CHUNK].encode("ascii") for start in range(0, len(content), _CHUNK)
                )
            encoded = content.encode("utf-8")
            return size == len(encoded) and handle.read() == encoded
    except OSError:
        return None


def _compare(out: Path, files: dict[str, str]) -> WriteSummary:
    summary = WriteSummary()
    exists = out.is_dir()
    for rel, content in sorted(files.items()):
        same = _same(out / rel, content) if exists else None
        if same is None:
            summary.added.append(rel)
        else:
            (summary.unchanged if same else summary.changed).append(rel)
    summary.removed = sorted(_read_manifest(out) - set(files))
    return summary


def write_tree(out: Path, files: dict[str, str], *, keep_unlisted_owned: bool = False) -> WriteSummary:
    """Make `out` hold exactly `files` (plus foreign files). With `keep_unlisted_owned`
    (used by --limit), files fabricgen wrote before and does not produce now are kept."""
    files = {safe_relative(rel): content for rel, content in files.items()}
    summary = _compare(out, files)
    owned_before = _read_manifest(out)
    if keep_unlisted_owned:
        summary.removed = []
    if not summary.differs and out.exists():
        return summary
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    made: set[str] = set()
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
                _link_or_copy(old, staging, rel, made)
        for rel in summary.unchanged:
            _link_or_copy(out / rel, staging, rel, made)
        for rel in (*summary.added, *summary.changed):
            _make_folder(staging, rel, made)
            _write_text(staging / rel, files[rel])
        (staging / MANIFEST).write_text("".join(f"{rel}\n" for rel in sorted(owned)), encoding="utf-8")
        _swap(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return summary


def _make_folder(staging: Path, rel: str, made: set[str]) -> None:
    """Create the folder of `rel` once (18,000 files share a handful of folders)."""
    folder = rel.rpartition("/")[0]
    if folder not in made:
        (staging / folder).mkdir(parents=True, exist_ok=True)
        made.add(folder)


def _write_text(path: Path, text: str) -> None:
    """UTF-8 with the text's own "\n" line ends on every OS, encoded a chunk at a time so a
    340 MB plan.json is not held twice."""
    with path.open("wb") as handle:
        for start in range(0, len(text), _CHUNK):
            handle.write(text[start : start + _CHUNK].encode("utf-8"))


def _link_or_copy(source: Path, staging: Path, rel: str, made: set[str]) -> None:
    _make_folder(staging, rel, made)
    target = staging / rel
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
