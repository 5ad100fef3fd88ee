"""Pass: cable lengths from `cabling.overrides` (single cables, found by either end).

Every cable starts with the length of its kind (`cabling.length.<kind>`); an override names
one end of one cable. An override that names no cable of the plan is an error (a typo would
otherwise be silently ignored).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from fabricgen.core.diagnostics import FabricError
from fabricgen.core.model import Link
from fabricgen.core.records import replace
from fabricgen.core.units import length_m
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.inputs import CableOverride


def override_positions(overrides: Sequence[CableOverride]) -> dict[tuple[str, str], int]:
    """(device, interface) -> position of its entry under `cabling.overrides`.

    >>> override_positions([CableOverride(("cabling", "overrides", 0), "leaf1", "Ethernet1/1", "5m")])
    {('leaf1', 'Ethernet1/1'): 0}
    """
    return {(o.device, o.interface): i for i, o in enumerate(overrides)}


def apply_overrides(links: Iterable[Link], overrides: Sequence[CableOverride], source: SourceMap) -> list[Link]:
    """`links` with the overridden lengths set; FabricError for overrides that match no cable."""
    if not overrides:
        return list(links)
    wanted = {(o.device, o.interface): (i, length_m(o.length)) for i, o in enumerate(overrides)}
    matched: set[int] = set()
    result: list[Link] = []
    for link in links:
        hit = wanted.get((link.a.device, link.a.interface)) or wanted.get((link.z.device, link.z.interface))
        if hit is not None:
            matched.add(hit[0])
            link = replace(link, length_m=hit[1])
        result.append(link)
    problems = [
        source.diagnostic(o.path, f"no cable ends at {o.device} {o.interface}") for i, o in enumerate(overrides) if i not in matched
    ]
    if problems:
        raise FabricError(problems)
    return result
