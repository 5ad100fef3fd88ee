"""YAML text for plain data (dicts, lists, str, int, bool, None), fast and exactly as `yaml.dump`.

`yaml.dump(data, Dumper=CSafeDumper, sort_keys=True, default_flow_style=False)` emits in C
(libyaml) but represents in Python: a node object per value, alias bookkeeping, and two calls
of the implicit-tag resolver per scalar. At 5,000 switches the Ansible host_vars hold about
two million scalars and that took over ten seconds; building libyaml's node tree directly
still took several.

So the common case is written here as text, directly: block-style mappings and sequences are
a fixed layout (two spaces per mapping level, sequences in a mapping not indented, `[]` and `{}`
for empty ones), and how one scalar is written depends only on its text, so that is decided
once per distinct string and memoised (interface names, addresses and ASNs repeat across
switches). A string of letters, digits and `_./:-` starting with a letter, digit, `_` or `.` is
plain unless YAML's implicit resolver would read it as something else (`yes`, `1.5`,
`0x1f`), then single-quoted; any other string is written by libyaml once and its text reused,
as long as it fits on one line and has no space (libyaml only wraps at spaces, so the width
never applies). Anything outside that (a string with a space or a line break, a non-string or
very long key, a float) makes the whole document go through libyaml's node path below, which
is the representer's output exactly.

The one difference from the representer: aliases are never emitted, so data must not hold the
same list or dict object twice (the producers build fresh containers per host); `yaml.dump`
would alias those. A test pins equality with `yaml.dump` on both paths.
"""

from __future__ import annotations

import contextlib
import io
import re
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
_RESOLVER: Any = yaml.resolver.Resolver()  # PyYAML is untyped
_PLAIN_CANDIDATE = re.compile(r"(?!\.\.\.)[A-Za-z0-9_.][A-Za-z0-9_./:-]*(?<!:)\Z")
"""No YAML block indicator (a `:` is one only before a space or at the end), no space or special
character: plain unless the resolver reads it as a non-string."""
_DOTTED_NUMBERS = re.compile(r"[0-9]+(?:\.[0-9]+){2,}(?:/[0-9]+)?\Z")
"""An IPv4 address or prefix (hundreds of thousands of distinct ones at 5,000 switches): plain
without asking the resolver, whose number patterns allow one `.` at most and no `/`."""
_PLAIN_TEXTS = re.compile(r"(?:(?:(?:\.\./)*+[A-Za-z]++[0-9_./:-][A-Za-z0-9_./:-]*+(?<!:)|[0-9]++(?:\.[0-9]++){2,}+(?:/[0-9]++)?+)\n)*+")
"""Lines each of which yaml_text writes as it is: dotted numbers (as `_DOTTED_NUMBERS`) and plain
candidates that start with a letter and are not all letters (`Ethernet1/1`, `leaf01`,
`configs/leaf01.cfg`), also after `../`. Those are strings to the resolver without asking it:
the only implicit types that start with a letter are the bool and null words (`yes`, `Off`,
`null`), letters only, and those that start with a dot are numbers (`.5`, `.inf`). Possessive quantifiers: nothing to backtrack into, a third faster."""
_UNWRAPPED = 1 << 30
"""A width no line reaches: a scalar's text as libyaml writes it when nothing wraps."""
_DEFAULT_WIDTH = 80
"""libyaml's line width when none (or a width of 4 or less) is given."""
_LONGEST_SIMPLE_KEY = 128
"""libyaml writes a longer key as a complex key (`? key`)."""
_SCALARS: dict[str, str] = {}
_KEYS: dict[str, str] = {}


class _NotSimple(Exception):
    """The data holds something the direct writer does not cover: use libyaml's node path."""


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


def _libyaml_text(data: Any, width: int | None, sort_keys: bool) -> str:
    """The node path: libyaml emits the representer's node tree (built here, resolver memoised)."""
    stream = io.StringIO()
    dumper = _Dumper(stream, default_flow_style=False, width=width, sort_keys=sort_keys)
    try:
        dumper.open()
        dumper.serialize(_node(data, sort_keys))
        dumper.close()
    finally:
        dumper.dispose()
    return stream.getvalue()


def _scalar_text(text: str) -> str:
    """How libyaml writes the string `text` as a block value when nothing wraps it, if that is
    one line; raises `_NotSimple` otherwise. Memoised: it depends on the text alone. (libyaml
    wraps only at a space past the width, so a document whose lines all fit is unwrapped.)

    >>> [_scalar_text(s) for s in ("Ethernet1/1", "10.0.0.1", "yes", "1.5", "1.5.2", "a:b", "-", "")]
    ['Ethernet1/1', '10.0.0.1', "'yes'", "'1.5'", '1.5.2', 'a:b', "'-'", "''"]
    """
    known = _SCALARS.get(text)
    if known is None:
        known = _SCALARS[text] = _decide_scalar(text)
    return known


def _decide_scalar(text: str) -> str:
    if _DOTTED_NUMBERS.match(text):
        return text
    if _PLAIN_CANDIDATE.match(text):
        return text if _RESOLVER.resolve(ScalarNode, text, (True, False)) == _STR else f"'{text}'"
    written = _libyaml_text([text], _UNWRAPPED, False)
    if not written.startswith("- ") or written.count("\n") != 1:
        raise _NotSimple(text)
    return written[2:-1]


def plain_texts(texts: list[str], known: set[str] | None = None) -> bool:
    """Whether `block_scalar` writes each of `texts` as it is, found by one regular-expression
    scan over them all (a false answer only means "ask block_scalar"). Producers that write a
    fixed YAML shape directly check a whole file's strings at once: at 5,000 switches the Ansible
    host_vars and the lab topology hold millions of strings, nearly all names and addresses.
    `known`: names found plain already, skipped and added to (interface and device names recur
    in every file of a render; addresses do not, and are not kept).

    >>> plain_texts(["Ethernet1/1", "10.0.0.1", "leaf01"]), plain_texts(["leaf01", "yes"]), plain_texts(["leaf 01"])
    (True, False, False)
    """
    fresh = texts if known is None else list(set(texts).difference(known))
    if not fresh:
        return True
    joined = "\n".join(fresh) + "\n"
    if joined.count("\n") != len(fresh) or _PLAIN_TEXTS.fullmatch(joined) is None:
        return False
    if known is not None:
        known.update(text for text in fresh if not text[0].isdigit())
    return True


def block_scalar(text: str) -> str | None:
    """How `yaml_text` writes the string `text` as a block value (memoised), or None when it
    cannot say without the whole document (a line break, or a space a width could wrap at).
    For producers that write a fixed YAML shape as text directly.

    >>> block_scalar("Ethernet1/1"), block_scalar("no"), block_scalar("a b")
    ('Ethernet1/1', "'no'", None)
    """
    known = _SCALARS.get(text)
    if known is not None and " " not in known:
        return known
    try:
        known = _scalar_text(text)
    except _NotSimple:
        return None
    return None if " " in known else known


def _key_text(key: Any) -> str:
    known = _KEYS.get(key) if isinstance(key, str) else None
    if known is None:
        if not isinstance(key, str) or len(key) > _LONGEST_SIMPLE_KEY or not _PLAIN_CANDIDATE.match(key):
            raise _NotSimple(key)
        known = _KEYS[key] = _scalar_text(key)
    return known


def _value_text(value: Any) -> str:
    """A scalar, or an empty list or dict (libyaml writes those in flow style)."""
    if isinstance(value, str):
        return _scalar_text(value)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, list | dict) and not value:
        return "[]" if isinstance(value, list) else "{}"
    if isinstance(value, list | dict):
        raise AssertionError("non-empty containers are written as blocks")
    raise TypeError(f"yaml_text cannot represent {type(value).__name__}")


def _block(value: list[Any] | dict[str, Any], indent: str, first: str, out: list[str], sort_keys: bool) -> None:
    """A non-empty list or dict at `indent`; its first line starts with `first` instead (`- `
    for an item of a sequence)."""
    lead = first
    if isinstance(value, dict):
        keys = _sorted_keys(value) if sort_keys else list(value)
        for key in keys:
            item = value[key]
            if isinstance(item, list | dict) and item:
                out.append(f"{lead}{_key_text(key)}:\n")
                inner = indent + "  " if isinstance(item, dict) else indent
                _block(item, inner, inner, out, sort_keys)
            else:
                out.append(f"{lead}{_key_text(key)}: {_value_text(item)}\n")
            lead = indent
        return
    for item in value:
        if isinstance(item, list | dict) and item:
            _block(item, indent + "  ", lead + "- ", out, sort_keys)
        else:
            out.append(f"{lead}- {_value_text(item)}\n")
        lead = indent


def _sorted_keys(value: dict[str, Any]) -> list[str]:
    if not all(isinstance(key, str) for key in value):
        raise _NotSimple("mixed keys")
    return sorted(value)


def yaml_text(data: Any, width: int | None = None, sort_keys: bool = True) -> str:
    """`yaml.dump(data, Dumper=CSafeDumper, sort_keys=sort_keys, default_flow_style=False, width=width)`."""
    if isinstance(data, list | dict) and data:
        out: list[str] = []
        try:
            _block(data, "", "", out, sort_keys)
        except _NotSimple:
            pass
        else:
            limit = width if width is not None and width > 4 else _DEFAULT_WIDTH
            if max(map(len, out)) <= limit + 1:  # no line long enough for libyaml to wrap
                return "".join(out)
    return _libyaml_text(data, width, sort_keys)
