"""YAML 1.1's implicit types, read the way the person meant them.

PyYAML resolves unquoted scalars by YAML 1.1: `1:1` is the base-60 number 61, `010` the octal
number 8, `on`/`off`/`yes`/`no` are booleans, and a GUID written `0x0002c903...` is an integer.
None of that is what an engineer typing an inventory means. The loader keeps the text of every
unquoted scalar YAML typed as a number or boolean (`SourceMap.plain`); here, knowing from the
schema what each key expects, that text is read as meant or refused with the reason:

- where the schema expects text (a name, a GUID, a ratio such as `3:1`), the text as written;
- where it expects a boolean, `yes`/`no`/`on`/`off` are the booleans they spell;
- where it expects a number, a base-60 number, a leading-zero octal or a word-boolean is
  refused (the reader would otherwise get 61, 8 or 1 silently); hex, binary and `1_000` keep
  their value, which nobody reads two ways.
"""

from __future__ import annotations

import re
from typing import Any

_WORD_BOOLEANS = frozenset({"yes", "no", "on", "off"})
_OCTAL = re.compile(r"[-+]?0[0-7_]+")


def expected_types(schema: dict[str, Any]) -> frozenset[str]:
    """The JSON types a schema node takes: its `type`, or the types of its `enum` values.

    >>> sorted(expected_types({"type": ["number", "string"]})), sorted(expected_types({"enum": [1, 2, 4]}))
    (['number', 'string'], ['integer'])
    """
    kind = schema.get("type")
    if isinstance(kind, str):
        return frozenset({kind})
    if isinstance(kind, list):
        return frozenset(str(k) for k in kind)
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    return frozenset(names.get(type(v), "null") for v in schema.get("enum", ()))


def read_as_meant(text: str, value: Any, expected: frozenset[str]) -> tuple[Any, str, str]:
    """(value, problem, hint) for an unquoted scalar written `text` that YAML 1.1 read as
    `value`; the problem is "" when the value stands.

    >>> read_as_meant("1:1", 61, frozenset({"number", "string"}))[0]
    '1:1'
    >>> read_as_meant("0x0002c90300000001", 0x0002C90300000001, frozenset({"string"}))[0]
    '0x0002c90300000001'
    >>> read_as_meant("on", True, frozenset({"boolean"}))
    (True, '', '')
    >>> read_as_meant("1:30", 90, frozenset({"integer"}))[1]
    "'1:30' is read by YAML 1.1 as the base-60 (sexagesimal) number 90"
    >>> read_as_meant("010", 8, frozenset({"integer"}))[1:]
    ("'010' has a leading zero: YAML 1.1 reads it as the octal number 8, YAML 1.2 as 10", 'write 10, or 8, without the leading zero')
    >>> read_as_meant("off", False, frozenset({"integer"}))[1]
    "'off' is the YAML 1.1 boolean false, not a number"
    >>> read_as_meant("1_000", 1000, frozenset({"integer"})), read_as_meant("0x10", 16, frozenset({"integer"}))
    ((1000, '', ''), (16, '', ''))
    >>> read_as_meant("false", False, frozenset({"number", "string", "boolean"}))
    (False, '', '')
    """
    if "boolean" in expected and isinstance(value, bool):
        return value, "", ""
    if "string" in expected:
        return text, "", ""
    word_boolean = isinstance(value, bool) and text.lower() in _WORD_BOOLEANS
    if not expected & {"integer", "number"}:
        return value, "", ""
    if word_boolean:
        return value, f"{text!r} is the YAML 1.1 boolean {'true' if value else 'false'}, not a number", "write the number you mean"
    if ":" in text:
        return value, f"{text!r} is read by YAML 1.1 as the base-60 (sexagesimal) number {value:g}", "write the number you mean"
    if isinstance(value, int) and _OCTAL.fullmatch(text):
        decimal = int(text.replace("_", ""), 10)
        return (
            value,
            f"{text!r} has a leading zero: YAML 1.1 reads it as the octal number {value}, YAML 1.2 as {decimal}",
            f"write {decimal}, or {value}, without the leading zero",
        )
    return value, "", ""
