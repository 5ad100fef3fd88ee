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

_NUMBER = r"\s*([0-9]+(?:\.[0-9]+)?)\s*"
_SPEED_UNITS = {"g", "gb", "gbps", "gb/s", "gbit", "gbit/s", "gbe"}
_LENGTH_UNITS = {"m", "meter", "meters", "metre", "metres"}


def _split(text: str) -> tuple[str, str] | None:
    match = re.fullmatch(_NUMBER + r"([A-Za-z/]*)\s*", text)
    return (match.group(1), match.group(2)) if match else None


def normalise_speed(text: str) -> tuple[str, str]:
    """(canonical, "") or (text, why it is refused). `400g`, `400 G`, `400Gbps` -> `400G`.

    >>> normalise_speed("400 g")
    ('400G', '')
    >>> normalise_speed("400GB")[1]
    "'400GB' reads as gigabytes; link speeds are in Gbit/s: write 400G"
    """
    parts = _split(text)
    if parts is None:
        return text, ""
    number, unit = parts
    if unit in ("GB", "gB"):
        return text, f"{text!r} reads as gigabytes; link speeds are in Gbit/s: write {number}G"
    if unit.lower() in _SPEED_UNITS and "." not in number:
        return f"{number}G", ""
    if unit.lower() in ("t", "tb", "tbps", "m", "mb", "mbps"):
        return text, f"{text!r}: speeds are written in Gbit/s, e.g. 400G"
    return text, ""


def normalise_size(text: str) -> tuple[str, str]:
    """(canonical, "") or (text, why it is refused). `100 KB`, `1mb`, `150kB` -> `100KB`, `1MB`,
    `150KB`; `Kb`/`Mb` (kilo-/megabits) and `KiB`/`MiB` (1024) are refused.

    >>> normalise_size("1mb")
    ('1MB', '')
    >>> normalise_size("100 Kb")[1]
    "'100 Kb' could be kilobits or kilobytes: write 100KB (1 KB = 1000 bytes)"
    """
    parts = _split(text)
    if parts is None:
        return text, ""
    number, unit = parts
    if unit.lower() in ("kib", "mib"):
        return text, f"{text!r} counts 1024s; fabricgen's KB and MB are 1000 and 1000000 bytes, as the switches take them"
    if unit in ("Kb", "Mb"):
        return text, f"{text!r} could be kilobits or kilobytes: write {number}{unit.upper()} (1 KB = 1000 bytes)"
    if unit.lower() in ("b", "kb", "mb") and "." not in number:
        return f"{number}{unit.upper()}", ""
    return text, ""


def normalise_length(text: str) -> tuple[str, str]:
    """`30 m`, `2.5 metres` -> `30m`, `2.5m`; feet are refused.

    >>> normalise_length("30 M")
    ('30m', '')
    """
    parts = _split(text)
    if parts is None:
        return text, ""
    number, unit = parts
    if unit.lower() in _LENGTH_UNITS:
        return f"{number}m", ""
    if unit.lower() in ("ft", "feet", "foot"):
        return text, f"{text!r}: lengths are in metres, e.g. 30m"
    return text, ""


def normalise_count(text: str) -> tuple[str, str]:
    """`70b`, `4 m`, `1.5t` -> `70B`, `4M`, `1.5T` (decimal: thousand, million, billion, trillion).

    >>> normalise_count("70b")
    ('70B', '')
    """
    parts = _split(text)
    if parts is None:
        return text, ""
    number, unit = parts
    if unit.lower() in ("k", "m", "b", "t"):
        return f"{number}{unit.upper()}", ""
    if unit.lower() in ("g", "bn", "mm"):
        return text, f"{text!r} is ambiguous: write thousands, millions, billions, trillions as K, M, B, T (70B)"
    return text, ""
