"""Compiled templates kept between runs, in the user's cache folder.

WHY: compiling the device templates is about 0.05 CPU-s of every `fabricgen render`, a tenth of
a 96-switch render, and gives the same code every time for the same template text; loading
that code back takes a tenth of a millisecond. Jinja asks the cache for each template it
loads, with a checksum of the text it is about to compile (after `InliningLoader` has pasted
its includes, so an edited include is a different text); a cached entry is used only when its
checksum matches, so an edited template is compiled afresh. Only the built-in templates are
cached (`templating.environment`).
Jinja's and Python's versions and the environment's class and options name the cache folder.

The cache is code that this process will run, so it lives in a private folder of the user's
cache (`core/usercache.py`: owned by the user, no one else can write to it, like Python's own
`__pycache__`), and its files hold nothing but a header and the marshalled code (Jinja's own
file cache also unpickles). Any problem with it means compiling as before, never an error;
`FABRICGEN_NO_CACHE=1` turns it off.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from types import CodeType

import jinja2
from jinja2.bccache import Bucket

from fabricgen.core.usercache import private_cache_dir, write_atomically


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
        if bucket.code is not None:
            write_atomically(self._path(bucket), self._header(bucket) + marshal.dumps(bucket.code))

    def clear(self) -> None:
        for name in os.listdir(self.directory):
            if name.endswith(".code"):
                os.unlink(os.path.join(self.directory, name))


def template_cache(env: jinja2.Environment, options: dict[str, object]) -> TemplateCache | None:
    """The cache for `env`, made with `options`, or None when there is no private cache folder
    to use. Environments that could compile a text differently use different folders: another
    Python, Jinja, option, filter or test name, or another environment, code generator or
    template class (by name and by the source of the modules outside Jinja that define them)."""
    try:
        compilers = _compilers(env)
    except OSError:  # a module whose source cannot be read (a zip import): nothing to key it by
        return None
    identity = repr((sys.version, jinja2.__version__, sorted(options.items()), sorted(env.filters), sorted(env.tests), compilers))
    tag = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]
    directory = private_cache_dir(f"templates-{tag[:16]}")
    return None if directory is None else TemplateCache(directory, tag)


def _compilers(env: jinja2.Environment) -> list[str]:
    """The classes that turn a template's text into code, and a digest of each module outside
    Jinja (whose version covers its own) that defines one of them or their bases: a change
    to a code generator of ours is a new cache."""
    classes = {base for kind in (type(env), env.code_generator_class, env.template_class, env.context_class) for base in kind.__mro__}
    names = sorted(f"{kind.__module__}.{kind.__qualname__}" for kind in classes)
    digests = []
    for module_name in sorted({kind.__module__ for kind in classes} - {"builtins"}):
        module = sys.modules.get(module_name)
        path = getattr(module, "__file__", None)
        if module_name.split(".")[0] != "jinja2" and path:
            with open(path, "rb") as file:
                digests.append(f"{module_name}:{hashlib.sha256(file.read()).hexdigest()}")
    return names + digests
