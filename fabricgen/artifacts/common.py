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
    lines.extend(_row(row) for row in rows)
    return "\n".join(lines) + "\n"


def _row(row: Sequence[object]) -> str:
    """One table row. Fast path (the cabling table has a row per cable): join the plain texts,
    and escape cell by cell only when the joined line shows a "|" or line break of its own."""
    line = " | ".join(map(str, row))
    if line.count("|") != len(row) - 1 or "\n" in line:
        line = " | ".join(_cell(v) for v in row)
    return f"| {line} |"


@cache
def metres(value: float) -> str:
    """30.0 -> `30`, 2.5 -> `2.5`."""
    return f"{value:g}"
