"""Values the planner derived that something else owns: a reserved ASN (a public one is a
warning), the management gateway's address on a switch, or a switch's management address
named as a service.

Both can come from a pin or from a tier's base and its index, so only the plan knows them; the
finding points at the pin when there is one, else at the base the value was derived from.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.inventory.validation.common import place, warning
from fabricgen.inventory.validation.special import PRIVATE_ASNS, is_private_asn, reserved_asn
from fabricgen.plan.inputs import Inputs, NodePin, TierInput

_ASN_KEYS = {"spine": "spine_asn", "leaf": "leaf_asn", "superspine": "superspine_asn"}


def _pins(inputs: Inputs, role: str) -> tuple[NodePin, ...]:
    tier: TierInput | None = {"spine": inputs.spines, "leaf": inputs.leaves, "superspine": inputs.superspines}.get(role)
    return tier.nodes if tier is not None else ()


def check_reserved_asns(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """No device may get a reserved ASN (`special.reserved_asn`: RFC 7607, 6793, 5398, 7300 and
    IANA's reserved block), pinned or derived from a tier's base."""
    if plan.transport != "roce":  # InfiniBand switches speak no BGP
        return
    reported: set[PathKey] = set()
    for device in plan.devices:
        why = reserved_asn(device.asn)
        if not why or device.role not in _ASN_KEYS:
            continue
        pinned = next(((*pin.path, "asn") for pin in _pins(inputs, device.role) if pin.asn == device.asn), None)
        path: PathKey = pinned or ("bgp", _ASN_KEYS[device.role])
        if path in reported:
            continue
        reported.add(path)
        if pinned:
            yield source.diagnostic(path, f"{device.name}: ASN {device.asn} is reserved: {why}")
            continue
        pins = {pin.asn for pin in _pins(inputs, device.role)}
        derived = [d.asn for d in plan.devices if d.role == device.role and d.asn not in pins]
        yield source.diagnostic(
            path,
            f"the {device.role} ASNs derived from {'.'.join(map(str, path))} run {min(derived)}-{max(derived)} and include {device.asn} "
            f"({device.name}): {why}",
            hint=f"move {'.'.join(map(str, path))} so the range avoids it",
        )


def check_gateway_users(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """The management gateway (given, or the pool's first address) must not also be a switch's
    management address, pinned or derived."""
    addressing = inputs.addressing
    if addressing is None or addressing.management is None:
        return []
    given = addressing.management_gateway is not None
    gateway = addressing.management_gateway or str(ipaddress.IPv4Network(addressing.management).network_address + 1)
    for device in plan.devices:
        if device.management == gateway:
            pins = (pin for role in ("spine", "leaf", "superspine") for pin in _pins(inputs, role))
            pinned = next(((*pin.path, "management") for pin in pins if pin.management == gateway), None)
            path = pinned or ("addressing", "management_gateway" if given else "management")
            gateway_place = (
                place(source, ("addressing", "management_gateway"))
                if given
                else f"the pool's first address, {place(source, ('addressing', 'management'))}"
            )
            return [
                source.diagnostic(
                    path,
                    f"{device.name}'s management address {gateway} is the management gateway ({gateway_place})",
                    hint="pin another address, or set addressing.management_gateway",
                )
            ]
    return []


def check_public_asns(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """A warning per inventory key whose ASNs (pinned, or derived from a tier's base) are public:
    some operators use their own public ASNs on purpose, but a typo looks the same (RFC 6996)."""
    if plan.transport != "roce":
        return
    public: dict[PathKey, list[int]] = {}
    for device in plan.devices:
        if device.role not in _ASN_KEYS or is_private_asn(device.asn) or reserved_asn(device.asn):
            continue
        pinned = next(((*pin.path, "asn") for pin in _pins(inputs, device.role) if pin.asn == device.asn), None)
        public.setdefault(pinned or ("bgp", _ASN_KEYS[device.role]), []).append(device.asn)
    ranges = " and ".join(f"{low}-{high}" for low, high in PRIVATE_ASNS)
    for path, asns in sorted(public.items(), key=lambda item: source.locate(item[0])):
        shown = str(asns[0]) if min(asns) == max(asns) else f"{min(asns)}-{max(asns)}"
        yield warning(
            source,
            path,
            f"ASN {shown} is public, outside the private-use ranges {ranges} (RFC 6996)",
            hint="fine if your organisation holds it; otherwise use a private ASN",
        )


def check_service_addresses(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """A warning for each NTP, syslog or DNS server whose address is a switch's own management
    address (pinned or derived): the switch would ask itself."""
    services = inputs.services
    named = (("ntp", services.ntp), ("syslog", services.syslog), ("dns", services.dns))
    if not any(addresses for _, addresses in named):
        return
    management = {device.management: device.name for device in plan.devices if device.management}
    for service, addresses in named:
        for position, address in enumerate(addresses):
            owner = management.get(address)
            if owner is not None:
                yield warning(
                    source,
                    ("services", service, position),
                    f"{service} server {address} is {owner}'s own management address: the switch would ask itself",
                    hint="list the server's address, not a switch's",
                )
