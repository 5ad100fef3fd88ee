"""Will the controller still reach the switch after the commit? Read from the running config and
the staged one (what the push keeps), per platform.

A login user is not the only thing a full replace can take away. What really cuts access: the
management interface's address moving away from `ansible_host`, the management interface moving
into a VRF where the API (eAPI / NX-API) or SSH is not enabled (eAPI enabled only in the default
VRF is typical after ZTP), and the management VRF losing its default route (the controller sits
on another subnet). An account that exists only on TACACS+ has no `username` line: it is judged
by the AAA that authenticates it, which the staged config must keep.

Each platform's driver reads its own config text (`Driver.management`, fabricgen/platforms/<os>/);
the verdict here is the same for every platform.
"""

from __future__ import annotations

from fabricgen.platforms import driver

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
