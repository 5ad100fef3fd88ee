"""Cable media: which cable or optics each link needs, from its length and both ends' cages.

One pure function (`choose`) decides for a link; the cabling plan and the bill of materials
both call it, so the two can never disagree. The reach table and part naming are data in
`data/catalog.yml` (`optics:`), read once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from fabricgen.catalog import catalog_section
from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.model import Link, Model, Plan

if TYPE_CHECKING:
    from fabricgen.render import RenderContext


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


@dataclass(frozen=True, slots=True)
class Choice:
    """What one cable needs. `cable_part` is the copper cable or the fibre patch cord;
    `a_optic`/`z_optic` the transceivers (empty for copper). `*_key` identify physical items
    for counting: a broken-out cage holds one transceiver (or one breakout cable) for several links."""

    medium: str
    variant: str
    kind: str
    netbox_type: str
    cable_part: str
    a_optic: str
    z_optic: str
    cable_key: tuple[str, ...]
    a_key: tuple[str, ...]
    z_key: tuple[str, ...]


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


def _keys(kind: str, a: End, z: End) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(cable, A transceiver, Z transceiver) identities for counting physical items."""
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
            return Choice(medium.name, variant, medium.kind, medium.netbox_type, part, "", "", *_keys(medium.kind, a, z))
        return Choice(
            medium.name,
            variant,
            medium.kind,
            medium.netbox_type,
            medium.fibre,
            _optic(table, medium, speed, a, z),
            _optic(table, medium, speed, z, a),
            *_keys(medium.kind, a, z),
        )
    return None


@dataclass(frozen=True, slots=True)
class Cable:
    link: Link
    a: End
    z: End
    choice: Choice


def cables(plan: Plan) -> list[Cable]:
    """Every link of the plan with its ends' hardware and its media choice, in plan order.

    A server end has no catalog model: it is assumed to take the same form factor as its leaf
    port (documented in docs/artifacts.md). Raises FabricError (exit 2) when no medium reaches.
    """
    models: dict[str, Model] = {m.name: m for m in plan.models}
    hardware = {d.name: (models[d.model], {b.port: b.count for b in d.breakouts}) for d in plan.devices}
    problems: list[Diagnostic] = []
    result: list[Cable] = []
    decided: dict[tuple[object, ...], Choice | None] = {}
    for link in plan.links:
        z_model, z_breakouts = hardware[link.z.device]
        z = End(link.z.device, link.z.port, link.z.interface, z_model.form_factor, z_model.speed, z_breakouts.get(link.z.port, 1))
        if link.a.device in hardware:
            a_model, a_breakouts = hardware[link.a.device]
            a = End(link.a.device, link.a.port, link.a.interface, a_model.form_factor, a_model.speed, a_breakouts.get(link.a.port, 1))
        else:
            a = End(link.a.device, link.a.port, link.a.interface, z.form_factor, link.speed, 1)
        # Many cables share the same hardware and length: decide once per combination, then
        # give each cable its own identities.
        signature = (link.speed, link.length_m, a.form_factor, a.cage_speed, a.shared, z.form_factor, z.cage_speed, z.shared)
        if signature not in decided:
            decided[signature] = choose(link.speed, link.length_m, a, z)
        template = decided[signature]
        choice = None
        if template is not None:
            t = template
            choice = Choice(t.medium, t.variant, t.kind, t.netbox_type, t.cable_part, t.a_optic, t.z_optic, *_keys(t.kind, a, z))
        if choice is None:
            problems.append(
                Diagnostic(
                    f"no cable medium in the catalog reaches {link.length_m:g} m at {link.speed}G "
                    f"({link.a.device} {link.a.interface} - {link.z.device} {link.z.interface})",
                    "cabling",
                    plan.source,
                )
            )
            continue
        result.append(Cable(link, a, z, choice))
    if problems:
        raise FabricError(problems)
    return result


def render_cables(plan: Plan, context: RenderContext) -> list[Cable]:
    """`cables(plan)` once per render: the cabling plan and the BOM both need every cable's media
    choice, and the BOM used to decide them all again. Kept in the render's context (dropped
    with it), checked against the plan it was computed for."""
    found = context.memo.get("cables")
    if found is None or found[0] is not plan:
        found = context.memo["cables"] = (plan, cables(plan))
    result: list[Cable] = found[1]
    return result
