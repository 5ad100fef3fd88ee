"""Every module a docstring, comment or doc names exists: a file named `x.py` or `a/b/x.py`,
a dotted `fabricgen.a.b` (with the attribute it names, `fabricgen.producers.PRODUCERS`), and a
module's constant in backticks (`checks.registry.PLAN_CHECKS`).

Modules move (render/producers.py became producers.py); a reference left behind sends the
next reader to a file that is not there. In code the name resolves near the file that writes
it (its folder, the folder above, `fabricgen/` or the repository's top); in the docs, which
name modules within a package's table row, to any tracked file of that name.
"""

from __future__ import annotations

import importlib
import re
import subprocess
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parent.parent
PY_FILE = re.compile(r"(?<![\w./-])((?:[A-Za-z_][\w-]*/)*[A-Za-z_]\w*\.py)\b")
DOTTED = re.compile(r"(?<![\w./-])(fabricgen(?:\.[A-Za-z_]\w*)+)")
CONSTANT = re.compile(r"`((?:[a-z_]+\.)+[A-Z][A-Z0-9_]+)`")
"""A module's constant in backticks, `render.PRODUCERS` or `checks.registry.PLAN_CHECKS`: the
module is a package or module of fabricgen, named from the top."""
FILE_SUFFIXES = {"py", "conf", "yml", "yaml", "json", "md", "cfg", "j2", "txt", "csv", "sh", "net"}
"""`fabricgen.conf` is a file name, not a module."""
ELSEWHERE = {"netbox/dcim/forms/bulk_import.py", "_keywords.py", "megatron/core/parallel_state.py"}
"""Files of other projects, named as sources (NetBox's import form, jsonschema's keywords, Megatron-Core's
parallel groups)."""


def _tracked() -> list[str]:
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [path for path in listed.split("\n") if path and (ROOT / path).exists()]


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _file_found(source: str, ref: str, tracked: set[str]) -> bool:
    if ref in ELSEWHERE:
        return True
    if source.endswith(".md"):
        return any(path == ref or path.endswith("/" + ref) for path in tracked)
    here = PurePosixPath(source).parent
    near = (here, here.parent, PurePosixPath("fabricgen"), PurePosixPath("."))
    return any(str(base / ref) in tracked for base in near)


def _dotted_found(ref: str, tracked: set[str]) -> bool:
    parts = ref.split(".")
    if parts[-1] in FILE_SUFFIXES:
        return True
    for end in range(len(parts), 1, -1):
        folder = "/".join(parts[:end])
        if f"{folder}.py" in tracked or f"{folder}/__init__.py" in tracked:
            found: object = importlib.import_module(".".join(parts[:end]))
            for attribute in parts[end:]:
                if not hasattr(found, attribute):
                    return False
                found = getattr(found, attribute)
            return True
    return False


def stale_references(sources: list[str], tracked: set[str]) -> list[str]:
    """`file:line: name` of every module named in `sources` that does not exist."""
    stale = []
    for source in sources:
        text = (ROOT / source).read_text(encoding="utf-8")
        for match in PY_FILE.finditer(text):
            if not _file_found(source, match.group(1), tracked):
                stale.append(f"{source}:{_line(text, match.start())}: {match.group(1)}")
        for match in DOTTED.finditer(text):
            if not _dotted_found(match.group(1), tracked):
                stale.append(f"{source}:{_line(text, match.start())}: {match.group(1)}")
        for match in CONSTANT.finditer(text):
            if not _dotted_found(f"fabricgen.{match.group(1)}", tracked):
                stale.append(f"{source}:{_line(text, match.start())}: {match.group(1)}")
    return stale


def _sources(tracked: list[str]) -> list[str]:
    return [
        path
        for path in tracked
        if (path.startswith(("fabricgen/", "benchmarks/")) and path.endswith(".py"))
        or (path.startswith("docs/") and path.endswith(".md"))
        or path == "README.md"
    ]


def test_every_named_module_exists() -> None:
    tracked = _tracked()
    sources = _sources(tracked)
    assert len(sources) > 100
    stale = stale_references(sources, set(tracked))
    assert not stale, "modules named but not there:\n" + "\n".join(stale)


def test_a_stale_reference_is_found(tmp_path: Path) -> None:
    """The check can fail: a docstring naming a moved module, a missing attribute, a file."""
    tracked = set(_tracked())
    assert stale_references(["fabricgen/pipeline.py"], tracked) == []
    assert _file_found("fabricgen/pipeline.py", "render/stream.py", tracked)
    assert not _file_found("fabricgen/pipeline.py", "render/producers.py", tracked)
    assert not _file_found("fabricgen/pipeline.py", "render.py", tracked)  # infiniband/render.py is not near
    assert _dotted_found("fabricgen.producers.PRODUCERS", tracked)
    assert not _dotted_found("fabricgen.render.producers.PRODUCERS", tracked)
    assert not _dotted_found("fabricgen.producers.NO_SUCH_NAME", tracked)
    assert CONSTANT.findall("`render.PRODUCERS` runs them") == ["render.PRODUCERS"]
    assert not _dotted_found("fabricgen.render.PRODUCERS", tracked)
