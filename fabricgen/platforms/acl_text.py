"""IPv4 access-list rules as EOS and NX-OS write them, read to judge one question: would this
ACL let a new TCP/UDP session from an address reach a port? (The lockout pre-flight,
push/reachability.py, asks it of the staged control-plane ACL.)

The reader fails closed: a rule it cannot read is kept as unreadable, and an evaluation that
reaches one before a decisive rule answers "cannot tell" rather than guessing. Grammar: Arista
EOS User Manual, "Access Control Lists" (`[seq] permit|deny <proto> <src> [<ports>] <dst>
[<ports>] [tracked] [ttl eq N] [log]`); Cisco Nexus 9000 NX-OS Security Configuration Guide,
"Configuring IP ACLs" (the same shape, `established` for TCP).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from ipaddress import IPv4Address, IPv4Network

from fabricgen.platforms.sections import split_sections

PORT_NAMES = {
    "ssh": 22,
    "telnet": 23,
    "www": 80,
    "http": 80,
    "https": 443,
    "bgp": 179,
    "snmp": 161,
    "ntp": 123,
    "domain": 53,
    "bfd": 3784,
    "bfd-echo": 3785,
    "multihop-bfd": 4784,
    "gnmi": 6030,
    "netconf-ssh": 830,
}
"""Port names both OSes print (EOS prints well-known ports by name); any other name is unreadable."""

_FLAGS = {"log", "tracked", "established"}
"""Trailing words the reader understands; `tracked` / `established` match no new session."""


@dataclass(frozen=True, slots=True)
class AclRule:
    """One rule; `None` for a field that matches anything."""

    text: str
    action: str = ""
    protocol: str = ""
    source: IPv4Network | None = None
    source_ports: frozenset[int] | None = None
    ports: frozenset[int] | None = None
    sessions_only: bool = False
    """`tracked` / `established`: only packets of sessions already open."""
    readable: bool = True


@dataclass(frozen=True, slots=True)
class ControlPlaneFilter:
    """A config's control-plane (or vty) ACLs: `applied` VRF -> ACL name (`*`: every VRF)."""

    acls: Mapping[str, tuple[AclRule, ...]] = field(default_factory=dict)
    applied: Mapping[str, str] = field(default_factory=dict)


def read_filter(text: str, head: str, applying: re.Pattern[str]) -> ControlPlaneFilter:
    """The `ip access-list` sections of a config and where the section `head` applies them:
    `applying` matches a line under it, group `acl` the ACL's name, group `vrf` its VRF
    (absent: the default VRF, or every VRF when the pattern has no such group).

    >>> f = read_filter("ip access-list CP\\n   10 permit tcp any any eq ssh\\nline vty\\n  access-class CP in\\n",
    ...                 "line vty", re.compile(r"^access-class (?P<acl>\\S+) in$"))
    >>> dict(f.applied), len(f.acls["CP"])
    ({'*': 'CP'}, 1)
    """
    acls: dict[str, tuple[AclRule, ...]] = {}
    applied: dict[str, str] = {}
    for section in split_sections(text):
        words = section.head.split()
        if words[:2] == ["ip", "access-list"] and len(words) == 3:
            acls[words[2]] = read_rules(section.children)
        elif section.head == head:
            for line in section.children:
                match = applying.match(line.strip())
                if match:
                    every = "vrf" not in applying.groupindex
                    applied["*" if every else (match.group("vrf") or "default")] = match.group("acl")
    return ControlPlaneFilter(acls, applied)


def read_rules(lines: tuple[str, ...]) -> tuple[AclRule, ...]:
    """The rules under an `ip access-list` head; remarks and counter settings skipped.

    >>> [r.readable for r in read_rules(("   10 permit tcp 10.0.0.0/8 any eq ssh", "   remark x", "   20 permit ip any any frob"))]
    [True, False]
    """
    rules = []
    for line in lines:
        words = line.split()
        if words and words[0].isdigit():
            words = words[1:]
        if not words or words[0] in {"remark", "counters", "statistics"}:
            continue
        rules.append(_rule(" ".join(words), words))
    return tuple(rules)


def _rule(text: str, words: list[str]) -> AclRule:
    unreadable = AclRule(text, readable=False)
    if len(words) < 3 or words[0] not in {"permit", "deny"}:
        return unreadable
    action, protocol, rest = words[0], words[1], words[2:]
    source, rest = _address(rest)
    source_ports, rest = _ports(rest)
    destination, rest = _address(rest)
    ports, rest = _ports(rest)
    if source is False or destination is False or source_ports is False or ports is False:
        return unreadable
    flags, rest = _flags(rest)
    if rest:
        return unreadable
    assert not isinstance(source, bool) and not isinstance(source_ports, bool) and not isinstance(ports, bool)
    return AclRule(text, action, protocol, source, source_ports, ports, bool(flags & {"tracked", "established"}))


def _address(words: list[str]) -> tuple[IPv4Network | bool | None, list[str]]:
    """`any`, `host A`, `A/len`: the network (None: any), or False when unreadable."""
    if not words:
        return False, words
    try:
        if words[0] == "any":
            return None, words[1:]
        if words[0] == "host" and len(words) > 1:
            return IPv4Network(f"{words[1]}/32"), words[2:]
        return IPv4Network(words[0], strict=False), words[1:]
    except ValueError:
        return False, words


def _ports(words: list[str]) -> tuple[frozenset[int] | bool | None, list[str]]:
    """`eq p...` or `range a b` (None: no port condition), or False when unreadable."""
    if not words or words[0] not in {"eq", "range", "neq", "gt", "lt"}:
        return None, words
    if words[0] == "range" and len(words) >= 3:
        low, high = _port(words[1]), _port(words[2])
        return (frozenset(range(low, high + 1)) if low and high else False), words[3:]
    if words[0] != "eq":
        return False, words
    found: list[int] = []
    rest = words[1:]
    while rest and _port(rest[0]):
        found.append(_port(rest[0]))
        rest = rest[1:]
    return (frozenset(found) if found else False), rest


def _port(word: str) -> int:
    return int(word) if word.isdigit() else PORT_NAMES.get(word, 0)


def _flags(words: list[str]) -> tuple[set[str], list[str]]:
    flags: set[str] = set()
    while words:
        if words[0] in _FLAGS:
            flags.add(words[0])
            words = words[1:]
        elif words[0] == "ttl" and len(words) >= 3 and words[1] == "eq" and words[2].isdigit():
            words = words[3:]
        else:
            break
    return flags, words


def verdict(rules: tuple[AclRule, ...], address: IPv4Address, protocol: str, port: int) -> tuple[bool | None, str]:
    """(permitted, the deciding rule) for a new session from `address` to `port`, first match
    wins, implicit deny at the end; (None, rule) when a rule that may decide cannot be judged.

    >>> rules = read_rules(("10 permit ip any any tracked", "20 permit tcp 192.168.0.0/24 any eq ssh https"))
    >>> verdict(rules, IPv4Address("192.168.0.9"), "tcp", 443)
    (True, 'permit tcp 192.168.0.0/24 any eq ssh https')
    >>> verdict(rules, IPv4Address("10.0.0.9"), "tcp", 22)
    (False, 'implicit deny')
    """
    for rule in rules:
        if not rule.readable:
            return None, rule.text
        if rule.protocol not in {"ip", protocol} or (rule.source is not None and address not in rule.source):
            continue
        if rule.sessions_only or (rule.ports is not None and port not in rule.ports):
            continue
        if rule.source_ports is not None:
            if rule.action == "deny":
                return None, rule.text  # the controller's source port is ephemeral: it may match
            continue
        return rule.action == "permit", rule.text
    return False, "implicit deny"
