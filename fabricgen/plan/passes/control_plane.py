"""The control-plane ACL: who may reach each switch's CPU, as platform-neutral entries.

A switch of the fabric must accept BGP and BFD from its neighbours (link addresses of
`addressing.fabric`, loopbacks of `addressing.loopbacks`), ICMP, and the replies to sessions it
opened itself (NTP, DNS, TACACS+, BGP it initiated); management protocols only from
`management.allowed_sources` (default: `addressing.management`). GPU hosts reach a leaf on its
server-facing addresses, so without this ACL they reach SSH and the API too.

What a platform's applying point filters is data (`control_plane:` in its platform.yml):
`everything` (EOS `system control-plane`: every packet to the CPU, so the routing entries
matter, cloned from EOS's `default-control-plane-acl`) or `sessions` (NX-OS `line vty`: only
sessions to the vty, so only the management entries). docs/render.md, "Control-plane ACL".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fabricgen.core.model import AclEntry, ControlPlaneAcl, Platform
from fabricgen.plan.inputs import AddressingInput, ManagementInput

BGP = 179
BFD_PORTS = (3784, 3785, 4784)
"""RFC 5881 single-hop control (3784) and echo (3785), RFC 5883 multihop (4784)."""


def control_plane_acls(
    management: ManagementInput, addressing: AddressingInput | None, used: Sequence[Platform]
) -> tuple[ControlPlaneAcl, ...]:
    """One ACL per platform in use that has `control_plane:` facts; none when nobody is allowed
    to manage the switches (no `management.allowed_sources` and no management pool)."""
    if addressing is None:
        return ()
    allowed = management.allowed_sources
    if allowed is None:
        allowed = (addressing.management,) if addressing.management else ()
    if not allowed:
        return ()
    neighbours = (addressing.fabric, addressing.loopbacks)
    return tuple(_acl(platform, allowed, neighbours) for platform in used if platform.control_plane)


def _acl(platform: Platform, allowed: Sequence[str], neighbours: Sequence[str]) -> ControlPlaneAcl:
    facts: Mapping[str, Any] = platform.control_plane
    names: Mapping[int, str] = {int(port): str(name) for port, name in (facts.get("port_names") or {}).items()}
    rules: list[tuple[str, str, str, tuple[int, ...], tuple[int, ...], bool]] = []
    if facts["filters"] == "everything":
        rules += [("icmp", "icmp", "any", (), (), False), ("replies", "ip", "any", (), (), True)]
        for prefix in neighbours:
            rules += [("bgp", "tcp", prefix, (BGP,), (), False), ("bgp", "tcp", prefix, (), (BGP,), False)]
            rules.append(("bfd", "udp", prefix, BFD_PORTS, (), False))
    for protocol in ("tcp", "udp"):
        ports = tuple(int(p) for p in (facts.get("management_ports") or {}).get(protocol, ()))
        if ports:
            rules += [("management", protocol, prefix, ports, (), False) for prefix in allowed]
    entries = tuple(
        AclEntry(
            sequence=10 * (index + 1),
            action="permit",
            protocol=protocol,
            source=source,
            purpose=purpose,
            ports=ports,
            source_ports=source_ports,
            tracked=tracked,
            port_text=_port_text(ports, names),
            source_port_text=_port_text(source_ports, names),
        )
        for index, (purpose, protocol, source, ports, source_ports, tracked) in enumerate(rules)
    )
    vrfs = tuple(dict.fromkeys(v.replace("{management_vrf}", platform.management_vrf) for v in facts.get("vrfs", ())))
    return ControlPlaneAcl(platform.name, str(facts["acl"]), entries, vrfs, tuple(allowed), str(facts["filters"]))


def _port_text(ports: Iterable[int], names: Mapping[int, str]) -> str:
    """Ports as the OS prints them in its running config (EOS names well-known ports).

    >>> _port_text((22, 443, 6030), {22: "ssh", 443: "https"})
    'ssh https 6030'
    """
    return " ".join(names.get(port, str(port)) for port in ports)
