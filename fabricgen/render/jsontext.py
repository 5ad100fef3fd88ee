"""JSON files written by templates (a SONiC `config_db.json`), in the form the device writes.

A template writes JSON the easy way: every member followed by a comma, sections present or not.
`tidy_json` drops a comma that ends a line before a closing bracket, parses the text (a
template bug is a ValueError here, not a file a switch refuses) and prints it indented by four
as `sonic-cfggen --print-data` (`config save`) does, every key in natural order (Ethernet8
before Ethernet16, as SONiC's `sort_data` orders a table with natsort), so the file is the same
on every run and a diff shows only what changed.
"""

from __future__ import annotations

import json
import re
from typing import Any

_TRAILING_COMMA = re.compile(r",(\s*\n\s*[}\]])")
"""A comma, a line end, then a closing bracket: never inside a JSON string (no raw line ends)."""
_DIGITS = re.compile(r"([0-9]+)")


def _natural(key: str) -> list[str | int]:
    """Sort key: digit runs compared as numbers ("Ethernet8" before "Ethernet16").

    >>> sorted(["Ethernet16", "Ethernet8", "Ethernet8|3", "Ethernet8|10"], key=_natural)
    ['Ethernet8', 'Ethernet8|3', 'Ethernet8|10', 'Ethernet16']
    """
    return [int(part) if index % 2 else part for index, part in enumerate(_DIGITS.split(key))]


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _ordered(value[key]) for key in sorted(value, key=_natural)}
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value


def tidy_json(text: str) -> str:
    """The template's JSON text, trailing commas dropped, keys in natural order, indented by four.

    >>> print(tidy_json('{"b": {"y": "1",\\n},\\n"a": [1,\\n],\\n}'), end="")
    {
        "a": [
            1
        ],
        "b": {
            "y": "1"
        }
    }
    """
    return json.dumps(_ordered(json.loads(_TRAILING_COMMA.sub(r"\1", text))), indent=4, ensure_ascii=False) + "\n"
