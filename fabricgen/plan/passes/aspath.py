"""AS-path multipath intent: which devices learn equal-length paths whose AS_PATHs differ.

BGP multipaths eBGP routes only when their AS_PATHs are identical unless told to relax that
to "same length" (RFC 7938 §7.1.1 / `bgp bestpath as-path multipath-relax`). Whether a device
needs it follows from the ASN design, so the planner decides it here and every renderer prints
it: a leaf whose uplinks reach the rest of the fabric through upper tiers with different ASNs
(super-spine planes numbered per plane) gets as many AS_PATHs as planes, one per uplink group.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from fabricgen.model import Device


def mark_as_path_multipath(devices: tuple[Device, ...]) -> tuple[Device, ...]:
    """The devices with `as_path_multipath_relax` set where the ASN design needs it."""
    relaxing = relaxing_devices(devices)
    return tuple(dataclasses.replace(d, as_path_multipath_relax=True) if d.name in relaxing else d for d in devices)


def relaxing_devices(devices: Iterable[Device]) -> frozenset[str]:
    """Names of the devices whose upward paths cross more than one ASN at some tier.

    Walks each device's uplinks tier by tier (leaf -> spines -> super-spines). Each device is
    visited once per tier it appears in, memoised, so the work is linear in the uplinks.

    >>> from fabricgen.model import Interface
    >>> def dev(name, asn, ups):
    ...     ifs = tuple(Interface(f"e{i}", i, 1, 400, "uplink", "", 31, up, "", "", 9214, False) for i, up in enumerate(ups))
    ...     return Device(name, "x", 1, 1, "eos", "m", "", asn, "", "", 0, "", "", "", False, 9214, 1, ifs, (), (), (), 0, 0)
    >>> fabric = [dev("ss1", 1, []), dev("ss2", 2, []), dev("sp1", 10, ["ss1"]), dev("sp2", 10, ["ss2"]), dev("leaf", 20, ["sp1", "sp2"])]
    >>> sorted(relaxing_devices(fabric))
    ['leaf']
    """
    by_name = {device.name: device for device in devices}
    upward: dict[str, tuple[frozenset[int], ...]] = {}

    def tiers_above(name: str) -> tuple[frozenset[int], ...]:
        known = upward.get(name)
        if known is not None:
            return known
        uppers = sorted({i.peer_device for i in by_name[name].interfaces if i.role == "uplink" and i.peer_device in by_name})
        tiers: list[set[int]] = [{by_name[u].asn for u in uppers}] if uppers else []
        for upper in uppers:
            for depth, asns in enumerate(tiers_above(upper), start=1):
                if depth == len(tiers):
                    tiers.append(set())
                tiers[depth] |= asns
        upward[name] = result = tuple(frozenset(t) for t in tiers)
        return result

    return frozenset(name for name in by_name if any(len(asns) > 1 for asns in tiers_above(name)))
