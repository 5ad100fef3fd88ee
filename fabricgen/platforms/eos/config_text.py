"""Arista EOS: what the push reads from config text (running or staged), as plain facts."""

from __future__ import annotations

import re

from fabricgen.platforms.driver import NEIGHBOR_ADDRESS, Management, bgp_section
from fabricgen.platforms.sections import Section, split_sections


def _vrfs_enabled(section: Section | None, default_on: bool) -> frozenset[str]:
    """`management api http-commands` / `management ssh`: the VRFs with the service on."""
    if section is None:
        return frozenset({"default"}) if default_on else frozenset()
    top = {line.strip() for line in section.children if len(line) - len(line.lstrip()) <= 3}
    enabled = set()
    if "shutdown" not in top and ("no shutdown" in top or default_on):
        enabled.add("default")
    current = ""
    for line in section.children:
        stripped = line.strip()
        if stripped.startswith("vrf "):
            current = stripped.split()[1]
        elif current and stripped == "no shutdown":
            enabled.add(current)
    return frozenset(enabled)


def management(text: str) -> Management:
    """`interface Management1` (address, `vrf`), `ip route vrf <v> 0.0.0.0/0`, and the VRFs
    where `management api http-commands` and `management ssh` are on (SSH is on by default).

    >>> m = management("interface Management1\\n   vrf MGMT\\n   ip address 192.168.0.5/24\\n"
    ...                "ip route vrf MGMT 0.0.0.0/0 192.168.0.1\\nmanagement api http-commands\\n   no shutdown\\n")
    >>> (m.interface, m.address, m.vrf, m.default_route, sorted(m.api_vrfs), sorted(m.ssh_vrfs))
    ('Management1', '192.168.0.5', 'MGMT', True, ['default'], ['default'])
    """
    sections = {s.head: s for s in split_sections(text)}
    interface = next((s for head, s in sections.items() if re.match(r"interface Management\d", head)), None)
    address, vrf = "", "default"
    for line in interface.children if interface else ():
        words = line.split()
        if words[:2] == ["ip", "address"] and len(words) > 2:
            address = words[2].split("/")[0]
        elif words[:1] == ["vrf"] and len(words) > 1:
            vrf = words[-1]  # `vrf MGMT` or the older `vrf forwarding MGMT`
    route = re.compile(r"^ip route (vrf (\S+) )?0\.0\.0\.0/0 ")
    routes = {(m.group(2) or "default") for m in (route.match(head) for head in sections) if m}
    return Management(
        interface.head.split()[1] if interface else "",
        address,
        vrf,
        vrf in routes,
        _vrfs_enabled(sections.get("management api http-commands"), default_on=False),
        _vrfs_enabled(sections.get("management ssh"), default_on=True),
    )


def bgp_identity(text: str) -> dict[str, tuple[str, str]]:
    """EOS `router bgp`: {neighbor address: (local AS, remote AS)}, a peer group's remote-as
    applied to its members.

    >>> bgp_identity("router bgp 65101\\n   neighbor S peer group\\n   neighbor S remote-as 65000\\n"
    ...                  "   neighbor 10.0.0.0 peer group S\\n   neighbor 10.0.0.2 remote-as 65001\\n")
    {'10.0.0.0': ('65101', '65000'), '10.0.0.2': ('65101', '65001')}
    """
    section = bgp_section(text)
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
    addresses = {name for name in (*remote, *group_of) if NEIGHBOR_ADDRESS.match(name)}
    return {a: (local, remote.get(a) or remote.get(group_of.get(a, ""), "")) for a in sorted(addresses)}
