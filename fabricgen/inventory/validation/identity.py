"""Identity: each pinned node, subnet manager and partition once.

A list in YAML can name the same thing twice, and the expansion used to let the last entry win
silently (a pinned leaf's loopback gone, the master subnet manager's config lost). Each second
entry is an error that names the first.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from typing import Any

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.inventory.validation.common import place


def check_identity(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    """Pinned nodes (per tier, pod or plane, index), subnet-manager hosts and partition names."""
    found = []
    pods = doc.get("pods", {}).get("count", 0)
    for key, group_key in (("spines", "pod"), ("leaves", "pod"), ("superspines", "plane")):
        nodes = doc.get(key, {}).get("nodes", []) if isinstance(doc.get(key), dict) else []
        keyed = [((node.get(group_key, 1) if pods else 1, node["index"]), (key, "nodes", i, "index")) for i, node in enumerate(nodes)]
        for (group, index), path, first in _repeats(keyed):
            within = f" in {group_key} {group}" if pods else ""
            found.append(source.diagnostic(path, f"{key} index {index}{within} is pinned twice: here and at {place(source, first)}"))
    hosts = [(sm["host"], ("subnet_managers", i, "host")) for i, sm in enumerate(doc.get("subnet_managers") or [])]
    for host, path, first in _repeats(hosts):
        found.append(source.diagnostic(path, f"subnet manager host {host!r} is listed twice: here and at {place(source, first)}"))
    names = [(part["name"], ("partitions", i, "name")) for i, part in enumerate(doc.get("partitions") or [])]
    for name, path, first in _repeats(names):
        found.append(source.diagnostic(path, f"partition name {name!r} is used twice: here and at {place(source, first)}"))
    return found


def _repeats(items: Sequence[tuple[Hashable, PathKey]]) -> Iterator[tuple[Any, PathKey, PathKey]]:
    """(value, where it repeats, where it first appeared) for every repeat."""
    first: dict[Hashable, PathKey] = {}
    for value, path in items:
        earlier = first.setdefault(value, path)
        if earlier != path:
            yield value, path, earlier
