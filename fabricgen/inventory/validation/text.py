"""No text of the inventory may carry a control character.

Every string can end up in a device config, a file name or a CSV cell: a newline in a
description or a name pattern would start a new config line (`username admin secret ...`), a
carriage return or an escape sequence would hide text on a terminal, and Unicode line and
paragraph separators or bidirectional overrides do the same in editors ("Trojan Source",
CVE-2021-42574). This check runs on the raw document, keys included, before anything is
expanded.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from typing import Any

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.inventory.loader import PathKey, SourceMap

_FORBIDDEN = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
"""C0 and C1 controls and DEL (Unicode category Cc), line and paragraph separators (Zl, Zp), and
the bidirectional formatting characters."""


def describe(character: str) -> str:
    """'U+000A LINE FEED' for the message.

    >>> describe("\\n")
    'U+000A LINE FEED'
    >>> describe("\\u202e")
    'U+202E RIGHT-TO-LEFT OVERRIDE'
    """
    names = {0x0A: "LINE FEED", 0x0D: "CARRIAGE RETURN", 0x09: "TAB", 0x00: "NUL", 0x1B: "ESCAPE"}
    name = names.get(ord(character)) or unicodedata.name(character, "control character")
    return f"U+{ord(character):04X} {name}"


def check_text(data: Any, source: SourceMap) -> list[Diagnostic]:
    """One error per string (value or key) holding a control character."""
    found = []
    for path, text, is_key in _strings(data, ()):
        match = _FORBIDDEN.search(text)
        if match:
            found.append(
                source.diagnostic(
                    path,
                    f"{'key' if is_key else 'text'} contains the control character {describe(match.group())}: it could start a new config line or hide text",
                    hint="write it on one line, without control or bidirectional characters",
                    key=is_key,
                )
            )
    return found


def _strings(value: Any, path: PathKey) -> Iterator[tuple[PathKey, str, bool]]:
    if isinstance(value, str):
        yield path, value, False
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield (*path, key), key, True
            yield from _strings(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, (*path, index))
