#!/usr/bin/env python3
"""STAND-IN for `fabricgen ib check-partitions FILE` until the InfiniBand module provides it.

Used by the OpenSM deploy test only when the real command is missing. It checks a few things
OpenSM would otherwise silently replace by an open default: every statement ends with `;`,
`name=PKey` heads, PKeys in 0x0001-0x7fff, no duplicate PKeys. Exit 1 with messages on errors.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path


def main(path: str) -> int:
    text = "\n".join(line.split("#", 1)[0] for line in Path(path).read_text().splitlines())
    statements = [s.strip() for s in text.split(";")]
    errors = []
    if statements and statements[-1]:
        errors.append(f"{path}: last statement is not terminated by ';'")
    seen: set[int] = set()
    for statement in (s for s in statements[:-1] if s):
        match = re.match(r"^[\w.-]+\s*=\s*(0x[0-9a-fA-F]+)", statement)
        if not match:
            errors.append(f"{path}: bad partition head: {statement.splitlines()[0]}")
            continue
        pkey = int(match.group(1), 16)
        if not 0x0001 <= pkey <= 0x7FFF:
            errors.append(f"{path}: PKey {match.group(1)} outside 0x0001-0x7fff")
        if pkey in seen:
            errors.append(f"{path}: duplicate PKey {match.group(1)}")
        seen.add(pkey)
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
