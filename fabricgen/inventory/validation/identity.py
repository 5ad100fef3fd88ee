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
from fabricgen.inventory.validation.common import place, warning
from fabricgen.inventory.validation.special import PRIVATE_ASNS, is_private_asn, reserved_asn

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
    """No device may get a reserved ASN (special.py: RFC 7607, 6793, 5398, 7300, IANA reserved),
    pinned or derived from a tier's base."""
    if plan.transport != "roce":  # InfiniBand switches speak no BGP
        return
    reported: set[PathKey] = set()
    for device in plan.devices:
        why = reserved_asn(device.asn)
        if not why or device.role not in _ASN_KEYS:
            continue
        pinned = _pinned_asn(doc, device.role, device.asn)
        path = pinned or ("bgp", _ASN_KEYS[device.role])
        if path in reported:
            continue
        reported.add(path)
        if pinned:
            yield source.diagnostic(path, f"{device.name}: ASN {device.asn} is reserved: {why}")
            continue
        pins = {node.get("asn") for node in doc.get(_TIERS[device.role], {}).get("nodes", [])}
        derived = [d.asn for d in plan.devices if d.role == device.role and d.asn not in pins]
        yield source.diagnostic(
            path,
            f"the {device.role} ASNs derived from {'.'.join(map(str, path))} run {min(derived)}-{max(derived)} and include {device.asn} "
            f"({device.name}): {why}",
            hint=f"move {'.'.join(map(str, path))} so the range avoids it",
        )


def check_public_asns(plan: Plan, doc: dict[str, Any], source: SourceMap) -> Iterable[Diagnostic]:
    """A warning per inventory key whose ASNs (pinned, or derived from a tier's base) are public:
    some operators use their own public ASNs on purpose, but a typo does the same (RFC 6996)."""
    if plan.transport != "roce":
        return
    public: dict[PathKey, list[int]] = {}
    for device in plan.devices:
        if device.role not in _ASN_KEYS or is_private_asn(device.asn) or reserved_asn(device.asn):
            continue
        path = _pinned_asn(doc, device.role, device.asn) or ("bgp", _ASN_KEYS[device.role])
        public.setdefault(path, []).append(device.asn)
    ranges = " and ".join(f"{low}-{high}" for low, high in PRIVATE_ASNS)
    for path, asns in sorted(public.items(), key=lambda item: source.locate(item[0])):
        shown = str(asns[0]) if len(set(asns)) == 1 else f"{min(asns)}-{max(asns)}"
        yield warning(
            source,
            path,
            f"ASN {shown} is public, outside the private-use ranges {ranges} (RFC 6996)",
            hint="fine if your organisation holds it; otherwise use a private ASN",
        )


def _pinned_asn(doc: dict[str, Any], role: str, asn: int) -> PathKey | None:
    key = _TIERS[role]
    for position, node in enumerate(doc.get(key, {}).get("nodes", [])):
        if node.get("asn") == asn:
            return (key, "nodes", position, "asn")
    return None
