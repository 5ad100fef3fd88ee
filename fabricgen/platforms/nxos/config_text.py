"""Cisco NX-OS: what the push reads from config text (running or staged), as plain facts."""

from __future__ import annotations

from fabricgen.platforms.driver import NEIGHBOR_ADDRESS, Management, bgp_section
from fabricgen.platforms.sections import split_sections


def management(text: str) -> Management:
    """`interface mgmt0` (always in VRF management), `vrf context management` with
    `ip route 0.0.0.0/0`, NX-API on with `feature nxapi`, SSH on unless `no feature ssh`.

    >>> m = management("feature nxapi\\nvrf context management\\n  ip route 0.0.0.0/0 10.0.0.1\\n"
    ...                "interface mgmt0\\n  vrf member management\\n  ip address 10.0.0.5/24\\n")
    >>> (m.address, m.vrf, m.default_route, sorted(m.api_vrfs), sorted(m.ssh_vrfs))
    ('10.0.0.5', 'management', True, ['management'], ['management'])
    """
    sections = {s.head: s for s in split_sections(text)}
    interface = sections.get("interface mgmt0")
    address = ""
    for line in interface.children if interface else ():
        words = line.split()
        if words[:2] == ["ip", "address"] and len(words) > 2:
            address = words[2].split("/")[0]
    context = sections.get("vrf context management")
    route = any(line.split()[:3] == ["ip", "route", "0.0.0.0/0"] for line in (context.children if context else ()))
    on = frozenset({"management"})
    return Management(
        "mgmt0" if interface else "",
        address,
        "management",
        route,
        on if "feature nxapi" in sections else frozenset(),
        frozenset() if "no feature ssh" in sections else on,
    )


def bgp_identity(text: str) -> dict[str, tuple[str, str]]:
    """NX-OS `router bgp`: {neighbor address: (local AS, remote AS)}, a `template peer`'s
    remote-as applied to the neighbors that inherit it.

    >>> bgp_identity("router bgp 65201\\n  template peer S\\n    remote-as 65200\\n"
    ...                   "  neighbor 10.41.0.0\\n    inherit peer S\\n  neighbor 10.41.0.2 remote-as 65009\\n")
    {'10.41.0.0': ('65201', '65200'), '10.41.0.2': ('65201', '65009')}
    """
    section = bgp_section(text)
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
    addresses = {name for name in (*remote, *inherits) if NEIGHBOR_ADDRESS.match(name)}
    return {a: (local, remote.get(a) or templates.get(inherits.get(a, ""), "")) for a in sorted(addresses)}
