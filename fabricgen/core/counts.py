"""Counts as model cards write them: `70B` parameters, `4M` tokens. Kept free of NumPy so the
command line can check flags without loading the analysis.

>>> parse_count("70B")
70000000000.0
>>> parse_count("4M")
4000000.0
"""

from __future__ import annotations

import re

COUNT_PATTERN = r"^[0-9]{1,6}(\.[0-9]{1,3})?[KMBT]?$"
_FACTORS = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def parse_count(text: str) -> float:
    """`70B` -> 7e10, `4M` -> 4e6, `1000` -> 1000.0 (decimal suffixes)."""
    body = text.strip()
    if re.fullmatch(COUNT_PATTERN, body) is None:
        raise ValueError(f"{text!r} is not a count like 70B or 4M")
    suffix = body[-1] if body[-1] in _FACTORS else ""
    return float(body[: len(body) - len(suffix)]) * _FACTORS[suffix]
