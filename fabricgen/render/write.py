"""Write rendered files: transactionally, minimally, and only inside the output folder.

The output folder itself is never replaced: its mode, owner and inode stay, `-o .` works, and
everything in it that fabricgen did not write (the playbooks' `running/` backups, a user's
notes, symlinks, empty folders) stays untouched. What fabricgen wrote is listed in a manifest,
and only those paths are ever replaced or removed.

A write is a small transaction inside the output folder:

1. stage: every new or changed file is written into `.fabricgen-staging/`, with the new
   manifest and the list of files to remove. A render that fails or is killed here leaves the
   previous output whole; the next run discards the half-built stage.
2. commit: an empty `COMMITTED` marker is renamed into the stage. From this point the change
   is decided.
3. apply: each staged file is renamed over its target (renames are atomic per file), stale
   owned files are removed, the manifest is replaced last, and the stage is deleted. If this
   is interrupted, the next fabricgen run finishes it before doing anything else, so the
   folder always ends up as the old or the new tree, never a mix.

Unchanged files are not touched (inode and mtime stay). Files are created 0666 and folders
0777, both minus the umask: 0644 / 0755 with the usual umask 022.

A non-empty folder without a manifest was not made by fabricgen: writing into it is refused,
so pointing `-o` at the wrong folder loses nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from fabricgen.core.diagnostics import Diagnostic, FabricError

MANIFEST = ".fabricgen-manifest"
STAGING = ".fabricgen-staging"
"""The transaction folder inside the output folder (removed when a write ends)."""
_COMMITTED = "COMMITTED"
_REMOVE = "REMOVE"
_FILES = "files"
_RESERVED = frozenset({MANIFEST, STAGING})


@dataclass(slots=True)
class WriteSummary:
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def differs(self) -> bool:
        return bool(self.added or self.changed or self.removed)


_PLAIN_PATH = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9_][A-Za-z0-9_.+-]*)*\Z")
"""Relative, normalised, every part starting with a letter, digit or `_` (so no `..`, no `~`,
no reserved dot-name, no control character): safe as it is."""


def safe_relative(path: str) -> str:
    """Refuse absolute paths, '..', fabricgen's own bookkeeping names, and anything that would
    land outside the output folder.

    >>> safe_relative("configs/leaf01.cfg")
    'configs/leaf01.cfg'
    """
    if _PLAIN_PATH.match(path):
        return path  # the common case, decided without building a PurePosixPath (18,000 paths a run)
    pure = PurePosixPath(path)
    if (
        pure.is_absolute()
        or not pure.parts
        or any(part in ("..", "") for part in pure.parts)
        or "\\" in path
        or path.startswith("~")
        or pure.parts[0] in _RESERVED
        or any(ord(c) < 0x20 or c == "\x7f" for c in path)
    ):
        raise FabricError([Diagnostic(f"refusing to write outside the output folder: {path!r}")])
    return str(pure)


def _read_manifest(out: Path) -> set[str]:
    """The paths fabricgen wrote; an entry that would reach outside `out` (a hand-edited
    manifest) is ignored, so it can never make fabricgen replace or delete such a file."""
    try:
        lines = (out / MANIFEST).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return set()
    return {line for line in lines if line and _is_safe(line)}


def _is_safe(path: str) -> bool:
    try:
        return safe_relative(path) == path
    except FabricError:
        return False


def compare(out: Path, files: dict[str, str]) -> WriteSummary:
    """What writing `files` into `out` would change, without writing."""
    return _compare(out, {safe_relative(rel): content for rel, content in files.items()})


_CHUNK = 1 << 24
"""Characters compared or encoded at a time: a large file (a cabling table, the fabric's plan
fragment at 5,000 switches) is never held a second time whole as bytes."""


def _same(path: Path, content: str) -> bool | None:
    """Whether the regular file at `path` holds `content` (UTF-8); None when there is none.

    The size is checked first (for ASCII text the length in characters is the length in bytes),
    then the text in chunks, so an unchanged file is read once and a changed one usually not at all.
    A symlink is never followed: it is not what fabricgen wrote."""
    try:
        if not stat.S_ISREG(path.lstat().st_mode):
            return False
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
    """Make fabricgen's files in `out` exactly `files`, leaving everything else in `out` alone.
    With `keep_unlisted_owned` (used by --limit), files fabricgen wrote before and does not
    produce now are kept (and stay owned). A folder that cannot be written (permissions, a full
    disk) is reported as such, not as a bug of fabricgen."""
    files = {safe_relative(rel): content for rel, content in files.items()}
    try:
        return _write_tree(out, files, keep_unlisted_owned)
    except OSError as exc:
        where = exc.filename or out
        raise FabricError([Diagnostic(f"cannot write the output folder: {where}: {exc.strerror or exc}")]) from None


def _write_tree(out: Path, files: dict[str, str], keep_unlisted_owned: bool) -> WriteSummary:
    _claim(out)
    recover(out)
    owned_before = _read_manifest(out)
    summary = _compare(out, files)
    if keep_unlisted_owned:
        summary.removed = []
    _refuse_foreign(out, files, owned_before)
    if not summary.differs and (out / MANIFEST).is_file():
        return summary
    owned = set(files) | (owned_before if keep_unlisted_owned else set())
    stage = out / STAGING
    try:
        _stage(stage, files, [*summary.added, *summary.changed], owned, summary.removed)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    _apply(out, stage)
    return summary


def _claim(out: Path) -> None:
    """Create `out`, or make sure it is a folder fabricgen may write into."""
    if out.is_symlink() and not out.is_dir():
        raise FabricError([Diagnostic(f"output {out} is a symlink to nothing; choose a folder")])
    if not out.exists():
        out.mkdir(parents=True)
        return
    if not out.is_dir():
        raise FabricError([Diagnostic(f"output {out} exists and is not a folder")])
    if (out / MANIFEST).is_file():
        return
    if any(entry.name != STAGING for entry in os.scandir(out)):
        raise FabricError(
            [
                Diagnostic(
                    f"output folder {out} is not empty and fabricgen did not write it (there is no {MANIFEST}); nothing in it was touched",
                    hint="give -o a new or empty folder, or the folder of an earlier render",
                )
            ]
        )


def _refuse_foreign(out: Path, files: dict[str, str], owned: set[str]) -> None:
    """Refuse to replace anything fabricgen did not write, or to write through a symlinked or
    foreign folder (that could leave the output folder)."""
    problems: list[str] = []
    checked: dict[str, bool] = {}
    for rel in sorted(files):
        parts = rel.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if folder not in checked:
                checked[folder] = _is_real_folder_or_missing(out / folder)
            if not checked[folder]:
                problems.append(f"{folder} (not a plain folder)")
                break
        else:
            target = out / rel
            if rel not in owned and (target.exists() or target.is_symlink()):
                problems.append(rel)
            elif target.is_dir() and not target.is_symlink():
                problems.append(f"{rel} (a folder)")
    if problems:
        shown = ", ".join(sorted(set(problems))[:10]) + (f" and {len(set(problems)) - 10} more" if len(set(problems)) > 10 else "")
        raise FabricError(
            [
                Diagnostic(
                    f"output folder {out} holds paths fabricgen would write but did not write itself: {shown}; nothing was touched",
                    hint="move them away, or render into another folder",
                )
            ]
        )


def _is_real_folder_or_missing(path: Path) -> bool:
    try:
        return stat.S_ISDIR(path.lstat().st_mode)
    except FileNotFoundError:
        return True


def _stage(stage: Path, files: dict[str, str], write: list[str], owned: set[str], remove: list[str]) -> None:
    """Step 1 and 2: everything the change needs, inside `stage`, then the commit marker."""
    stage.mkdir()
    (stage / _FILES).mkdir()
    made: set[str] = set()
    for rel in write:
        _make_folder(stage / _FILES, rel, made)
        _write_text(stage / _FILES / rel, files[rel])
    _write_text(stage / MANIFEST, "".join(f"{rel}\n" for rel in sorted(owned)))
    _write_text(stage / _REMOVE, "".join(f"{rel}\n" for rel in remove))
    pending = stage / f".{_COMMITTED}.{secrets.token_hex(4)}"
    _write_text(pending, "")
    os.replace(pending, stage / _COMMITTED)


def recover(out: Path) -> None:
    """Finish a committed write that was interrupted, or discard an uncommitted one."""
    stage = out / STAGING
    if not stage.is_dir() or stage.is_symlink():
        return
    if (stage / _COMMITTED).is_file():
        _apply(out, stage)
    else:
        shutil.rmtree(stage)


def _apply(out: Path, stage: Path) -> None:
    """Step 3: move the staged files into place (idempotent, so a rerun can finish it)."""
    root = stage / _FILES
    made: set[str] = set()
    if root.is_dir():
        for path in sorted(root.rglob("*")):
            if path.is_dir():
                continue
            rel = path.relative_to(root).as_posix()
            _make_folder(out, rel, made)
            os.replace(path, out / rel)
    remove = (stage / _REMOVE).read_text(encoding="utf-8").split("\n") if (stage / _REMOVE).is_file() else []
    for rel in filter(None, remove):
        _remove_owned(out, rel)
    if (stage / MANIFEST).is_file():
        os.replace(stage / MANIFEST, out / MANIFEST)
    shutil.rmtree(stage)


def _remove_owned(out: Path, rel: str) -> None:
    """Remove a file fabricgen wrote, then the folders it leaves empty (never a non-empty one)."""
    target = out / rel
    if not all(_is_real_folder_or_missing(folder) for folder in target.parents if folder.is_relative_to(out) and folder != out):
        return  # a folder on the way became a symlink: what it points to is not fabricgen's
    with contextlib.suppress(FileNotFoundError, IsADirectoryError):
        target.unlink()
    parent = target.parent
    while parent != out:
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent


def _make_folder(root: Path, rel: str, made: set[str]) -> None:
    """Create the folder of `rel` under `root` once (18,000 files share a handful of folders)."""
    folder = rel.rpartition("/")[0]
    if folder and folder not in made:
        (root / folder).mkdir(parents=True, exist_ok=True)
        made.add(folder)


def _write_text(path: Path, text: str) -> None:
    """UTF-8 with the text's own "\n" line ends on every OS, encoded a chunk at a time so a
    large file is not held twice. Created 0666 minus the umask."""
    with path.open("wb") as handle:
        for start in range(0, len(text), _CHUNK):
            handle.write(text[start : start + _CHUNK].encode("utf-8"))


def atomic_write_text(target: Path, text: str) -> None:
    """Replace one file atomically (a temporary sibling, then a rename), with the mode a plain
    `open` would give it: 0666 minus the umask. (`tempfile.mkstemp` would leave it 0600.)"""
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp"
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(text.encode("utf-8"))
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
