"""Identity: each pinned node, subnet manager and partition once, and no reserved ASN.

A list in YAML can name the same thing twice, and the expansion used to let the last entry win
silently (a pinned leaf's loopback gone, the master subnet manager's config lost). Each second
entry is an error that names the first.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from typing import Any

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.inventory.validation.common import place

RESERVED_ASNS = {
    0: "AS 0 may not be used (RFC 7607)",
    23456: "AS 23456 is AS_TRANS, which stands in for 4-byte ASNs in 2-byte sessions (RFC 6793)",
    65535: "AS 65535 is reserved (RFC 7300)",
}
"""Reserved ASNs a device could get. 4294967295 (RFC 7300) is above the allowed range, which the
schema and the plan's range check already refuse."""

_ASN_KEYS = {"spine": "spine_asn", "leaf": "leaf_asn", "superspine": "superspine_asn"}
_TIERS = {"spine": "spines", "leaf": "leaves", "superspine": "superspines"}


def check_identity(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    """Pinned nodes (per tier, pod or plane, index), subnet-manager hosts and partition names."""
    found = []
    pods = doc.get("pods", {}).get("count", 0)
    for key, group_key in (("spines", "pod"), ("leaves", "pod"), ("superspines", "plane")):
        nodes = doc.get(key, {}).get("nodes", []) if isinstance(doc.get(key), dict) else []
        keyed = [((node.get(group_key, 1) if pods else 1, node["index"]), (key, "nodes", i, "index")) for i, node in enumerate(nodes)]
        for (group, index), path, first in _repeats(keyed):
            within = f" in {group_key} {group}" if pods else ""
            found.append(source.diagnostic(path, f"{key} index {index}{within} is pinned twice: here and at {place(source, first)}"))
    hosts = [(sm["host"], ("subnet_managers", i, "host")) for i, sm in enumerate(doc.get("subnet_managers") or [])]
    for host, path, first in _repeats(hosts):
        found.append(source.diagnostic(path, f"subnet manager host {host!r} is listed twice: here and at {place(source, first)}"))
    names = [(part["name"], ("partitions", i, "name")) for i, part in enumerate(doc.get("partitions") or [])]
    for name, path, first in _repeats(names):
        found.append(source.diagnostic(path, f"partition name {name!r} is used twice: here and at {place(source, first)}"))
    return found


def _repeats(items: Sequence[tuple[Hashable, PathKey]]) -> Iterator[tuple[Any, PathKey, PathKey]]:
    """(value, where it repeats, where it first appeared) for every repeat."""
    first: dict[Hashable, PathKey] = {}
    for value, path in items:
        earlier = first.setdefault(value, path)
        if earlier != path:
            yield value, path, earlier


def check_reserved_asns(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    """No device may get a reserved ASN, pinned or derived from a tier's base."""
    if plan.transport != "roce":  # InfiniBand switches speak no BGP
        return
    reported: set[PathKey] = set()
    for device in plan.devices:
        if device.asn not in RESERVED_ASNS or device.role not in _ASN_KEYS:
            continue
        pinned = _pinned_asn(doc, device.role, device.asn)
        path = pinned or ("bgp", _ASN_KEYS[device.role])
        if path in reported:
            continue
        reported.add(path)
        if pinned:
            yield source.diagnostic(path, f"{device.name}: ASN {device.asn} is reserved: {RESERVED_ASNS[device.asn]}")
            continue
        pins = {node.get("asn") for node in doc.get(_TIERS[device.role], {}).get("nodes", [])}
        derived = [d.asn for d in plan.devices if d.role == device.role and d.asn not in pins]
        yield source.diagnostic(
            path,
            f"the {device.role} ASNs derived from {'.'.join(map(str, path))} run {min(derived)}-{max(derived)} and include {device.asn} "
            f"({device.name}): {RESERVED_ASNS[device.asn]}",
            hint=f"move {'.'.join(map(str, path))} so the range avoids it",
        )


def _pinned_asn(doc: dict[str, Any], role: str, asn: int) -> PathKey | None:
    key = _TIERS[role]
    for position, node in enumerate(doc.get(key, {}).get("nodes", [])):
        if node.get("asn") == asn:
            return (key, "nodes", position, "asn")
    return None
