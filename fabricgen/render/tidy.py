"""The text rules every rendered file follows: no trailing whitespace, no runs of blank lines,
one final newline (`tidy`); and what a template bug leaves behind (`leftovers`).
"""

from __future__ import annotations

import re

_UNTIDY = re.compile(r"[^\S\n]\n|\n\n\n|[^\S\n]\Z")
_ASCII_RARE_BLANKS = "\t\r\x0b\x0c\x1c\x1d\x1e\x1f"
"""Every ASCII character str.rstrip() strips besides the space and the line end."""


def tidy(text: str) -> str:
    """Strip trailing whitespace, collapse blank-line runs, end with exactly one newline.

    Text that is tidy already (most configs) is returned as it is
    after one regular-expression scan instead of being split into lines."""
    if _is_tidy(text):
        return text
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _is_tidy(text: str) -> bool:
    if not text.endswith("\n") or text.endswith("\n\n") or text.startswith("\n") or "\n\n\n" in text:
        return False
    if text.isascii() and not any(blank in text for blank in _ASCII_RARE_BLANKS):
        # Single characters are found with memchr; the rare blanks are then absent, so only a
        # space can end a line: one two-character scan instead of one per blank character.
        return " \n" not in text
    return not _UNTIDY.search(text)


_LEFTOVER = re.compile(r"\{\{|\{%|\bNone\b")


def leftovers(text: str) -> list[str]:
    """Lines with unrendered Jinja or a Python None: a template bug, caught by tests."""
    return [line for line in text.split("\n") if _LEFTOVER.search(line)]
