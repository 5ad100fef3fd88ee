"""Units as engineers write them: `400G`, `150KB`, `30m`. Parsed strictly; the schema's
patterns guarantee the shape, so these functions only convert.

>>> speed_gbps("400G")
400
>>> size_bytes("150KB")
150000
>>> length_m("2.5m")
2.5
"""

from __future__ import annotations

import re

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
