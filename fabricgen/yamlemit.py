"""YAML text for plain data (dicts, lists, str, int, bool, None), fast and exactly as `yaml.dump`.

`yaml.dump(data, Dumper=CSafeDumper, sort_keys=True, default_flow_style=False)` emits in C
(libyaml) but represents in Python: a dispatch per value, alias bookkeeping, and two calls
of the implicit-tag resolver per scalar. At 5,000 switches the Ansible host_vars hold about
two million scalars and that Python half took over ten seconds. Here the node tree is built
directly (what SafeRepresenter builds for these types, block style, keys sorted) and the
resolver's answer is memoised per scalar text (interface names, peer groups and ASNs repeat
on every switch); libyaml still writes the text, so quoting and wrapping are its own.

The one difference from the representer: it never emits anchors/aliases, so data must not
hold the same list or dict object twice (the producers build fresh containers per host);
`yaml.dump` would alias those. A test pins equality with `yaml.dump`.
"""

from __future__ import annotations

import contextlib
import io
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

_BASE: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter when PyYAML has it (same output, about ten times faster)."""

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"

_RESOLVED: dict[tuple[str, tuple[bool, bool]], str] = {}


class _Dumper(_BASE):  # type: ignore[misc]  # PyYAML's classes are untyped
    """The safe dumper with the scalar resolver memoised (it is a pure function of the text)."""

    def resolve(self, kind: type, value: Any, implicit: Any) -> Any:
        if kind is not ScalarNode:
            return super().resolve(kind, value, implicit)
        key = (value, implicit)
        tag = _RESOLVED.get(key)
        if tag is None:
            tag = _RESOLVED[key] = super().resolve(kind, value, implicit)
        return tag


def _node(value: Any, sort_keys: bool) -> Node:
    if isinstance(value, str):
        return ScalarNode(_STR, value)
    if isinstance(value, bool):
        return ScalarNode(_BOOL, "true" if value else "false")
    if isinstance(value, int):
        return ScalarNode(_INT, str(value))
    if value is None:
        return ScalarNode(_NULL, "null")
    if isinstance(value, dict):
        items = list(value.items())
        if sort_keys:
            with contextlib.suppress(TypeError):  # as the representer: mixed key types keep insertion order
                items = sorted(items)
        return MappingNode(_MAP, [(_node(k, sort_keys), _node(v, sort_keys)) for k, v in items], flow_style=False)
    if isinstance(value, list):
        return SequenceNode(_SEQ, [_node(v, sort_keys) for v in value], flow_style=False)
    raise TypeError(f"yaml_text cannot represent {type(value).__name__}")


def yaml_text(data: Any, width: int | None = None, sort_keys: bool = True) -> str:
    """`yaml.dump(data, Dumper=CSafeDumper, sort_keys=sort_keys, default_flow_style=False, width=width)`."""
    stream = io.StringIO()
    dumper = _Dumper(stream, default_flow_style=False, width=width, sort_keys=sort_keys)
    try:
        dumper.open()
        dumper.serialize(_node(data, sort_keys))
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue()
