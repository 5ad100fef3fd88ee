"""Values the planner derived that something else owns: a reserved ASN, or the management
gateway's address on a switch.

Both can come from a pin or from a tier's base and its index, so only the plan knows them; the
finding points at the pin when there is one, else at the base the value was derived from.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.inventory.validation.common import place
from fabricgen.plan.inputs import Inputs, NodePin, TierInput

RESERVED_ASNS = {
    0: "AS 0 may not be used (RFC 7607)",
    23456: "AS 23456 is AS_TRANS, which stands in for 4-byte ASNs in 2-byte sessions (RFC 6793)",
    65535: "AS 65535 is reserved (RFC 7300)",
}
"""Reserved ASNs a device could get. 4294967295 (RFC 7300) is above the allowed range, which the
schema and the plan's range check already refuse."""

_ASN_KEYS = {"spine": "spine_asn", "leaf": "leaf_asn", "superspine": "superspine_asn"}


def _pins(inputs: Inputs, role: str) -> tuple[NodePin, ...]:
    tier: TierInput | None = {"spine": inputs.spines, "leaf": inputs.leaves, "superspine": inputs.superspines}.get(role)
    return tier.nodes if tier is not None else ()


def check_reserved_asns(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """No device may get a reserved ASN, pinned or derived from a tier's base."""
    if plan.transport != "roce":  # InfiniBand switches speak no BGP
        return
    reported: set[PathKey] = set()
    for device in plan.devices:
        if device.asn not in RESERVED_ASNS or device.role not in _ASN_KEYS:
            continue
        pinned = next(((*pin.path, "asn") for pin in _pins(inputs, device.role) if pin.asn == device.asn), None)
        path: PathKey = pinned or ("bgp", _ASN_KEYS[device.role])
        if path in reported:
            continue
        reported.add(path)
        if pinned:
            yield source.diagnostic(path, f"{device.name}: ASN {device.asn} is reserved: {RESERVED_ASNS[device.asn]}")
            continue
        pins = {pin.asn for pin in _pins(inputs, device.role)}
        derived = [d.asn for d in plan.devices if d.role == device.role and d.asn not in pins]
        yield source.diagnostic(
            path,
            f"the {device.role} ASNs derived from {'.'.join(map(str, path))} run {min(derived)}-{max(derived)} and include {device.asn} "
            f"({device.name}): {RESERVED_ASNS[device.asn]}",
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
