"""Pass: choose the media of every cable (copper or fibre, parts) from the catalog.

The medium is a physical fact of the plan, so it is chosen here, once per link, and not by a
producer: `validate` then finds a cable that nothing in the catalog reaches, and says where
its length comes from (`cabling.length.<kind>` or the `cabling.overrides` entry), once per
such key rather than once per cable. The rule itself is `plan.media.choose`, a pure function
of both ends' hardware, the length and the speed.

Many cables share the same hardware and length: the rule runs once per combination and those
cables share one `Choice`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.loader import PathKey, SourceMap
from fabricgen.model import Choice, Device, Link, Model
from fabricgen.plan.media import Hardware, OpticsTable, cage_facts, choose, link_ends, optics_table


@dataclass(frozen=True, slots=True)
class _Miss:
    """Cables of one length source that no medium reaches."""

    count: int
    example: Link


def length_source(link: Link, overrides: Mapping[tuple[str, str], int]) -> PathKey:
    """The inventory key the cable's length comes from.

    >>> from fabricgen.model import Endpoint
    >>> link = Link("leaf-spine", Endpoint("l1", "e1", 1), Endpoint("s1", "e9", 9), 400, "", "", "", 20.0)
    >>> length_source(link, {})
    ('cabling', 'length', 'leaf-spine')
    >>> length_source(link, {("s1", "e9"): 2})
    ('cabling', 'overrides', 2, 'length')
    """
    hit = overrides.get((link.a.device, link.a.interface))
    if hit is None:
        hit = overrides.get((link.z.device, link.z.interface))
    if hit is not None:
        return ("cabling", "overrides", hit, "length")
    return ("cabling", "length", link.kind)


def choose_media(
    links: Iterable[Link],
    devices: Iterable[Device],
    models: Iterable[Model],
    overrides: Mapping[tuple[str, str], int],
    source: SourceMap,
    table: OpticsTable | None = None,
) -> tuple[Link, ...]:
    """`links` with `media` set, in the same order; FabricError with one diagnostic per length
    key that some cable cannot be bought for."""
    table = table or optics_table()
    hardware = cage_facts(devices, models)
    decided: dict[tuple[object, ...], Choice | None] = {}
    misses: dict[PathKey, _Miss] = {}
    result: list[Link] = []
    for link in links:
        signature = _signature(link, hardware)
        if signature not in decided:
            decided[signature] = choose(link.speed, link.length_m, *link_ends(link, hardware), table)
        t = decided[signature]
        if t is None:
            where = length_source(link, overrides)
            miss = misses.get(where)
            misses[where] = _Miss(miss.count + 1, miss.example) if miss else _Miss(1, link)
            continue
        result.append(_with_media(link, t))
    if misses:
        raise FabricError([_diagnostic(where, miss, source) for where, miss in sorted(misses.items(), key=lambda i: str(i[0]))])
    return tuple(result)


def _signature(link: Link, hardware: Hardware) -> tuple[object, ...]:
    """What the rule reads of a cable: speed, length and both ends' (form factor, cage speed,
    links per cage); the `End` objects are built only once per distinct signature."""
    z_model, z_breakouts = hardware[link.z.device]
    a_hardware = hardware.get(link.a.device)
    if a_hardware is None:
        a = (z_model.form_factor, link.speed, 1)
    else:
        a = (a_hardware[0].form_factor, a_hardware[0].speed, a_hardware[1].get(link.a.port, 1))
    return (link.speed, link.length_m, *a, z_model.form_factor, z_model.speed, z_breakouts.get(link.z.port, 1))


def _with_media(link: Link, media: Choice) -> Link:
    return Link(link.kind, link.a, link.z, link.speed, link.subnet, link.a_address, link.z_address, link.length_m, media, link.mtu)


def _diagnostic(where: PathKey, miss: _Miss, source: SourceMap) -> Diagnostic:
    link = miss.example
    others = f" and {miss.count - 1} more cable(s)" if miss.count > 1 else ""
    return source.diagnostic(
        where,
        f"no cable medium in the catalog reaches {link.length_m:g} m at {link.speed}G "
        f"({link.a.device} {link.a.interface} - {link.z.device} {link.z.interface}{others})",
        hint="shorten the cable, or add a medium with that reach under `optics.media` in the catalog",
    )
