"""Helpers shared by the inventory checks: how to name a place in the file."""

from __future__ import annotations

import dataclasses

from fabricgen.core.diagnostics import Diagnostic, Severity
from fabricgen.inventory.loader import PathKey, SourceMap, format_path


def place(source: SourceMap, path: PathKey) -> str:
    """'leaves.nodes[0].name, line 16': a key path and the line it was written on; for a key the
    user left out, 'the default leaves.name'.

    >>> source = SourceMap("f.yml", values={("leaves",): (10, 3), ("leaves", "name"): (12, 9)})
    >>> place(source, ("leaves", "name"))
    'leaves.name, line 12'
    >>> place(source, ("spines", "name"))
    'the default spines.name'
    """
    if not written(source, path):
        return f"the default {format_path(path)}"
    return f"{format_path(path)}, line {source.locate(path)[0]}"


def written(source: SourceMap, path: PathKey) -> bool:
    """Whether the user wrote the key at `path` (not a schema default)."""
    return path in source.values or path in source.keys


def warning(source: SourceMap, path: PathKey, message: str, *, hint: str = "", key: bool = False) -> Diagnostic:
    """A located warning: reported, but the inventory stays valid (exit 0)."""
    return dataclasses.replace(source.diagnostic(path, message, hint=hint, key=key), severity=Severity.WARNING)
