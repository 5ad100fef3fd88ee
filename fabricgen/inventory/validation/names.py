"""Names are identifiers: every device, server and subnet-manager host name, as expanded from
its pattern or pinned, must be a host name, and no two things may share one.

A name becomes a config `hostname`, a file name (`configs/<name>.cfg`, `opensm/<name>/`), an
Ansible host and a CSV cell. RFC 1123 §2.1 (https://www.rfc-editor.org/rfc/rfc1123#section-2.1)
with RFC 952: a label of letters, digits and hyphens, not starting or ending with a hyphen, at
most 63 characters. That one rule keeps a name out of shell commands, out of other folders
(`/`, `..`) and on one config line.

Name patterns are `str.format` strings, but only the documented placeholders may appear: an
attribute or index access (`{fabric.__class__}`) would read Python internals into a config.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from typing import Any, NamedTuple

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.inventory.loader import PathKey, SourceMap, format_path
from fabricgen.inventory.validation.common import place

_LABEL = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?")
RFC_HINT = "a host name (RFC 1123): letters, digits and '-', not first or last, at most 63 characters"
MAX_LISTED = 10

PLACEHOLDERS: dict[str, dict[str, bool]] = {
    "spines": {"fabric": False, "index": True, "pod": True},
    "leaves": {"fabric": False, "index": True, "pod": True},
    "superspines": {"fabric": False, "plane": True, "index": True},
    "servers": {"fabric": False, "leaf": False, "leaf_index": True, "index": True, "pod": True, "unit": True},
}
"""The documented placeholders of each name pattern (docs/inventory.md); True: an integer, which
may be zero-padded (`{index:02d}`)."""

_INTEGER_SPEC = re.compile(r"(0[1-9])?d?")


def hostname_problem(name: str) -> str:
    """'' when `name` is a valid host name label, else why it is not.

    >>> hostname_problem("pod1-leaf01")
    ''
    >>> hostname_problem("leaf;rm -rf 01")
    "';' is not allowed"
    >>> hostname_problem("-leaf01")
    "it starts with '-'"
    >>> hostname_problem("x" * 70)
    'it is 70 characters long'
    """
    if _LABEL.fullmatch(name):
        return ""
    if not name:
        return "it is empty"
    bad = next((c for c in name if not (c.isascii() and (c.isalnum() or c == "-"))), None)
    if bad is not None:
        return f"{bad!r} is not allowed"
    if len(name) > 63:
        return f"it is {len(name)} characters long"
    return "it starts with '-'" if name.startswith("-") else "it ends with '-'"


def pattern_problem(pattern: str, allowed: dict[str, bool]) -> str:
    """'' when `pattern` uses only `allowed` placeholders, plainly, else why not.

    >>> pattern_problem("{fabric}-leaf{index:02d}", PLACEHOLDERS["leaves"])
    ''
    >>> pattern_problem("{fabric.__class__}-{index}", PLACEHOLDERS["leaves"])
    '{fabric.__class__}: attribute or index access is not allowed in a name pattern'
    >>> pattern_problem("{rack}-{index}", PLACEHOLDERS["leaves"])
    '{rack} is not a placeholder of this pattern'
    """
    try:
        fields = [(name, spec, conversion) for _, name, spec, conversion in string.Formatter().parse(pattern) if name is not None]
    except ValueError as exc:
        return f"braces do not pair up ({exc}); write '{{{{' and '}}}}' for literal braces"
    for name, spec, conversion in fields:
        shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        if "." in name or "[" in name:
            return f"{shown}: attribute or index access is not allowed in a name pattern"
        if name not in allowed:
            return f"{shown} is not a placeholder of this pattern"
        if conversion:
            return f"{shown}: conversions (!r, !s, !a) are not allowed in a name pattern"
        if spec and not (allowed[name] and _INTEGER_SPEC.fullmatch(spec)):
            return (
                f"{shown}: only zero padding like {{{name}:02d}} is allowed" if allowed[name] else f"{shown}: a format is not allowed here"
            )
    return ""


class Named(NamedTuple):
    """One expanded name, what carries it and the key that produced it (a tuple: at 5,000
    leaves there are 160,000 server names)."""

    name: str
    what: str
    path: PathKey
    identity: tuple[Any, ...]
    pinned: bool = False


def check_names(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    """Placeholders, then every expanded name as a host name, then clashes between names."""
    found = _check_patterns(doc, source)
    if found:
        return found
    names = list(_all_names(doc))
    bad_names = _check_hostnames(names, source)
    if any(d.path != "servers.name" for d in bad_names):  # server names repeat a bad leaf name
        bad_names = [d for d in bad_names if d.path != "servers.name"]
    return bad_names + _check_clashes(names, source)


def _check_patterns(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    found = []
    for key, allowed in PLACEHOLDERS.items():
        pattern = doc.get(key, {}).get("name") if isinstance(doc.get(key), dict) else None
        if isinstance(pattern, str):
            problem = pattern_problem(pattern, allowed)
            if problem:
                found.append(source.diagnostic((key, "name"), problem, hint="placeholders: " + ", ".join("{" + p + "}" for p in allowed)))
    return found


def _check_hostnames(names: list[Named], source: SourceMap) -> list[Diagnostic]:
    """The first offending name of each key (a pattern repeats its mistake in every name)."""
    reported: set[PathKey] = set()
    found = []
    for item in names:
        if item.path in reported:
            continue
        problem = hostname_problem(item.name)
        if problem:
            reported.add(item.path)
            found.append(
                source.diagnostic(item.path, f"{item.what} would be named {item.name!r}, not a valid host name: {problem}", hint=RFC_HINT)
            )
    return found


def _check_clashes(names: list[Named], source: SourceMap) -> list[Diagnostic]:
    first: dict[str, Named] = {}
    found: list[Diagnostic] = []
    for item in names:
        seen = first.setdefault(item.name.lower(), item)  # host names ignore case, and so do some file systems
        if seen is item or seen.identity == item.identity:
            continue
        if found and item.identity[0] == "server":
            break  # server names repeat clashing leaf names: the root cause is reported
        if len(found) == MAX_LISTED:
            found.append(source.diagnostic(item.path, "... and more duplicate names"))
            break
        here, other = (seen, item) if seen.pinned and not item.pinned else (item, seen)
        found.append(
            source.diagnostic(
                here.path,
                f"duplicate name {_spelt(here.name, other.name)}: {here.what} ({place(source, here.path)}) and {other.what} ({place(source, other.path)})",
                hint="every switch, server and subnet manager needs its own name",
            )
        )
    return found


def _spelt(name: str, other: str) -> str:
    """ "'leaf01'", or "'Leaf01' ('leaf01': host names ignore case)" when the two differ in case.

    >>> _spelt("Leaf01", "leaf01")
    "'Leaf01' ('leaf01': host names ignore case)"
    """
    return repr(name) if name == other else f"{name!r} ({other!r}: host names ignore case)"


def _all_names(doc: dict[str, Any]) -> Iterator[Named]:
    tiers = dict(_tiers(doc))
    for nodes in tiers.values():
        for _, _, item in nodes:
            yield item
    leaves = tiers.get("leaves", [])
    servers = list(_servers(doc, leaves))
    yield from servers
    if doc["fabric"].get("transport") == "infiniband":
        server_names = {s.name for s in servers}
        for position, sm in enumerate(doc.get("subnet_managers") or []):
            if sm["host"] not in server_names:
                path = ("subnet_managers", position, "host")
                yield Named(sm["host"], f"subnet manager {position + 1}", path, ("sm", sm["host"]), pinned=True)


def _tiers(doc: dict[str, Any]) -> Iterator[tuple[str, list[tuple[int, int, Named]]]]:
    """Each tier's (group, index, name) in the planner's order: pods (or planes), then index."""
    pods = doc.get("pods", {}).get("count", 0)
    groups = tuple(range(1, pods + 1)) if pods else (1,)
    spine_indices: set[int] = set()
    for key, role, group_key in (("spines", "spine", "pod"), ("leaves", "leaf", "pod"), ("superspines", "super-spine", "plane")):
        if key not in doc or (key == "superspines" and not pods):
            continue
        tier = doc[key]
        tier_groups = tuple(sorted(spine_indices)) if key == "superspines" else groups
        grouped = bool(pods)
        if grouped and tier.get("count") and "{" + group_key not in tier["name"]:
            continue  # the planner reports the missing {pod} / {plane}
        pins: dict[tuple[int, int], tuple[int, dict[str, Any]]] = {
            (node.get(group_key, 1) if grouped else 1, node["index"]): (place_, node) for place_, node in enumerate(tier.get("nodes", []))
        }
        keys = sorted({(g, i) for g in tier_groups for i in range(1, tier.get("count", 0) + 1)} | {k for k in pins if k[0] in tier_groups})
        nodes: list[tuple[int, int, Named]] = []
        for group, index in keys:
            position, pin = pins.get((group, index), (0, {}))
            what = f"{role} {index}" + (f" of {group_key} {group}" if grouped else "")
            if "name" in pin:
                item = Named(pin["name"], what, (key, "nodes", position, "name"), (key, group, index), pinned=True)
            else:
                text = tier["name"].format(fabric=doc["fabric"]["name"], index=index, pod=group, plane=group)
                item = Named(text, what, (key, "name"), (key, group, index))
            nodes.append((group, index, item))
        if key == "spines":
            spine_indices = {index for _, index, _ in nodes}
        yield key, nodes


def _servers(doc: dict[str, Any], leaves: list[tuple[int, int, Named]]) -> Iterator[Named]:
    """Server names as the planner forms them: per leaf, or per unit of rail leaves."""
    cfg = doc.get("servers", {})
    per_leaf = cfg.get("per_leaf", 0)
    if not per_leaf or not leaves:
        return
    rails = (cfg.get("rails") or cfg.get("ports_per_server", 1)) if cfg.get("attachment") == "rail" else 0
    unit_first: dict[tuple[int, int], tuple[int, Named]] = {}
    for pod, index, leaf in leaves:
        unit = (index - 1) // rails + 1 if rails else 0
        first_index, first = unit_first.setdefault((pod, unit), (index, leaf)) if rails else (index, leaf)
        for number in range(1, per_leaf + 1):
            name = cfg["name"].format(
                fabric=doc["fabric"]["name"], leaf=first.name, leaf_index=first_index, index=number, pod=pod, unit=unit
            )
            identity = ("server", pod, unit if rails else index, number)
            yield Named(name, f"server {number} of {first.name}", ("servers", "name"), identity)


__all__ = ["PLACEHOLDERS", "Named", "check_names", "format_path", "hostname_problem", "pattern_problem"]
