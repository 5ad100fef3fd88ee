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

import dataclasses
import re
from collections.abc import Mapping
from decimal import Decimal
from functools import partial

from fabricgen.core.records import record

SPEED_PATTERN = r"^[1-9][0-9]{0,4}G$"
SIZE_PATTERN = r"^[0-9]{1,9}(B|KB|MB)$"
LENGTH_PATTERN = r"^[0-9]{1,5}(\.[0-9]{1,2})?m$"
RATIO_PATTERN = r"^[0-9]{1,5}(\.[0-9]{1,4})?(:[0-9]{1,5}(\.[0-9]{1,4})?)?$"
"""A ratio as text: `3:1`, `1.5:1`, or a bare number `1.5` (meaning 1.5:1)."""

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


def format_size(size: int) -> str:
    """The canonical spelling of a byte count, as inventories write it: the largest of B, KB
    and MB that divides it exactly, so a diff or message shows what the user wrote.

    >>> format_size(150000), format_size(3000000), format_size(1500), format_size(999), format_size(0)
    ('150KB', '3MB', '1500B', '999B', '0B')
    """
    for unit in ("MB", "KB"):
        if size and size % _SIZE_FACTORS[unit] == 0:
            return f"{size // _SIZE_FACTORS[unit]}{unit}"
    return f"{size}B"


def format_length(metres: float) -> str:
    """The canonical spelling of a length: `30m`, `2.5m`.

    >>> format_length(30.0), format_length(2.5), format_length(500)
    ('30m', '2.5m', '500m')
    """
    return f"{_plain_decimal(Decimal(repr(float(metres))))}m"


def _plain_decimal(number: Decimal) -> str:
    """`Decimal('500.0')` -> '500': fixed point, no trailing zeros, never an exponent."""
    text = format(number, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def ratio_value(text: str) -> float:
    """`3:1` -> 3.0, `1:2` -> 0.5, `1.5` -> 1.5 (a bare number is N:1). Raises ValueError
    when the second number is 0 or the text is no ratio.

    >>> ratio_value("3:1"), ratio_value("1:2"), ratio_value("1.5"), ratio_value(" 4 : 1 ")
    (3.0, 0.5, 1.5, 4.0)
    """
    first, colon, second = text.replace(" ", "").partition(":")
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)?", first) or (colon and not re.fullmatch(r"[0-9]+(\.[0-9]+)?", second)):
        raise ValueError(f"{text!r} is not a ratio: write it like 3:1 or 1.5")
    down, up = float(first), float(second) if colon else 1.0
    if up == 0:
        raise ValueError(f"{text!r} divides by 0: write it like 3:1 or 1.5")
    return down / up


def format_ratio(ratio: float) -> str:
    """The canonical spelling of a downlink:uplink ratio, N:1 with at most two decimals, as
    every output shows it (`oversubscription.max_ratio: 3:1` and `1.5` both read back as this).

    >>> format_ratio(3.0), format_ratio(1.0), format_ratio(0.5), format_ratio(1 / 3), format_ratio(2.125)
    ('3:1', '1:1', '0.5:1', '0.33:1', '2.12:1')
    """
    return f"{_plain_decimal(Decimal(f'{ratio:.2f}'))}:1"


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
    takes whole numbers only (a decimal is left for the schema's pattern to refuse); `scale`
    converts a multiple to the canonical unit."""

    accepted: Mapping[str, str]
    refused: tuple[tuple[frozenset[str], str], ...]
    whole: bool = False
    scale: Mapping[str, tuple[str, int]] = dataclasses.field(default_factory=dict)
    """Units written in a multiple of the canonical one: `km` -> (`m`, 1000), so `0.5km` is `500m`."""


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
    dict.fromkeys(("m", "meter", "meters", "metre", "metres"), "m")
    | dict.fromkeys(("km", "kilometer", "kilometers", "kilometre", "kilometres"), "km"),
    ((frozenset({"ft", "feet", "foot", "mi", "mile", "miles"}), "{text!r}: lengths are in metres or kilometres, e.g. 30m or 2km"),),
    scale={"km": ("m", 1000)},
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
    (('30m', ''), ('2.5m', ''), "'10 ft': lengths are in metres or kilometres, e.g. 30m or 2km")
    >>> normalise(LENGTH, "0.5km"), normalise(LENGTH, "2 KM"), normalise(LENGTH, "1.25km")
    (('500m', ''), ('2000m', ''), ('1250m', ''))
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
    if canonical is not None and canonical in table.scale:
        canonical, factor = table.scale[canonical]
        number = _plain_decimal(Decimal(number) * factor)
    if canonical is None or (table.whole and "." in number):
        return text, ""
    return f"{number}{canonical}", ""


normalise_speed = partial(normalise, SPEED)
normalise_size = partial(normalise, SIZE)
normalise_length = partial(normalise, LENGTH)
normalise_count = partial(normalise, COUNT)


def normalise_ratio(text: str) -> tuple[float | str, str]:
    """A ratio written as text (`3:1`, `"1.5"`) -> (its value, ""), or (text, why) when it
    has the shape of a ratio but no value (`3:0`); other text is left for the schema.

    >>> normalise_ratio("3:1"), normalise_ratio("1.5"), normalise_ratio("3:0"), normalise_ratio("three")
    ((3.0, ''), (1.5, ''), ('3:0', "'3:0' divides by 0: write it like 3:1 or 1.5"), ('three', ''))
    """
    if re.fullmatch(RATIO_PATTERN, text.replace(" ", "")) is None:
        return text, ""
    try:
        return ratio_value(text), ""
    except ValueError as exc:
        return text, str(exc)
