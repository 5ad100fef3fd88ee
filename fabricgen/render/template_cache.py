"""Compiled templates kept between runs, in the user's cache folder.

WHY: compiling the device templates is about 0.05 CPU-s of every `fabricgen render`, a tenth of
a 96-switch render, and gives the same code every time for the same template text; loading
that code back takes a tenth of a millisecond. Jinja asks the cache for each template it
loads, with a checksum of the text it is about to compile (after `InliningLoader` has pasted
its includes, so an edited include is a different text); a cached entry is used only when its
checksum matches, so an edited template is compiled afresh. Only the built-in templates are
cached (`templating.environment`).
Jinja's and Python's versions and the environment's class and options name the cache folder.

The cache is code that this process will run, so it is used only from a folder that the user
owns and that no one else can write to (`$XDG_CACHE_HOME/fabricgen/`, by default
`~/.cache/fabricgen/`, like Python's own `__pycache__`), and its files hold nothing but a
header and the marshalled code (Jinja's own file cache also unpickles). Any problem with it
(no home folder, a read-only or foreign folder, a damaged file) means compiling as before,
never an error. `FABRICGEN_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import stat
import sys
from types import CodeType

import jinja2
from jinja2.bccache import Bucket


class TemplateCache(jinja2.BytecodeCache):
    """One file per template (named by Jinja's key: template name and file name) holding
    `tag`, the checksum of the compiled text and the code."""

    def __init__(self, directory: str, tag: str) -> None:
        self.directory = directory
        self.tag = tag.encode("ascii")

    def _path(self, bucket: Bucket) -> str:
        return os.path.join(self.directory, f"{bucket.key}.code")

    def _header(self, bucket: Bucket) -> bytes:
        return self.tag + b" " + bucket.checksum.encode("ascii") + b"\n"

    def load_bytecode(self, bucket: Bucket) -> None:
        header = self._header(bucket)
        try:
            with open(self._path(bucket), "rb") as file:
                data = file.read()
        except OSError:
            return
        if not data.startswith(header):
            return
        try:
            code = marshal.loads(data[len(header) :])
        except (EOFError, ValueError, TypeError):
            return
        if isinstance(code, CodeType):
            bucket.code = code

    def dump_bytecode(self, bucket: Bucket) -> None:
        """Written to a file of this process's own and renamed into place, so another render
        reading the cache at the same time sees the old file or the new one, never half."""
        if bucket.code is None:
            return
        path = self._path(bucket)
        partial = f"{path}.{os.getpid()}.tmp"
        try:
            descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
            with os.fdopen(descriptor, "wb") as file:
                file.write(self._header(bucket) + marshal.dumps(bucket.code))
            os.replace(partial, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(partial)

    def clear(self) -> None:
        for name in os.listdir(self.directory):
            if name.endswith(".code"):
                os.unlink(os.path.join(self.directory, name))


def template_cache(env: jinja2.Environment, options: dict[str, object]) -> TemplateCache | None:
    """The cache for `env`, made with `options`, or None when there is no private cache folder
    to use (or `FABRICGEN_NO_CACHE` is set). Environments that could compile a text differently
    (another class, option, filter or test name, Jinja or Python) use different folders."""
    if os.environ.get("FABRICGEN_NO_CACHE") or not hasattr(os, "getuid"):
        return None
    kind = type(env)
    identity = repr(
        (
            sys.version,
            jinja2.__version__,
            kind.__module__,
            kind.__qualname__,
            sorted(options.items()),
            sorted(env.filters),
            sorted(env.tests),
        )
    )
    tag = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    if not os.path.isabs(base):
        return None  # no home folder (`~` left as it was), or a relative XDG path: not ours to guess
    directory = os.path.join(base, "fabricgen", f"templates-{tag[:16]}")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        private = _private(os.path.dirname(directory), group_readable=True) and _private(directory, group_readable=False)
    except OSError:
        return None
    return TemplateCache(directory, tag) if private else None


def _private(path: str, *, group_readable: bool) -> bool:
    """`path` is a real folder (not a link), owned by this user, that no one else can write to
    (and, unless `group_readable`, read)."""
    info = os.lstat(path)
    forbidden = 0o022 if group_readable else 0o077
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not stat.S_IMODE(info.st_mode) & forbidden
