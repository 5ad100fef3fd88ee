"""Which BGP sessions of a switch a change makes two-ended: its own config changes the session's
identity (the neighbor address, the remote AS, the local AS), so the far end must change too
before the session can come back.

Only those sessions may drop during a canary's post-check while the far end has not landed its
half yet. Every other session that was Established must stay Established, even when the far end
also changes in this run (an ECN or QoS change touches every switch, but no session needs it).
The answer comes from this switch's running and staged configs alone: no look at the rest of
the fabric. One parser per platform (`eos_*`, `nxos_*`), each a plain function of config text.
"""

from __future__ import annotations

import re

from fabricgen.platforms.sections import Section, split_sections

Identity = tuple[str, str]
"""(local AS, remote AS) of one neighbor address."""

_ADDRESS = re.compile(r"^[0-9a-fA-F:.]+$")


def _bgp_section(text: str) -> Section | None:
    return next((s for s in split_sections(text) if s.head.startswith("router bgp ")), None)


def eos_bgp_identity(text: str) -> dict[str, Identity]:
    """EOS `router bgp`: {neighbor address: (local AS, remote AS)}, a peer group's remote-as
    applied to its members.

    >>> eos_bgp_identity("router bgp 65101\\n   neighbor S peer group\\n   neighbor S remote-as 65000\\n"
    ...                  "   neighbor 10.0.0.0 peer group S\\n   neighbor 10.0.0.2 remote-as 65001\\n")
    {'10.0.0.0': ('65101', '65000'), '10.0.0.2': ('65101', '65001')}
    """
    section = _bgp_section(text)
    if section is None:
        return {}
    local = section.head.split()[2]
    remote: dict[str, str] = {}
    group_of: dict[str, str] = {}
    for line in section.children:
        words = line.split()
        if len(words) >= 4 and words[0] == "neighbor" and words[2] == "remote-as":
            remote[words[1]] = words[3]
        elif len(words) == 5 and words[0] == "neighbor" and words[2:4] == ["peer", "group"]:
            group_of[words[1]] = words[4]
        elif len(words) == 4 and words[0] == "neighbor" and words[2] == "peer-group":
            group_of[words[1]] = words[3]
    addresses = {name for name in (*remote, *group_of) if _ADDRESS.match(name)}
    return {a: (local, remote.get(a) or remote.get(group_of.get(a, ""), "")) for a in sorted(addresses)}


def nxos_bgp_identity(text: str) -> dict[str, Identity]:
    """NX-OS `router bgp`: {neighbor address: (local AS, remote AS)}, a `template peer`'s
    remote-as applied to the neighbors that inherit it.

    >>> nxos_bgp_identity("router bgp 65201\\n  template peer S\\n    remote-as 65200\\n"
    ...                   "  neighbor 10.41.0.0\\n    inherit peer S\\n  neighbor 10.41.0.2 remote-as 65009\\n")
    {'10.41.0.0': ('65201', '65200'), '10.41.0.2': ('65201', '65009')}
    """
    section = _bgp_section(text)
    if section is None:
        return {}
    local = section.head.split()[2]
    level = min((len(line) - len(line.lstrip()) for line in section.children), default=0)
    templates: dict[str, str] = {}
    remote: dict[str, str] = {}
    inherits: dict[str, str] = {}
    block: tuple[str, str] = ("", "")
    for line in section.children:
        words = line.split()
        if len(line) - len(line.lstrip()) == level:
            block = ("", "")
            if words[:2] == ["template", "peer"] and len(words) > 2:
                block = ("template", words[2])
            elif words[0] == "neighbor" and len(words) > 1:
                block = ("neighbor", words[1].split("/")[0])
                if len(words) > 3 and words[2] == "remote-as":
                    remote[block[1]] = words[3]
        elif words[:1] == ["remote-as"] and len(words) > 1 and block[0]:
            (templates if block[0] == "template" else remote)[block[1]] = words[1]
        elif words[:2] == ["inherit", "peer"] and len(words) > 2 and block[0] == "neighbor":
            inherits[block[1]] = words[2]
    addresses = {name for name in (*remote, *inherits) if _ADDRESS.match(name)}
    return {a: (local, remote.get(a) or templates.get(inherits.get(a, ""), "")) for a in sorted(addresses)}


_PARSERS = {"eos": eos_bgp_identity, "nxos": nxos_bgp_identity}


def two_ended_sessions(staged: str, running: str, platform: str) -> list[str]:
    """Neighbor addresses configured on the device whose identity the staged config changes (the
    remote AS or the local AS): the sessions that may drop until the far end's half lands. A
    neighbor the staged config drops is not among them: whether its session may go is the plan's
    call (`baseline.bgp_problems`), so a staged config without `router bgp` excuses nothing.

    `platform` is the fabricgen platform or Ansible network OS (`arista.eos.eos`).

    >>> run = "router bgp 65000\\n   neighbor 10.0.0.1 remote-as 65101\\n   neighbor 10.0.0.3 remote-as 65102\\n"
    >>> two_ended_sessions(run.replace("65102", "65109"), run, "eos")
    ['10.0.0.3']
    >>> two_ended_sessions(run + "qos map dscp 26 to traffic-class 3\\n", run, "eos")
    []
    """
    parse = _PARSERS[_platform(platform)]
    before, after = parse(running), parse(staged)
    return sorted(address for address, identity in before.items() if after.get(address, identity) != identity)


def _platform(name: str) -> str:
    """`eos` / `nxos` from either spelling (the playbooks pass ansible_network_os)."""
    short = str(name).rsplit(".", 1)[-1]
    if short not in _PARSERS:
        raise KeyError(f"no BGP parser for platform {name!r}")
    return short
