"""Cisco NX-OS: what the push reads from config text (running or staged), as plain facts."""

from __future__ import annotations

from fabricgen.platforms.driver import Management
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
