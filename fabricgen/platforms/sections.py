"""A switch config cut into top-level sections: a line at column 0 and the indented lines under it.

Both EOS and NX-OS print `show running-config` this way; `!` comment lines and `end` are not
config. Sections keep their order and their children's indentation, so a staged file reads like
the device's own output.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Section:
    """One top-level line and its indented children, as written (children keep indentation)."""

    head: str
    children: tuple[str, ...] = ()

    def text(self) -> str:
        return "".join(f"{line}\n" for line in (self.head, *self.children))


def _is_comment(line: str) -> bool:
    stripped = line.strip()
    return not stripped or stripped.startswith("!") or stripped == "end"


def split_sections(text: str) -> list[Section]:
    """Config text -> sections, comments and blank lines dropped.

    >>> [s.head for s in split_sections("! c\\nhostname a\\ninterface Eth1\\n   mtu 9214\\n!\\nend\\n")]
    ['hostname a', 'interface Eth1']
    >>> split_sections("interface Eth1\\n   mtu 9214\\n")[0].children
    ('   mtu 9214',)
    """
    sections: list[Section] = []
    head: str | None = None
    children: list[str] = []
    for raw in str(text).splitlines():
        line = raw.rstrip()
        if _is_comment(line):
            continue
        if line[0] not in " \t":
            if head is not None:
                sections.append(Section(head, tuple(children)))
            head, children = line, []
        elif head is not None:
            children.append(line)
    if head is not None:
        sections.append(Section(head, tuple(children)))
    return sections


def join_sections(sections: list[Section]) -> str:
    """Sections -> config text."""
    return "".join(section.text() for section in sections)
