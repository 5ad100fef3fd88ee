"""The media rule: which cable or optics one link needs, from its length, speed and both ends' cages.

A pure function of (A end hardware, Z end hardware, length, speed): `choose`. The planner's
media pass (`plan/passes/media.py`) calls it once per distinct combination and stores the
choice on every link, so the cabling plan, the bill of materials and `validate` all read the
same decision. The reach table and part naming are data in `data/catalog.yml` (`optics:`),
read once. Replace this module to change the rule; the pass does not need to change.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from fabricgen.catalog import catalog_section
from fabricgen.model import Choice, Device, Link, Model


@dataclass(frozen=True, slots=True)
class Medium:
    """One row of the reach table."""

    name: str
    kind: str
    netbox_type: str
    reach_m: float
    fibre: str
    variant: dict[str, str]


@dataclass(frozen=True, slots=True)
class OpticsTable:
    media: tuple[Medium, ...]
    part: str
    cable_part: str
    breakout_cable_part: str


@dataclass(frozen=True, slots=True)
class End:
    """The hardware at one end of a cable: the cage's form factor and native speed, and how
    many links share the cage (1 unless it is broken out)."""

    device: str
    port: int
    interface: str
    form_factor: str
    cage_speed: int
    shared: int


def _medium(name: str, entry: dict[str, Any]) -> Medium:
    return Medium(
        name=name,
        kind=str(entry["kind"]),
        netbox_type=str(entry["netbox_type"]),
        reach_m=float(entry["reach_m"]),
        fibre=str(entry.get("fibre", "")),
        variant={str(k): str(v) for k, v in entry["variant"].items()},
    )


@cache
def optics_table() -> OpticsTable:
    optics = catalog_section("optics")
    return OpticsTable(
        media=tuple(_medium(name, entry) for name, entry in optics["media"].items()),
        part=optics["part"],
        cable_part=optics["cable_part"],
        breakout_cable_part=optics["breakout_cable_part"],
    )


def _variant(medium: Medium, speed: int, far: End) -> str:
    if far.shared > 1:
        return medium.variant.get(f"{speed}@{far.cage_speed}", medium.variant[str(speed)])
    return medium.variant[str(speed)]


def _optic(table: OpticsTable, medium: Medium, speed: int, end: End, far: End) -> str:
    if end.shared > 1:
        return table.part.format(form_factor=end.form_factor, speed=end.cage_speed, variant=medium.variant[str(end.cage_speed)])
    return table.part.format(form_factor=end.form_factor, speed=speed, variant=_variant(medium, speed, far))


def _end_key(end: End) -> tuple[str, ...]:
    return (end.device, str(end.port)) if end.shared > 1 else (end.device, end.interface)


def keys(kind: str, a: End, z: End) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(cable, A transceiver, Z transceiver) identities for counting physical items: a
    broken-out cage holds one transceiver (or one breakout cable) for several links."""
    if kind == "copper":
        broken = a if a.shared > 1 else z if z.shared > 1 else None
        cable_key = ("cable", *_end_key(broken)) if broken is not None else ("cable", *_end_key(a), *_end_key(z))
        return cable_key, (), ()
    return ("fibre", a.device, a.interface, z.device, z.interface), _end_key(a), _end_key(z)


def choose(speed: int, length_m: float, a: End, z: End, table: OpticsTable | None = None) -> Choice | None:
    """The first medium (in catalog order) that reaches `length_m` at `speed`, and its parts;
    None when nothing reaches."""
    table = table or optics_table()
    for medium in table.media:
        if length_m > medium.reach_m or str(speed) not in medium.variant:
            continue
        variant = _variant(medium, speed, z) if a.shared == 1 else _variant(medium, speed, a)
        if medium.kind == "copper":
            broken = a if a.shared > 1 else z if z.shared > 1 else None
            if broken is not None:
                far = z if broken is a else a
                part = table.breakout_cable_part.format(
                    form_factor=broken.form_factor,
                    cage_speed=broken.cage_speed,
                    count=broken.shared,
                    far_form_factor=far.form_factor,
                    speed=speed,
                    variant=variant,
                )
            else:
                form_factor = a.form_factor if a.form_factor == z.form_factor else f"{a.form_factor}-to-{z.form_factor}"
                part = table.cable_part.format(form_factor=form_factor, speed=speed, variant=variant)
            return Choice(medium.name, variant, medium.kind, medium.netbox_type, part, "", "")
        return Choice(
            medium.name,
            variant,
            medium.kind,
            medium.netbox_type,
            medium.fibre,
            _optic(table, medium, speed, a, z),
            _optic(table, medium, speed, z, a),
        )
    return None


Hardware = Mapping[str, tuple[Model, Mapping[int, int]]]
"""Per device: its catalog model and its broken-out cages (port -> logical ports)."""


def cage_facts(devices: Iterable[Device], models: Iterable[Model]) -> Hardware:
    """What `link_ends` needs to know of every switch."""
    by_name = {m.name: m for m in models}
    return {d.name: (by_name[d.model], {b.port: b.count for b in d.breakouts}) for d in devices}


def link_ends(link: Link, hardware: Hardware) -> tuple[End, End]:
    """Both ends' cage facts. A server end has no catalog model: it is assumed to take the same
    form factor as its leaf port (documented in docs/artifacts.md).

    >>> from fabricgen.model import Endpoint
    >>> m = Model("m", "v", "", 64, 400, 8, "OSFP", {400: 1, 100: 4}, ("eos",))
    >>> link = Link("server-leaf", Endpoint("gpu1", "nic1", 1), Endpoint("leaf1", "Ethernet1/1", 1), 100, "", "", "", 3.0)
    >>> a, z = link_ends(link, {"leaf1": (m, {1: 4})})
    >>> (a.form_factor, a.cage_speed, a.shared), (z.cage_speed, z.shared)
    (('OSFP', 100, 1), (400, 4))
    """
    z_model, z_breakouts = hardware[link.z.device]
    z = End(link.z.device, link.z.port, link.z.interface, z_model.form_factor, z_model.speed, z_breakouts.get(link.z.port, 1))
    if link.a.device in hardware:
        a_model, a_breakouts = hardware[link.a.device]
        a = End(link.a.device, link.a.port, link.a.interface, a_model.form_factor, a_model.speed, a_breakouts.get(link.a.port, 1))
    else:
        a = End(link.a.device, link.a.port, link.a.interface, z.form_factor, link.speed, 1)
    return a, z
