"""Write rendered files: transactionally, minimally, and only inside the output folder.

The output folder itself is never replaced: its mode, owner and inode stay, `-o .` works, and
everything in it that fabricgen did not write (the playbooks' `running/` backups, a user's
notes, symlinks, empty folders) stays untouched. What fabricgen wrote is listed in a manifest,
and only those paths are ever replaced or removed.

A write is a small transaction inside the output folder:

0. begin: the folder is claimed (a foreign one refused) and locked against a second
   fabricgen writing into it at the same time (`flock`), and an interrupted earlier write
   finished or discarded, before anything is rendered into it.
1. stage: every new or changed file is written into `.fabricgen-staging/files/`. `render`
   streams (`write_streamed`, fabricgen.render.stream): each render unit compares its own
   files with the output (size first, then bytes) and stages the new and changed ones in
   whichever process rendered them, so no process holds every text and only paths travel
   between processes; `write_tree` stages a mapping it is given the same way. When every part
   is staged, paths fabricgen would write but did not write itself are refused (and the stage
   removed) before anything outside the stage is touched; then the new manifest and the list
   of files to remove are staged. A render that fails or is killed here leaves the previous
   output whole (a failure removes the stage, and the output folder if this write created
   it); the next run discards a half-built stage.
2. commit: an empty `COMMITTED` marker is renamed into the stage. From this point the change
   is decided.
3. apply: each staged file is renamed over its target (renames are atomic per file), stale
   owned files are removed, the manifest is replaced last, and the stage is deleted. If this
   is interrupted, the next fabricgen run finishes it before doing anything else, so the
   folder always ends up as the old or the new tree, never a mix.

Unchanged files are not touched (inode and mtime stay). Every path is confined
(`safe_relative`) before it is written, in the process that writes it. Files are created 0666
and folders 0777, both minus the umask (forked workers inherit it): 0644 / 0755 with the usual
umask 022.

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
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.records import record

if sys.platform != "win32":
    import fcntl

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
    return compared(out, [compare_part(out, files)])


def compare_part(out: Path, files: dict[str, str]) -> WriteSummary:
    """Which of `files` (one part of a render) are new, changed or unchanged in `out`."""
    summary = WriteSummary()
    exists = out.is_dir()
    base = f"{os.fspath(out)}/"
    for rel, content in files.items():
        rel = safe_relative(rel)
        same = _same(base + rel, content) if exists else None
        if same is None:
            summary.added.append(rel)
        else:
            (summary.unchanged if same else summary.changed).append(rel)
    return summary


def compared(out: Path, parts: Iterable[WriteSummary], *, keep_unlisted_owned: bool = False) -> WriteSummary:
    """The parts' comparisons as one, with the files fabricgen wrote before and would remove
    (none with `keep_unlisted_owned`)."""
    summary = _merged(parts)
    if not keep_unlisted_owned:
        summary.removed = sorted(_read_manifest(out) - {*summary.added, *summary.changed, *summary.unchanged})
    return summary


_CHUNK = 1 << 24
"""Characters compared or encoded at a time: a large file (a cabling table, the fabric's plan
fragment at 5,000 switches) is never held a second time whole as bytes."""


_READ = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
"""Never through a symlink, and never waiting on a FIFO someone put where a file was."""


def _same(path: str, content: str) -> bool | None:
    """Whether the regular file at `path` holds `content` (UTF-8); None when there is none.

    The size from `lstat` decides first, so a changed file is usually not opened; an unchanged
    one is read once (a large ASCII one in chunks: its length in characters is its size).
    A symlink is never followed: it is not what fabricgen wrote."""
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode):
            return False
        whole = len(content) <= _CHUNK or not content.isascii()
        encoded = content.encode("utf-8") if whole else b""
        if info.st_size != (len(encoded) if whole else len(content)):
            return False
        with os.fdopen(os.open(path, _READ), "rb", buffering=0) as handle:
            if whole:
                return handle.read() == encoded
            return all(handle.read(_CHUNK) == content[start : start + _CHUNK].encode("ascii") for start in range(0, len(content), _CHUNK))
    except OSError:
        return None


def write_tree(out: Path, files: dict[str, str], *, keep_unlisted_owned: bool = False) -> WriteSummary:
    """Make fabricgen's files in `out` exactly `files`, leaving everything else in `out` alone.
    With `keep_unlisted_owned` (used by --limit), files fabricgen wrote before and does not
    produce now are kept (and stay owned). A folder that cannot be written (permissions, a full
    disk) is reported as such, not as a bug of fabricgen."""
    return write_streamed(out, lambda transaction: [stage_files(transaction, files)], keep_unlisted_owned=keep_unlisted_owned)


@record
class Transaction:
    """A write in progress: the output folder claimed and recovered, its stage open. Forked
    render workers inherit it and stage the files they render into it (`stage_files`)."""

    out: Path
    fresh: bool
    """Nothing to compare with (no manifest, an empty folder): every file is new."""
    owned_before: frozenset[str]
    created: Path | None
    """The outermost folder this write created to hold `out`: removed again if it fails."""
    lock: int | None = None
    """The open output folder this write holds an exclusive lock on (see `_lock`)."""


def write_streamed(
    out: Path, stage_all: Callable[[Transaction], Iterable[WriteSummary]], *, keep_unlisted_owned: bool = False
) -> WriteSummary:
    """Like `write_tree`, for files that are never held together: `stage_all` renders them in
    parts, in any processes, handing each part to `stage_files`, and returns the parts'
    summaries. The folder is claimed and an interrupted write recovered first; the foreign-path
    check runs on the whole list of paths before anything outside the stage is touched. If
    anything fails before the commit, the stage (and a folder this write created) is removed:
    the output folder is as it was."""
    try:
        transaction = _begin(out)
        try:
            return _finish(transaction, _merged(stage_all(transaction)), keep_unlisted_owned)
        except BaseException:
            _abort(transaction)
            raise
        finally:
            if transaction.lock is not None:
                os.close(transaction.lock)
    except OSError as exc:
        where = exc.filename or out
        raise FabricError([Diagnostic(f"cannot write the output folder: {where}: {exc.strerror or exc}")]) from None


def _begin(out: Path) -> Transaction:
    created = _outermost_missing(out)
    _claim(out)
    lock = _lock(out)
    try:
        recover(out)
        owned_before = frozenset(_read_manifest(out))
        fresh = not owned_before and _is_empty(out)
        (out / STAGING).mkdir()
        (out / STAGING / _FILES).mkdir()
    except BaseException:
        _abort(Transaction(out, False, frozenset(), created))
        if lock is not None:
            os.close(lock)
        raise
    return Transaction(out, fresh, owned_before, created, lock)


def _lock(out: Path) -> int | None:
    """An exclusive lock on the output folder for the whole write, from before the recovery to
    the end of the apply: a second fabricgen writing into the same folder would otherwise
    discard this one's stage as an interrupted one while this one renders into it. The lock is
    `flock` on the folder itself (no lock file to leave behind), released when the last copy of
    the descriptor closes (forked workers hold one until they exit) or the process dies."""
    if sys.platform == "win32":
        return None
    descriptor = os.open(out, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        raise FabricError(
            [
                Diagnostic(
                    f"another fabricgen is writing into {out}; nothing was touched",
                    hint="wait for it to finish, or render into another folder",
                )
            ]
        ) from None
    return descriptor


def _outermost_missing(out: Path) -> Path | None:
    """The outermost of `out` and its parents that does not exist yet (what `mkdir(parents=True)`
    would create first), or None."""
    missing = None
    for folder in (out, *out.parents):
        if os.path.lexists(folder):
            break
        missing = folder
    return missing


def stage_files(transaction: Transaction, files: dict[str, str]) -> WriteSummary:
    """Compare one part of the render with the output (size first, then bytes) and stage its new
    and changed files, in whichever process rendered them: only the small summary (paths) has
    to travel anywhere. Every path is confined before it is written (`safe_relative`)."""
    summary = WriteSummary()
    base = f"{os.fspath(transaction.out)}/"
    root = os.fspath(transaction.out / STAGING / _FILES)
    made: set[str] = set()
    for path, content in files.items():
        rel = safe_relative(path)
        same = None if transaction.fresh else _same(base + rel, content)
        if same:
            summary.unchanged.append(rel)
            continue
        _make_folder(root, rel, made)
        _write_text(f"{root}/{rel}", content)
        (summary.added if same is None else summary.changed).append(rel)
    return summary


def _merged(parts: Iterable[WriteSummary]) -> WriteSummary:
    """The parts' summaries as one, sorted; a path two parts produced is a bug of a producer
    (which text would win?), refused before the commit."""
    summary = WriteSummary()
    for part in parts:
        summary.added += part.added
        summary.changed += part.changed
        summary.unchanged += part.unchanged
    produced = Counter([*summary.added, *summary.changed, *summary.unchanged])
    if len(produced) != produced.total():
        twice = sorted(rel for rel, count in produced.items() if count > 1)
        raise RuntimeError(f"rendered more than once: {', '.join(twice[:10])}")
    for paths in (summary.added, summary.changed, summary.unchanged):
        paths.sort()
    return summary


def _finish(transaction: Transaction, summary: WriteSummary, keep_unlisted_owned: bool) -> WriteSummary:
    """Everything after staging: refuse foreign paths, then commit and apply (or, when nothing
    differs, drop the empty stage)."""
    out, owned_before = transaction.out, transaction.owned_before
    produced = {*summary.added, *summary.changed, *summary.unchanged}
    if not transaction.fresh:
        _refuse_foreign(out, sorted(produced), owned_before)
        if not keep_unlisted_owned:
            summary.removed = sorted(owned_before - produced)
    stage = out / STAGING
    if not summary.differs and (out / MANIFEST).is_file():
        shutil.rmtree(stage)
        return summary
    owned = produced | (owned_before if keep_unlisted_owned else set())
    _commit(stage, owned, summary.removed)
    _apply(out, stage, [*summary.added, *summary.changed])
    return summary


def _abort(transaction: Transaction) -> None:
    """Undo an uncommitted write: remove its stage, and the folder it created for `out` if that
    is empty again. A committed one is left for the next run to finish (`recover`)."""
    stage = transaction.out / STAGING
    if (stage / _COMMITTED).is_file():
        return
    if stage.is_dir() and not stage.is_symlink():
        shutil.rmtree(stage, ignore_errors=True)
    if transaction.created is not None:
        for folder in (transaction.out, *transaction.out.parents):
            with contextlib.suppress(OSError):
                folder.rmdir()
            if folder == transaction.created:
                break


def _is_empty(out: Path) -> bool:
    with os.scandir(out) as entries:
        return next(entries, None) is None


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


def _refuse_foreign(out: Path, paths: list[str], owned: frozenset[str]) -> None:
    """Refuse to replace anything fabricgen did not write, or to write through a symlinked or
    foreign folder (that could leave the output folder)."""
    problems: list[str] = []
    checked: dict[str, bool] = {}
    base = f"{os.fspath(out)}/"
    for rel in paths:
        folder = rel.rpartition("/")[0]
        blocked = _blocked_folder(base, folder, checked) if folder else None
        if blocked is not None:
            problems.append(f"{blocked} (not a plain folder)")
            continue
        try:
            mode = os.lstat(base + rel).st_mode
        except (FileNotFoundError, NotADirectoryError):
            continue
        if rel not in owned:
            problems.append(rel)
        elif stat.S_ISDIR(mode):
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


def _blocked_folder(base: str, folder: str, checked: dict[str, bool]) -> str | None:
    """The first folder on the way to `folder` (itself included) that is not a plain folder or
    missing, or None; each folder is looked at once (`checked` remembers)."""
    parts = folder.split("/")
    for depth in range(1, len(parts) + 1):
        prefix = "/".join(parts[:depth])
        plain = checked.get(prefix)
        if plain is None:
            plain = checked[prefix] = _is_real_folder_or_missing(base + prefix)
        if not plain:
            return prefix
    return None


def _is_real_folder_or_missing(path: Path | str) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except FileNotFoundError:
        return True


def _commit(stage: Path, owned: set[str], remove: list[str]) -> None:
    """Step 2: the new manifest and the list of files to remove beside the staged files, then
    the commit marker, renamed into place (atomic): from here the change is decided."""
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


def _apply(out: Path, stage: Path, written: list[str] | None = None) -> None:
    """Step 3: move the staged files into place (idempotent, so a rerun can finish it).
    `written` lists the staged files when this run staged them; a recovery finds them."""
    root = os.fspath(stage / _FILES)
    base = os.fspath(out)
    made: set[str] = set()
    for rel in _staged(root) if written is None else written:
        _make_folder(base, rel, made)
        os.replace(f"{root}/{rel}", f"{base}/{rel}")
    remove = (stage / _REMOVE).read_text(encoding="utf-8").split("\n") if (stage / _REMOVE).is_file() else []
    for rel in filter(None, remove):
        _remove_owned(out, rel)
    if (stage / MANIFEST).is_file():
        os.replace(stage / MANIFEST, out / MANIFEST)
    shutil.rmtree(stage)


def _staged(root: str) -> list[str]:
    """The files under `root` (relative, "/"-separated, sorted): what an interrupted apply
    still has to move. Files already moved are gone from the stage, so a rerun skips them."""
    found: list[str] = []
    for folder, _folders, names in os.walk(root):
        relative = os.path.relpath(folder, root).replace(os.sep, "/")
        found.extend(name if relative == "." else f"{relative}/{name}" for name in names)
    return sorted(found)


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


def _make_folder(root: str, rel: str, made: set[str]) -> None:
    """Create the folder of `rel` under `root` once (18,000 files share a handful of folders)."""
    folder = rel.rpartition("/")[0]
    if folder and folder not in made:
        os.makedirs(f"{root}/{folder}", exist_ok=True)
        made.add(folder)


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)


def _write_text(path: str | Path, text: str) -> None:
    """UTF-8 with the text's own "\n" line ends on every OS, encoded a chunk at a time so a
    large file is not held twice. Created 0666 minus the umask."""
    descriptor = os.open(path, _CREATE, 0o666)
    try:
        for start in range(0, len(text), _CHUNK):
            data = memoryview(text[start : start + _CHUNK].encode("utf-8"))
            while data:
                data = data[os.write(descriptor, data) :]
    finally:
        os.close(descriptor)


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
