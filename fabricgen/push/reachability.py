"""Will the controller still reach the switch after the commit? Read from the running config and
the staged one (what the push keeps), per platform.

A login user is not the only thing a full replace can take away. What really cuts access: the
management interface's address moving away from `ansible_host`, the management interface moving
into a VRF where the API (eAPI / NX-API) or SSH is not enabled (eAPI enabled only in the default
VRF is typical after ZTP), and the management VRF losing its default route (the controller sits
on another subnet). An account that exists only on TACACS+ has no `username` line: it is judged
by the AAA that authenticates it, which the staged config must keep.

The control-plane ACL (`plan/passes/control_plane.py`) is judged too: the staged file must let
the address the controller connects from reach the port of the connection (`control_plane:
connections` in platform.yml), in every VRF the controller may come in through.

Each platform's driver reads its own config text (`Driver.management`, fabricgen/platforms/<os>/);
the verdict here is the same for every platform.
"""

from __future__ import annotations

import socket
from ipaddress import IPv4Address, ip_address

from fabricgen.core.catalog import platforms
from fabricgen.platforms import driver
from fabricgen.platforms.acl_text import ControlPlaneFilter, verdict
from fabricgen.push.ownership import ownership

_SERVICE = {"ansible.netcommon.httpapi": ("api_vrfs", "the API"), "ansible.netcommon.network_cli": ("ssh_vrfs", "SSH")}


def reachability_problems(platform: str, staged: str, running: str, device: str, ansible_host: str, connection: str) -> list[str]:
    """Why the staged config would cut the controller off the switch; empty when it would not.
    Checked when `ansible_host` is the management interface's address in the running config:
    the path the controller uses today (an `ansible_host` given by name is not resolved here)."""
    parse = driver(platform).management
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


def control_plane_problems(
    platform: str, staged: str, running: str, device: str, ansible_host: str, connection: str, controller: str
) -> list[str]:
    """Why the staged control-plane ACL would cut the controller off; empty when it lets
    `controller` (the address the switch sees the push come from) reach the connection's port,
    or when the staged file applies no ACL that filters this connection. The VRF is the
    management interface's when `ansible_host` is its address, else every VRF with an ACL."""
    os_name = ownership(platform).platform  # the playbooks pass the Ansible network OS
    facts = platforms()[os_name].control_plane if os_name in platforms() else {}
    port = int((facts.get("connections") or {}).get(connection, 0))
    parse = driver(platform)
    staged_filter = parse.control_plane(staged)
    if not port or not staged_filter.applied:
        return []
    before = parse.management(running)
    comes_in = [parse.management(staged).vrf] if before.address and before.address == ansible_host else sorted(staged_filter.applied)
    names = sorted({n for vrf in comes_in for n in (staged_filter.applied.get(vrf), staged_filter.applied.get("*")) if n})
    if not names:
        return []
    address = _ipv4(controller)
    if address is None:
        return [
            f"{device}: the staged config applies control-plane ACL {', '.join(names)}, and the address the controller "
            f"connects from is unknown ({controller or 'not derived'}): set fabricgen_controller_address to the address the switch sees"
        ]
    return [p for name in names for p in _acl_problems(staged_filter, name, device, address, port, connection)]


def _acl_problems(found: ControlPlaneFilter, name: str, device: str, address: IPv4Address, port: int, connection: str) -> list[str]:
    rules = found.acls.get(name)
    if rules is None:
        return [f"{device}: the staged config applies control-plane ACL {name}, which it does not define: {connection} could be cut"]
    permitted, rule = verdict(rules, address, "tcp", port)
    if permitted is None:
        return [
            f"{device}: control-plane ACL {name} in the staged config has a rule the pre-flight cannot judge ('{rule}'): refused rather than guessed"
        ]
    if not permitted:
        return [
            f"{device}: control-plane ACL {name} in the staged config does not permit {address} (the controller) to tcp port {port} "
            f"({rule}): {connection} would be cut at commit (add it to management.allowed_sources)"
        ]
    return []


def _ipv4(text: str) -> IPv4Address | None:
    try:
        address = ip_address(text.strip())
    except ValueError:
        return None
    return address if isinstance(address, IPv4Address) else None


def controller_address(ansible_host: str, explicit: str = "") -> str:
    """The address a switch sees the controller connect from: `explicit`
    (`fabricgen_controller_address`, for a controller behind NAT or a jump host), else the
    source address this machine's routing picks for `ansible_host` (a UDP socket's local
    address: nothing is sent); empty when neither is known."""
    if explicit:
        return explicit.strip()
    try:
        family, kind, proto, _, target = socket.getaddrinfo(ansible_host, 22, socket.AF_INET, socket.SOCK_DGRAM)[0]
        with socket.socket(family, kind, proto) as probe:
            probe.connect(target)
            return str(probe.getsockname()[0])
    except (OSError, IndexError, UnicodeError):
        return ""
