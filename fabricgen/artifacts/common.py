"""Small formatting helpers shared by the artifact producers (CSV, Markdown tables, sorting)."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from functools import cache

_DIGITS = re.compile(r"(\d+)")


@cache
def natural_key(text: str) -> tuple[tuple[int, str], ...]:
    """`Ethernet2/1` before `Ethernet10/1`: digit runs compare as numbers."""
    return tuple((int(part), "") if part.isdigit() else (-1, part) for part in _DIGITS.split(text) if part)


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV with `\\n` line ends (byte-identical on every OS)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def _cell(value: object) -> str:
    text = str(value)
    return text.replace("|", "\\|").replace("\n", " ") if "|" in text or "\n" in text else text


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines.extend("| " + " | ".join(_cell(v) for v in row) + " |" for row in rows)
    return "\n".join(lines) + "\n"


@cache
def metres(value: float) -> str:
    """30.0 -> `30`, 2.5 -> `2.5`."""
    return f"{value:g}"
