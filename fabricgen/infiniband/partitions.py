"""A strict validator for OpenSM's partitions.conf.

OpenSM does not fail on a bad partitions file: on a parse error it logs one line and falls
back to `Default=0x7fff : ALL=full ;`, opening every tenant partition to every port; some typos
(`mtu=5 rate=17`, a missing comma) are even accepted silently. This checker is stricter than
OpenSM's parser (opensm(8), PARTITION CONFIGURATION; `opensm/osm_prtn_config.c`) so such a file
never reaches an SM: tests run it on every rendered file and the playbooks run
`fabricgen ib check-partitions FILE` before installing one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

NAME = re.compile(r"^[A-Za-z0-9_.\-]*$")
NUMBER = re.compile(r"^(0x[0-9A-Fa-f]+|[0-9]+)$")
GUID = re.compile(r"^(0x[0-9A-Fa-f]{1,16}|[0-9]{1,20})$")
MGID = re.compile(r"^[0-9A-Fa-f:]+$")
KEYWORDS = {"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"}
MEMBERSHIP = {"full", "limited", "both"}
MGROUP_FLAGS = {"rate": (2, 22), "mtu": (1, 5), "sl": (0, 15), "scope": (0, 15), "Q_Key": (0, 0xFFFFFFFF), "TClass": (0, 255)}
MGROUP_FLAGS["FlowLabel"] = (0, 0xFFFFF)


@dataclass(frozen=True, slots=True)
class Problem:
    line: int
    column: int
    message: str
    error: bool = True

    def format(self, file: str) -> str:
        return f"{file}:{self.line}:{self.column}: {'error' if self.error else 'warning'}: {self.message}"


@dataclass(frozen=True, slots=True)
class PartitionRule:
    """One parsed definition: name, P_Key (None = auto), flags and members as written."""

    name: str
    pkey: int | None
    flags: tuple[str, ...]
    members: tuple[str, ...]
    line: int


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    offset: int


def _strip_comments(text: str) -> str:
    """Blank out `#...` to the end of each line, keeping every offset."""
    return re.sub(r"#[^\n]*", lambda m: " " * len(m.group(0)), text)


def _split(text: str, start: int, sep: str) -> list[Token]:
    tokens, offset = [], start
    for part in text.split(sep):
        stripped = part.strip()
        tokens.append(Token(stripped, offset + (len(part) - len(part.lstrip()))))
        offset += len(part) + 1
    return tokens


def check_partitions(text: str) -> tuple[list[Problem], list[PartitionRule]]:
    """All problems of a partitions.conf text (line/column 1-based) and the rules it defines."""
    body = _strip_comments(text)
    line_starts = [0] + [m.end() for m in re.finditer("\n", body)]

    def where(offset: int) -> tuple[int, int]:
        lo, hi = 0, len(line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - line_starts[lo] + 1

    problems: list[Problem] = []
    rules: list[PartitionRule] = []

    def bad(offset: int, message: str, error: bool = True) -> None:
        problems.append(Problem(*where(offset), message, error))

    statements = _split(body, 0, ";")
    tail = statements.pop()
    if tail.text:
        bad(tail.offset, f"definition not terminated by ';': {tail.text[:40]!r}")
    seen: dict[int, tuple[str, int]] = {}
    for statement in statements:
        if not statement.text:
            bad(statement.offset, "empty definition (stray ';')")
            continue
        if ":" not in statement.text:
            bad(statement.offset, f"missing ':' between the partition definition and its members: {statement.text[:40]!r}")
            continue
        head_text, _, members_text = statement.text.partition(":")
        head = _split(head_text, statement.offset, ",")
        name, pkey = _header(head[0], bad)
        flags = tuple(t.text for t in head[1:])
        ipoib = False
        for token in head[1:]:
            if token.text == "ipoib":
                ipoib = True
            elif token.text == "indx0":
                pass
            elif token.text.startswith("defmember="):
                if token.text.split("=", 1)[1] not in MEMBERSHIP:
                    bad(token.offset, f"defmember must be full, limited or both: {token.text!r}")
            else:
                _mgroup_flag(token, bad)
        if not ipoib and any(t.text.split("=")[0] in MGROUP_FLAGS for t in head[1:]):
            bad(head[0].offset, f"partition {name!r}: multicast flags without 'ipoib' have no effect", error=False)
        member_start = statement.offset + len(head_text) + 1
        members = _members(members_text, member_start, bad)
        line = where(statement.offset)[0]
        if pkey is not None:
            if pkey in seen and seen[pkey][0] != name:
                bad(
                    statement.offset,
                    f"P_Key 0x{pkey:04x} of {name!r} is also used by {seen[pkey][0]!r} (line {seen[pkey][1]}): OpenSM merges them",
                    error=False,
                )
            seen.setdefault(pkey, (name, line))
        rules.append(PartitionRule(name, pkey, flags, members, line))
    return sorted(problems, key=lambda p: (p.line, p.column)), rules


def _header(token: Token, bad: Callable[..., None]) -> tuple[str, int | None]:
    name, has_key, key = token.text.partition("=")
    name, key = name.strip(), key.strip()
    if " " in name or "\t" in name or "\n" in name:
        bad(token.offset, f"partition name {name!r} contains white space (missing ',' or ';'?)")
    elif not NAME.match(name):
        bad(token.offset, f"partition name {name!r} has characters other than letters, digits, '_', '.', '-'")
    if not has_key:
        return name, None
    if not NUMBER.match(key):
        bad(token.offset, f"P_Key {key!r} of {name!r} is not a number (0x0001-0x7fff)")
        return name, None
    value = int(key, 0)
    if value & 0x7FFF == 0 or value > 0xFFFF:
        bad(token.offset, f"P_Key {key} of {name!r} is out of range (0x0001-0x7fff)")
    return name, value & 0x7FFF


def _mgroup_flag(token: Token, bad: Callable[..., None]) -> None:
    key, has_value, value = token.text.partition("=")
    if any(c.isspace() for c in token.text):
        bad(token.offset, f"{token.text!r}: flags must be separated by ','")
        return
    if key not in MGROUP_FLAGS or not has_value:
        bad(
            token.offset,
            f"unknown partition flag {token.text!r} (ipoib, indx0, defmember=, rate=, mtu=, sl=, scope=, Q_Key=, TClass=, FlowLabel=)",
        )
        return
    low, high = MGROUP_FLAGS[key]
    if not NUMBER.match(value) or not low <= int(value, 0) <= high:
        bad(token.offset, f"{key} must be a number from {low} to {high}: {token.text!r}")


def _members(text: str, start: int, bad: Callable[..., None]) -> tuple[str, ...]:
    if not text.strip():
        return ()
    members = []
    in_mgid = False
    for token in _split(text, start, ","):
        if not token.text:
            bad(token.offset, "empty member (two ',' in a row, or a ',' before ';')")
            continue
        if any(c.isspace() for c in token.text):
            bad(token.offset, f"{' '.join(token.text.split())!r}: members must be separated by ','")
            continue
        if token.text.startswith("mgid="):
            in_mgid = True
            if not MGID.match(token.text[5:]) or not token.text[5:].lower().startswith("ff"):
                bad(token.offset, f"{token.text!r} is not a multicast GID (ff..:...)")
            continue
        if in_mgid and token.text.split("=")[0] in MGROUP_FLAGS:
            _mgroup_flag(token, bad)
            continue
        in_mgid = False
        port, has_kind, kind = token.text.partition("=")
        if has_kind and kind not in MEMBERSHIP:
            bad(token.offset, f"membership of {port} must be full, limited or both, not {kind!r}")
        if port not in KEYWORDS and not GUID.match(port):
            bad(token.offset, f"{port!r} is neither a port GUID (0x + up to 16 hex digits) nor one of {', '.join(sorted(KEYWORDS))}")
        members.append(token.text)
    return tuple(members)
