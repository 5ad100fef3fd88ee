"""The user's cache folder for work that gives the same result for the same input every run:
compiled built-in templates (`render/template_cache.py`), the parsed data files
(`catalog.py`) and the compiled `__init__` of the `@record` classes (`records.py`). A small render is mostly such fixed work (see docs/scale.md).

What is cached is read back as code or as data this process trusts, so a folder is used only
when this user owns it and no one else can write to it (`$XDG_CACHE_HOME/fabricgen/<name>`, by
default `~/.cache/fabricgen/<name>`, made with mode 0700), and every entry names the exact
input it was made from. Any problem (no home folder, a foreign or shared folder, a read-only
disk, a damaged file) means doing the work as before, never an error. `FABRICGEN_NO_CACHE=1`
turns the cache off.
"""

from __future__ import annotations

import atexit
import contextlib
import marshal
import os
import stat
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any


def private_cache_dir(name: str) -> str | None:
    """`<cache>/fabricgen/<name>`, created if need be, or None when it cannot be used safely."""
    if os.environ.get("FABRICGEN_NO_CACHE") or not hasattr(os, "getuid"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None  # no home folder (`~` left as it was), or a relative XDG path: not ours to guess
    directory = os.path.join(base, "fabricgen", name)
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        private = _private(os.path.dirname(directory), group_readable=True) and _private(directory, group_readable=False)
    except OSError:
        return None
    return directory if private else None


def _private(path: str, *, group_readable: bool) -> bool:
    """`path` is a real folder (not a link), owned by this user, that no one else can write to
    (and, unless `group_readable`, read)."""
    info = os.lstat(path)
    forbidden = 0o022 if group_readable else 0o077
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not stat.S_IMODE(info.st_mode) & forbidden


def write_atomically(path: str, data: bytes) -> None:
    """Write `data` to a file of this process's own and rename it into place, so another run
    reading at the same time sees the old file or the new one, never half; give up quietly."""
    partial = f"{path}.{os.getpid()}.tmp"
    try:
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(partial, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(partial)


def parsed(name: str, text: str, parse: Callable[[str], Any], version: str) -> Any:
    """`parse(text)`, kept between runs as marshalled data in the `data` cache folder under
    `name`: valid for this exact text, Python and parser `version`. marshal keeps what a
    safe YAML load gives (mappings with their key types and order, lists, strings, numbers,
    booleans, None) and reads it back about fifty times faster than libyaml parses it. The
    entry starts with the whole text it was made from (a few kilobytes), compared as it is:
    exact, and no hashlib to import (4 ms) for a command that needs no other hash."""
    directory = private_cache_dir("data")
    if directory is None:
        return parse(text)
    header = f"{sys.version}\0{version}\0{len(text)}\0{text}\0".encode()
    path = os.path.join(directory, f"{name}.marshal")
    try:
        with open(path, "rb") as file:
            cached = file.read()
        if cached.startswith(header):
            return marshal.loads(cached[len(header) :])
    except (OSError, EOFError, ValueError, TypeError):
        pass
    data = parse(text)
    try:
        encoded = marshal.dumps(data)
    except ValueError:  # a type marshal cannot hold: not cached
        return data
    write_atomically(path, header + encoded)
    return data


MAX_CODES = 1000
"""Entries a code table keeps: the record classes of fabricgen are about a hundred; tests and
other programs that define their own start the table afresh when it grows past this."""


class CodeTable:
    """Compiled code by its exact source and file name, kept between runs in the `code` cache
    folder as one marshalled table (`name.marshal`, for this Python only). Read on the first
    `compiled`; written once when the process exits if it compiled anything new (forked
    workers exit without it). Without a private cache folder it only compiles."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._codes: dict[str, CodeType] | None = None
        self._path: str | None = None
        self._dirty = False
        self._header = f"{sys.version}\0".encode()

    def compiled(self, source: str, filename: str) -> CodeType:
        """`compile(source, filename, "exec")`, from the table when it holds that exact pair."""
        codes = self._load()
        key = f"{filename}\0{source}"
        code = codes.get(key)
        if code is None:
            code = compile(source, filename, "exec")
            if self._path is not None:
                if len(codes) >= MAX_CODES:
                    codes.clear()
                codes[key] = code
                self._remember()
        return code

    def _remember(self) -> None:
        if not self._dirty:
            self._dirty = True
            atexit.register(self.save)

    def _load(self) -> dict[str, CodeType]:
        if self._codes is not None:
            return self._codes
        self._codes = {}
        directory = private_cache_dir("code")
        if directory is None:
            return self._codes
        self._path = os.path.join(directory, f"{self.name}.marshal")
        try:
            with open(self._path, "rb") as file:
                cached = file.read()
            if cached.startswith(self._header):
                table = marshal.loads(cached[len(self._header) :])
                if isinstance(table, dict) and all(isinstance(code, CodeType) for code in table.values()):
                    self._codes = table
        except (OSError, EOFError, ValueError, TypeError):
            pass
        return self._codes

    def save(self) -> None:
        """Write the table (what `compiled` registers to run at exit)."""
        if self._path is not None and self._codes:
            write_atomically(self._path, self._header + marshal.dumps(self._codes))
        self._dirty = False
