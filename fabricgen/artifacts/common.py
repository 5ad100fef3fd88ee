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


def natural_order(*columns: Sequence[str]) -> list[int]:
    """The positions of rows in the order of their columns' natural keys, stably: `sorted(range(n),
    key=lambda i: tuple(natural_key(column[i]) for column in columns))`.

    Each distinct name is keyed once and ranked, and a row's ranks are folded into one int, so
    the sort compares ints: at 5,000 switches the cabling table (200,000 cables) and the NetBox
    interfaces (400,000 rows) otherwise compare tuples of natural keys millions of times.
    Names with equal natural keys (`a01`, `a1`) share a rank, as they tie in the one sort.

    >>> natural_order(["b", "a", "a", "a"], ["x2", "x10", "x9", "x09"])
    [2, 3, 1, 0]
    """
    ranks = _natural_ranks({name for column in columns for name in column})
    width = max(ranks.values(), default=0) + 1
    keys = [0] * (len(columns[0]) if columns else 0)
    for column in columns:
        keys = [key * width + ranks[name] for key, name in zip(keys, column, strict=True)]
    return sorted(range(len(keys)), key=keys.__getitem__)


def _natural_ranks(names: set[str]) -> dict[str, int]:
    """Each name's place among the distinct natural keys of `names`."""
    ranks: dict[str, int] = {}
    rank, previous = -1, None
    for name in sorted(names, key=natural_key):
        key = natural_key(name)
        if key != previous:
            rank, previous = rank + 1, key
        ranks[name] = rank
    return ranks


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """CSV with `\\n` line ends (byte-identical on every OS).

    Rows of plain strings that need no quoting (the NetBox devices and interfaces: a row per
    switch, server and port) are joined directly and checked once on the whole text (`_plain_text`).
    Rows holding a number (hosts.csv) all go through the writer; otherwise a plain row is
    joined on its own and any other row goes through the writer.

    >>> csv_text(("a", "b"), [("x", "y, z"), ("1", 2), ("", "")])
    'a,b\\nx,"y, z"\\n1,2\\n,\\n'
    """
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    rows = rows if isinstance(rows, list) else list(rows)
    try:
        text = _plain_text(rows)
    except TypeError:  # a cell that is not a string (hosts.csv's numbers): the writer takes every row, in C
        writer.writerows(rows)
        return buffer.getvalue()
    if text is not None:
        return buffer.getvalue() + text
    lines: list[str] = []
    for row in rows:
        line = _plain_line(row)
        if line is None:
            buffer.write("".join(lines))
            lines.clear()
            writer.writerow(row)
        else:
            lines.append(line)
    buffer.write("".join(lines))
    return buffer.getvalue()


def _plain_text(rows: list[Sequence[object]]) -> str | None:
    """The CSV lines of `rows` when every cell is a string needing no quotes (and every row has
    two or more: the writer quotes a lone empty cell), else None; TypeError for a cell that is
    not a string. A cell with a `,`, a line break or a `"` shows in the counts of the whole
    text, so no row is looked at twice."""
    if not rows or min(map(len, rows)) < 2:
        return None
    text = "\n".join([",".join(row) for row in rows]) + "\n"  # type: ignore[arg-type]  # a non-string cell raises
    commas = sum(map(len, rows)) - len(rows)
    if text.count(",") != commas or text.count("\n") != len(rows) or '"' in text or "\r" in text:
        return None
    return text


def csv_line(row: Sequence[object]) -> str:
    """One row as `csv_text` writes it, line end included.

    >>> csv_line(("a", "b, c")), csv_line(("a", 1))
    ('a,"b, c"\\n', 'a,1\\n')
    """
    line = _plain_line(row)
    if line is None:
        buffer = io.StringIO()
        csv.writer(buffer, lineterminator="\n").writerow(row)
        line = buffer.getvalue()
    return line


def _plain_line(row: Sequence[object]) -> str | None:
    """The CSV line of `row` when every cell is a string needing no quotes, else None."""
    try:
        line = ",".join(row)  # type: ignore[arg-type]  # a non-string cell raises: the writer takes the row
    except TypeError:
        return None
    if len(row) < 2 or line.count(",") != len(row) - 1 or '"' in line or "\n" in line or "\r" in line:
        return None
    return line + "\n"


def _cell(value: object) -> str:
    text = str(value)
    return text.replace("|", "\\|").replace("\n", " ") if "|" in text or "\n" in text else text


def md_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines.extend(_row(row) for row in rows)
    return "\n".join(lines) + "\n"


def md_line(row: Sequence[object]) -> str:
    """One row as `md_table` writes it, line end included: `md_table(h, rows)` is
    `md_table(h, ()) + "".join(md_line(r) for r in rows)`."""
    return _row(row) + "\n"


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
