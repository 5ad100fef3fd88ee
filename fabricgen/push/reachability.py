"""Will the controller still reach the switch after the commit? Read from the running config and
the staged one (what the push keeps), per platform.

A login user is not the only thing a full replace can take away. What really cuts access: the
management interface's address moving away from `ansible_host`, the management interface moving
into a VRF where the API (eAPI / NX-API) or SSH is not enabled (eAPI enabled only in the default
VRF is typical after ZTP), and the management VRF losing its default route (the controller sits
on another subnet). An account that exists only on TACACS+ has no `username` line: it is judged
by the AAA that authenticates it, which the staged config must keep.

One parser per platform (`eos_management`, `nxos_management`), each a plain function of text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabricgen.push.sections import Section, split_sections


@dataclass(frozen=True, slots=True)
class Management:
    """What reaches a switch, as one config says it."""

    interface: str = ""
    address: str = ""  # without the prefix length
    vrf: str = "default"
    default_route: bool = False
    api_vrfs: frozenset[str] = field(default_factory=frozenset)
    ssh_vrfs: frozenset[str] = field(default_factory=frozenset)


def _sections(text: str) -> dict[str, Section]:
    return {s.head: s for s in split_sections(text)}


def _vrfs_enabled(section: Section | None, default_on: bool) -> frozenset[str]:
    """EOS `management api http-commands` / `management ssh`: the VRFs with the service on."""
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


def eos_management(text: str) -> Management:
    """EOS: `interface Management1` (address, `vrf`), `ip route vrf <v> 0.0.0.0/0`, and the VRFs
    where `management api http-commands` and `management ssh` are on (SSH is on by default).

    >>> m = eos_management("interface Management1\\n   vrf MGMT\\n   ip address 192.168.0.5/24\\n"
    ...                    "ip route vrf MGMT 0.0.0.0/0 192.168.0.1\\nmanagement api http-commands\\n   no shutdown\\n")
    >>> (m.interface, m.address, m.vrf, m.default_route, sorted(m.api_vrfs), sorted(m.ssh_vrfs))
    ('Management1', '192.168.0.5', 'MGMT', True, ['default'], ['default'])
    """
    sections = _sections(text)
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


def nxos_management(text: str) -> Management:
    """NX-OS: `interface mgmt0` (always in VRF management), `vrf context management` with
    `ip route 0.0.0.0/0`, NX-API on with `feature nxapi`, SSH on unless `no feature ssh`.

    >>> m = nxos_management("feature nxapi\\nvrf context management\\n  ip route 0.0.0.0/0 10.0.0.1\\n"
    ...                     "interface mgmt0\\n  vrf member management\\n  ip address 10.0.0.5/24\\n")
    >>> (m.address, m.vrf, m.default_route, sorted(m.api_vrfs), sorted(m.ssh_vrfs))
    ('10.0.0.5', 'management', True, ['management'], ['management'])
    """
    sections = _sections(text)
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


_PARSERS = {"eos": eos_management, "nxos": nxos_management}
_SERVICE = {"ansible.netcommon.httpapi": ("api_vrfs", "the API"), "ansible.netcommon.network_cli": ("ssh_vrfs", "SSH")}


def reachability_problems(platform: str, staged: str, running: str, device: str, ansible_host: str, connection: str) -> list[str]:
    """Why the staged config would cut the controller off the switch; empty when it would not.
    Checked when `ansible_host` is the management interface's address in the running config:
    the path the controller uses today (an `ansible_host` given by name is not resolved here)."""
    parse = _PARSERS[str(platform).rsplit(".", 1)[-1]]
    before, after = parse(running), parse(staged)
    if not before.address or before.address != ansible_host:
        return []  # the controller does not come in through the management interface (or by name)
    problems = []
    if after.address != before.address:
        problems.append(
            f"{device}: the staged config moves {before.interface} from {before.address} (ansible_host) to "
            f"{after.address or 'no address'}: the controller would lose the switch"
        )
    attribute, label = _SERVICE.get(connection, ("", ""))
    if attribute and before.vrf in getattr(before, attribute) and after.vrf not in getattr(after, attribute):
        problems.append(
            f"{device}: {label} is not enabled in VRF {after.vrf}, where the staged config puts {after.interface or 'the management interface'}: "
            f"{connection} would be cut at commit (enable it there in the management overlay)"
        )
    if before.default_route and not after.default_route:
        problems.append(f"{device}: the staged config drops the default route of management VRF {after.vrf}")
    return problems
