"""Which sections of a switch config fabricgen owns, which it never touches, which lines are
the platform's defaults, and which values are secrets: `ownership.yml` in each platform's folder
(fabricgen/platforms/<os>/). The push, `diff --running` and the drift check all read it, so they agree on what a
change may touch.

Platforms are looked up by fabricgen platform name (the folder's) or by Ansible network OS (the
platform's `facts.ansible_network_os`), so the playbooks pass what they already know. Examples
with each platform's table: tests/test_push_examples.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from fabricgen import platforms as registry
from fabricgen.core.catalog import platforms
from fabricgen.platforms.sections import Section, split_sections

REDACTED = "<redacted>"


@dataclass(frozen=True, slots=True)
class ApiNeed:
    """What one Ansible connection plugin needs in the config (see `api:` in a platform's ownership.yml)."""

    section: str
    required: bool = False
    forbidden: bool = False
    lines: tuple[str, ...] = ()
    not_lines: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Ownership:
    platform: str
    owned: tuple[re.Pattern[str], ...]
    never: tuple[re.Pattern[str], ...]
    defaults: tuple[re.Pattern[str], ...]
    secrets: tuple[re.Pattern[str], ...]
    login_user: str
    login_role: re.Pattern[str]
    login_privilege: re.Pattern[str]
    api: dict[str, tuple[ApiNeed, ...]]
    owned_lines: tuple[tuple[re.Pattern[str], tuple[re.Pattern[str], ...]], ...] = ()
    """(section regex, line regexes): fabricgen's lines inside a never-touched section."""

    def owned_children(self, section: Section) -> tuple[str, ...]:
        """The lines of a never-touched section that fabricgen owns (`owned_lines`); none for
        any other section."""
        for head, lines in self.owned_lines:
            if head.search(section.head):
                return tuple(child for child in section.children if any(p.search(child.strip()) for p in lines))
        return ()

    def has_owned_lines(self, section: Section) -> bool:
        """Whether fabricgen owns lines inside this (never-touched) section."""
        return any(head.search(section.head) for head, _ in self.owned_lines)

    def is_owned(self, section: Section) -> bool:
        return any(p.search(section.head) for p in self.owned) and not self.is_never(section)

    def is_never(self, section: Section) -> bool:
        return any(p.search(section.head) for p in self.never)

    def never_key(self, section: Section) -> str:
        """The identity of a never-touched section: the pattern's match (`username admin`)."""
        for pattern in self.never:
            match = pattern.search(section.head)
            if match:
                return match.group(0)
        return section.head

    def is_default(self, line: str) -> bool:
        stripped = line.strip()
        return any(p.search(stripped) for p in self.defaults)

    def user_pattern(self, user: str) -> re.Pattern[str]:
        return re.compile(self.login_user.replace("{user}", re.escape(user)))


def _compile(patterns: list[str]) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p) for p in patterns)


def _api(entry: dict[str, list[dict[str, Any]]]) -> dict[str, tuple[ApiNeed, ...]]:
    return {
        connection: tuple(
            ApiNeed(
                section=str(need["section"]),
                required=bool(need.get("required", False)),
                forbidden=bool(need.get("forbidden", False)),
                lines=tuple(need.get("lines", ())),
                not_lines=tuple(need.get("not_lines", ())),
            )
            for need in needs
        )
        for connection, needs in entry.items()
    }


@cache
def _table() -> dict[str, Ownership]:
    data: dict[str, Any] = registry.ownership_tables()
    return {
        name: Ownership(
            platform=name,
            owned=_compile(entry["owned"]),
            never=_compile(entry["never"]),
            defaults=_compile(entry["defaults"]),
            secrets=_compile(entry["secrets"]),
            login_user=str(entry["login"]["user"]),
            login_role=re.compile(entry["login"]["role"]),
            login_privilege=re.compile(entry["login"]["privilege"]),
            api=_api(entry["api"]),
            owned_lines=tuple((re.compile(head), _compile(lines)) for head, lines in (entry.get("owned_lines") or {}).items()),
        )
        for name, entry in sorted(data.items())
    }


def managed_platforms() -> list[str]:
    return sorted(_table())


def ownership(platform: str) -> Ownership:
    """By fabricgen platform name or Ansible network OS (`facts.ansible_network_os`)."""
    table = _table()
    if platform in table:
        return table[platform]
    for name, facts in platforms().items():
        if facts.ansible_network_os == platform and name in table:
            return table[name]
    raise KeyError(f"no ownership data for platform {platform!r} (fabricgen/platforms/<os>/ownership.yml)")


def normalised(owner: Ownership, section: Section) -> Section:
    """The section without default lines: `no shutdown`, lines the platform always displays."""
    children = tuple(line for line in section.children if not owner.is_default(line))
    return Section(section.head, children)


def owned_sections(owner: Ownership, text: str) -> list[Section]:
    """Owned sections of a config, defaults dropped; a bare top-level default line disappears.
    A never-touched section with owned lines counts with those lines only (none: not at all)."""
    kept = []
    for section in split_sections(text):
        if owner.is_never(section):
            lines = owner.owned_children(section)
            if lines:
                kept.append(Section(section.head, lines))
            continue
        if not owner.is_owned(section):
            continue
        section = normalised(owner, section)
        if not section.children and owner.is_default(section.head):
            continue
        kept.append(section)
    return kept


def owned_text(platform: str, text: str) -> str:
    """Only what fabricgen manages, defaults dropped: what remediation and the drift check compare."""
    owner = ownership(platform)
    return "".join(section.text() for section in owned_sections(owner, text))


def redact(platform: str, text: str) -> str:
    """Every secret value replaced by `<redacted>` (password hashes, keys, communities)."""
    owner = ownership(platform)
    lines = []
    for line in str(text).splitlines(keepends=True):
        for pattern in owner.secrets:
            line = _redact_line(pattern, line)
        lines.append(line)
    return "".join(lines)


def _redact_line(pattern: re.Pattern[str], line: str) -> str:
    body, newline = (line[:-1], "\n") if line.endswith("\n") else (line, "")
    match = pattern.search(body)
    while match and match.group(1) != REDACTED:
        body = body[: match.start(1)] + REDACTED + body[match.end(1) :]
        match = pattern.search(body, match.start(1) + len(REDACTED))
    return body + newline
