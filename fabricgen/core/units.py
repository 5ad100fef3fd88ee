"""Units as engineers write them: `400G`, `150KB`, `30m`. The `normalise_*` functions accept
the usual variants (`400 g`, `100 KB`, `1mb`, `70b`) and refuse what is ambiguous; after them
the schema's patterns guarantee the canonical shape, so the parsers below only convert.

>>> speed_gbps("400G")
400
>>> size_bytes("150KB")
150000
>>> length_m("2.5m")
2.5
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import partial

from fabricgen.core.records import record

SPEED_PATTERN = r"^[1-9][0-9]{0,4}G$"
SIZE_PATTERN = r"^[0-9]{1,9}(B|KB|MB)$"
LENGTH_PATTERN = r"^[0-9]{1,5}(\.[0-9]{1,2})?m$"

_SIZE_FACTORS = {"B": 1, "KB": 1000, "MB": 1000_000}


def speed_gbps(text: str) -> int:
    """`400G` -> 400 (Gbit/s)."""
    return int(text[:-1])


def size_bytes(text: str) -> int:
    """`150KB` -> 150000. KB is 1000 bytes (as NVIDIA programs it), used by every renderer."""
    match = re.fullmatch(r"([0-9]+)(B|KB|MB)", text)
    if match is None:
        raise ValueError(f"not a size: {text!r}")
    return int(match.group(1)) * _SIZE_FACTORS[match.group(2)]


def length_m(text: str) -> float:
    """`30m` -> 30.0 metres."""
    return float(text[:-1])


# Forgiving input: units the way people write them, normalised to the canonical form before
# the schema sees them (so every later stage, and every output, shows the canonical form).
# What could mean two different things is refused with the reason, never guessed.


@record
class UnitTable:
    """How people write one kind of quantity. `refused` is checked first: each entry is the
    spellings that could mean two things and the reason, a template over `text`, `number` and
    `UNIT` (the unit upper-cased). A lower-case spelling matches in any case, one with a capital
    only as written: `GB` (gigabytes) is refused as a speed while `Gb` and `gb` are accepted.
    `accepted` maps a lower-case spelling to the canonical unit; `whole` says the canonical form
    takes whole numbers only (a decimal is left for the schema's pattern to refuse)."""

    accepted: Mapping[str, str]
    refused: tuple[tuple[frozenset[str], str], ...]
    whole: bool = False


SPEED = UnitTable(
    dict.fromkeys(("g", "gb", "gbps", "gb/s", "gbit", "gbit/s", "gbe"), "G"),
    (
        (frozenset({"GB", "gB"}), "{text!r} reads as gigabytes; link speeds are in Gbit/s: write {number}G"),
        (frozenset({"t", "tb", "tbps", "m", "mb", "mbps"}), "{text!r}: speeds are written in Gbit/s, e.g. 400G"),
    ),
    whole=True,
)
SIZE = UnitTable(
    {"b": "B", "kb": "KB", "mb": "MB"},
    (
        (frozenset({"kib", "mib"}), "{text!r} counts 1024s; fabricgen's KB and MB are 1000 and 1000000 bytes, as the switches take them"),
        (frozenset({"Kb", "Mb"}), "{text!r} could be kilobits or kilobytes: write {number}{UNIT} (1 KB = 1000 bytes)"),
    ),
    whole=True,
)
LENGTH = UnitTable(
    dict.fromkeys(("m", "meter", "meters", "metre", "metres"), "m"),
    ((frozenset({"ft", "feet", "foot"}), "{text!r}: lengths are in metres, e.g. 30m"),),
)
COUNT = UnitTable(
    {"k": "K", "m": "M", "b": "B", "t": "T"},  # decimal: thousand, million, billion, trillion
    ((frozenset({"g", "bn", "mm"}), "{text!r} is ambiguous: write thousands, millions, billions, trillions as K, M, B, T (70B)"),),
)

_QUANTITY = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z/]*)\s*")


def normalise(table: UnitTable, text: str) -> tuple[str, str]:
    """(canonical, "") or (text, why it is refused); (text, "") when `text` is not a number
    with a unit the table knows, so the schema's pattern reports it as usual.

    >>> normalise(SPEED, "400 g"), normalise(SPEED, " 400 Gbps "), normalise(SPEED, "400.5G")
    (('400G', ''), ('400G', ''), ('400.5G', ''))
    >>> normalise(SPEED, "400GB")[1]
    "'400GB' reads as gigabytes; link speeds are in Gbit/s: write 400G"
    >>> normalise(SPEED, "1.6T")[1]
    "'1.6T': speeds are written in Gbit/s, e.g. 400G"
    >>> normalise(SIZE, "1mb"), normalise(SIZE, "150kB"), normalise(SIZE, "1.5MB")
    (('1MB', ''), ('150KB', ''), ('1.5MB', ''))
    >>> normalise(SIZE, "100 Kb")[1]
    "'100 Kb' could be kilobits or kilobytes: write 100KB (1 KB = 1000 bytes)"
    >>> normalise(SIZE, "1MiB")[1]
    "'1MiB' counts 1024s; fabricgen's KB and MB are 1000 and 1000000 bytes, as the switches take them"
    >>> normalise(LENGTH, "30 M"), normalise(LENGTH, "2.5 Metres"), normalise(LENGTH, "10 ft")[1]
    (('30m', ''), ('2.5m', ''), "'10 ft': lengths are in metres, e.g. 30m")
    >>> normalise(COUNT, "70b"), normalise(COUNT, "1.5t"), normalise(COUNT, "70bn")[1]
    (('70B', ''), ('1.5T', ''), "'70bn' is ambiguous: write thousands, millions, billions, trillions as K, M, B, T (70B)")
    >>> normalise(COUNT, "seventy"), normalise(COUNT, "70 parsecs")
    (('seventy', ''), ('70 parsecs', ''))
    """
    match = _QUANTITY.fullmatch(text)
    if match is None:
        return text, ""
    number, unit = match.groups()
    for spellings, why in table.refused:
        if unit in spellings or unit.lower() in spellings:
            return text, why.format(text=text, number=number, UNIT=unit.upper())
    canonical = table.accepted.get(unit.lower())
    if canonical is None or (table.whole and "." in number):
        return text, ""
    return f"{number}{canonical}", ""


normalise_speed = partial(normalise, SPEED)
normalise_size = partial(normalise, SIZE)
normalise_length = partial(normalise, LENGTH)
normalise_count = partial(normalise, COUNT)
