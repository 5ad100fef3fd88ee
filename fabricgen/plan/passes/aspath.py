"""AS-path multipath intent: which devices learn equal-length paths whose AS_PATHs differ.

BGP multipaths eBGP routes only when their AS_PATHs are identical unless told to relax that
to "same length" (RFC 7938 §7.1.1 / `bgp bestpath as-path multipath-relax`). Whether a device
needs it follows from the ASN design, so the planner decides it here and every renderer prints
it: a leaf whose uplinks reach the rest of the fabric through upper tiers with different ASNs
(super-spine planes numbered per plane, or spines of one pod pinned to different ASNs) gets as
many AS_PATHs as ASNs at that tier. Only the upward direction can differ: the wiring puts spine j
of every pod under plane j alone, so no device reaches one lower device through two others.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def relaxing(uplinks: Mapping[str, Iterable[str]], asn: Mapping[str, int]) -> frozenset[str]:
    """Names of the devices (the keys of `asn`) whose upward paths cross more than one ASN at
    some tier; `uplinks` gives each device's uplink peers (others than devices are ignored).
    The planner calls it with what the wiring decided, before the devices are assembled.

    Walks each device's uplinks tier by tier (leaf -> spines -> super-spines). Each device is
    visited once per tier it appears in, memoised, so the work is linear in the uplinks; devices
    with the same uppers (the leaves of a pod) share one walk.

    >>> sorted(relaxing({"leaf": ["sp1", "sp2"], "sp1": ["ss1"], "sp2": ["ss2"]}, {"leaf": 20, "sp1": 10, "sp2": 10, "ss1": 1, "ss2": 2}))
    ['leaf']
    >>> sorted(relaxing({"leaf": ["sp1", "sp2"]}, {"leaf": 20, "sp1": 10, "sp2": 11}))
    ['leaf']
    """
    upward: dict[str, tuple[frozenset[int], ...]] = {}
    by_uppers: dict[tuple[str, ...], tuple[frozenset[int], ...]] = {}

    def tiers_above(name: str) -> tuple[frozenset[int], ...]:
        known = upward.get(name)
        if known is not None:
            return known
        uppers = tuple(sorted({peer for peer in uplinks.get(name, ()) if peer in asn}))
        shared = by_uppers.get(uppers)
        if shared is not None:
            upward[name] = shared
            return shared
        tiers: list[set[int]] = [{asn[u] for u in uppers}] if uppers else []
        for upper in uppers:
            for depth, asns in enumerate(tiers_above(upper), start=1):
                if depth == len(tiers):
                    tiers.append(set())
                tiers[depth] |= asns
        upward[name] = by_uppers[uppers] = result = tuple(frozenset(t) for t in tiers)
        return result

    return frozenset(name for name in asn if any(len(asns) > 1 for asns in tiers_above(name)))
