"""Cable media of every link of a plan, with the parts each cable needs and their identities.

The rule (which medium joins two ends over a length) is `fabricgen/media_rules.py`; this module
gives it the facts of each end from the plan (switch cage or server NIC: form factor, lane rate,
the module in the cage and how many links share it), then names the parts. The cabling plan,
the BOM and the NetBox export all read `cables(plan)`, so they can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabricgen import media_rules as rules
from fabricgen.diagnostics import Diagnostic, FabricError
from fabricgen.model import Link, Model, NicModel, Plan

if TYPE_CHECKING:
    from fabricgen.render import RenderContext

Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class End:
    """The hardware at one end of a cable: the cage's form factor, the speed of the module (or
    cable end) in it, how many links share that cage, and the lane rate of this link there."""

    device: str
    port: int
    interface: str
    form_factor: str
    cage_speed: int
    shared: int
    lane_rate: int = 0
    sub: int = 1
    facts: rules.End = field(init=False, repr=False, compare=False)
    """What the media rule sees of this end (computed once: the rule runs per combination)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "facts", rules.End(self.form_factor, self.lane_rate, self.cage_speed, self.shared))


@dataclass(frozen=True, slots=True)
class Choice:
    """What one cable needs. `cable_part` is the copper/AOC cable or the fibre patch cord (a 1:N
    splitter cord when several links share one optical port); `a_optic`/`z_optic` the
    transceivers (empty for cables with built-in ends). `*_key(s)` identify physical items for
    counting: a shared cage holds one module (or one breakout cable) for all its links, a twin-port
    module's two optical ports take two cords."""

    medium: str
    variant: str
    kind: str
    netbox_type: str
    cable_part: str
    a_optic: str
    z_optic: str
    cable_keys: tuple[Key, ...]
    a_key: Key
    z_key: Key

    @property
    def cable_key(self) -> Key:
        return self.cable_keys[0]


def _end_key(end: End) -> Key:
    return (end.device, str(end.port)) if end.shared > 1 else (end.device, end.interface)


def _electrical(medium: rules.Medium, speed: int, a: End, z: End, table: rules.MediaTable) -> Choice:
    """A cable with built-in ends: straight, or one breakout (splitter) cable per shared cage."""
    broken = a if a.shared > 1 else z if z.shared > 1 else None
    if a.shared > 1 and z.shared > 1:
        part = table.cable_part.format(form_factor=_pair(a, z), speed=a.cage_speed, variant=medium.name)
    elif broken is not None:
        far = z if broken is a else a
        part = table.breakout_cable_part.format(
            form_factor=broken.form_factor,
            cage_speed=broken.cage_speed,
            count=broken.shared,
            far_form_factor=far.form_factor,
            speed=speed,
            variant=medium.name,
        )
    else:
        part = table.cable_part.format(form_factor=_pair(a, z), speed=speed, variant=medium.name)
    return Choice(medium.name, medium.name, medium.kind, medium.netbox_type, part, "", "", (_electrical_key(a, z),), (), ())


def _electrical_key(a: End, z: End) -> Key:
    """One cable per shared cage (a breakout cable), else per pair of interfaces."""
    if a.shared > 1 and z.shared > 1:
        return ("cable", *_end_key(a), *_end_key(z))
    if a.shared > 1:
        return ("cable", *_end_key(a))
    if z.shared > 1:
        return ("cable", *_end_key(z))
    return ("cable", *_end_key(a), *_end_key(z))


def _pair(a: End, z: End) -> str:
    return a.form_factor if a.form_factor == z.form_factor else f"{a.form_factor}-to-{z.form_factor}"


def _fibre_keys(medium: rules.Medium, a: End, z: End, table: rules.MediaTable) -> tuple[str, tuple[Key, ...]]:
    """The patch cord part and one identity per cord: a cord per optical port the link uses, or,
    when several links share one optical port (NDR200 on a twin-port module), one 1:N splitter
    cord per shared port."""
    assert medium.a is not None and medium.z is not None
    cords = rules.patch_cords(medium, a.facts, z.facts)
    link: Key = ("fibre", a.device, a.interface, z.device, z.interface)
    if cords > 0:
        return medium.a.fibre, tuple((*link, str(i)) for i in range(cords))
    shared, variant = (a, medium.a) if a.shared > medium.a.ports else (z, medium.z)
    per_port = shared.shared // variant.ports
    part = table.splitter_part.format(fibre=variant.fibre, count=per_port)
    return part, (("splitter", shared.device, str(shared.port), str((shared.sub - 1) // per_port)),)


def decide(speed: int, length_m: float, a: End, z: End, table: rules.MediaTable | None = None) -> Choice | None:
    """The medium and parts for one cable; None when nothing in the catalog joins its ends."""
    table = table or rules.media_table()
    medium = rules.choose_medium(a.facts, z.facts, length_m, table)
    return None if medium is None else parts_for(medium, speed, a, z, table)


def parts_for(medium: rules.Medium, speed: int, a: End, z: End, table: rules.MediaTable) -> Choice:
    """The parts a decided medium takes between these two ends, with their identities."""
    if medium.a is None or medium.z is None:
        return _electrical(medium, speed, a, z, table)
    part, keys = _fibre_keys(medium, a, z, table)
    a_optic = table.part.format(form_factor=a.form_factor, speed=a.cage_speed, variant=medium.a.name)
    z_optic = table.part.format(form_factor=z.form_factor, speed=z.cage_speed, variant=medium.z.name)
    return Choice(
        medium.name,
        medium.link_variant(a.facts, z.facts),
        "fibre",
        medium.netbox_type,
        part,
        a_optic,
        z_optic,
        keys,
        _end_key(a),
        _end_key(z),
    )


class _Names:
    """`parts_for` with the part names of each (medium, speed, end facts) combination worked out
    once: at 10,000 links the names repeat, only the identities differ."""

    def __init__(self, table: rules.MediaTable) -> None:
        self.table = table
        self.seen: dict[tuple[object, ...], Choice] = {}

    def parts(self, medium: rules.Medium, speed: int, a: End, z: End) -> Choice:
        key = (id(medium), speed, a.facts, z.facts)
        template = self.seen.get(key)
        if template is None:
            template = self.seen[key] = parts_for(medium, speed, a, z, self.table)
            return template
        t = template
        if t.kind != "fibre":
            return Choice(t.medium, t.variant, t.kind, t.netbox_type, t.cable_part, "", "", (_electrical_key(a, z),), (), ())
        _, cords = _fibre_keys(medium, a, z, self.table)
        return Choice(t.medium, t.variant, t.kind, t.netbox_type, t.cable_part, t.a_optic, t.z_optic, cords, _end_key(a), _end_key(z))


@dataclass(frozen=True, slots=True)
class Cable:
    link: Link
    a: End
    z: End
    choice: Choice


class _Ends:
    """Builds the End of each link end from the plan's devices, breakouts and server NICs."""

    def __init__(self, plan: Plan) -> None:
        models: dict[str, Model] = {m.name: m for m in plan.models}
        self.switches = {d.name: (models[d.model], {b.port: b.count for b in d.breakouts}) for d in plan.devices}
        self.subs = {(d.name, i.name): i.sub for d in plan.devices for i in d.interfaces}
        nics: dict[str, NicModel] = {n.name: n for n in plan.nics}
        default = plan.nics[0] if plan.nics else None
        self.server_nic = {s.name: nics.get(s.nic_model, default) for s in plan.servers}

    def switch(self, device: str, port: int, interface: str, speed: int) -> End:
        model, breakouts = self.switches[device]
        shared = breakouts.get(port, 1)
        module_speed = model.cage_speed if shared > 1 else speed
        rate = speed * shared // max(model.lanes, 1)  # rules.lane_rate, inlined: once per link end
        return End(
            device,
            port,
            interface,
            model.form_factor,
            module_speed,
            shared,
            rate,
            self.subs.get((device, interface), 1) if shared > 1 else 1,
        )

    def of(self, link: Link, side: str) -> End:
        end = link.a if side == "a" else link.z
        if end.device in self.switches:
            return self.switch(end.device, end.port, end.interface, link.speed)
        return self.server(link, self.of(link, "z" if side == "a" else "a"))

    def server(self, link: Link, far: End) -> End:
        """The server (A) end of `link`, whose far end is `far`."""
        end = link.a
        nic = self.server_nic.get(end.device)
        if nic is None:  # no NIC model known: the far cage's facts (plans built without one)
            return End(end.device, end.port, end.interface, far.form_factor, link.speed, 1, far.lane_rate)
        return self.nic(end.device, end.port, end.interface, nic, link.speed, far.lane_rate)

    @staticmethod
    def nic(device: str, port: int, interface: str, nic: NicModel, speed: int, far_rate: int) -> End:
        """A NIC below its native speed runs fewer or slower lanes: 200G as 4 x 50G (HDR) or as
        2 x 100G (NDR200, in its 400G module), 100G as 2 x 50G. It runs the far end's lane rate
        when its lanes can carry the speed at that rate, else all its lanes evenly."""
        fits = far_rate <= nic.lane_rate and speed % far_rate == 0 and speed // far_rate <= nic.lanes
        rate = far_rate if fits else rules.lane_rate(speed, nic.lanes, 1)
        # Several native lanes run in the NIC's own module (NDR200: 2 of a 400G module's 4
        # channels); one lane, or slower lanes, take a module of the link's speed.
        module_speed = nic.speed if rate == nic.lane_rate and speed // rate >= 2 else speed
        return End(device, port, interface, nic.form_factor, module_speed, 1, rate)


def cables(plan: Plan) -> list[Cable]:
    """Every link of the plan with its ends' hardware and its media choice, in plan order.
    Raises FabricError (exit 2) when no medium joins a cable's ends over its length."""
    ends = _Ends(plan)
    problems: list[Diagnostic] = []
    result: list[Cable] = []
    decided: dict[tuple[object, ...], rules.Medium | None] = {}
    table = rules.media_table()
    names = _Names(table)
    for link in plan.links:
        z = ends.switch(link.z.device, link.z.port, link.z.interface, link.speed)
        a = (
            ends.switch(link.a.device, link.a.port, link.a.interface, link.speed)
            if link.a.device in ends.switches
            else ends.server(link, z)
        )
        # Many cables share the same hardware and length: decide the medium once per combination.
        signature = (link.length_m, a.facts, z.facts)
        if signature not in decided:
            decided[signature] = rules.choose_medium(a.facts, z.facts, link.length_m, table)
        medium = decided[signature]
        if medium is None:
            problems.append(
                Diagnostic(
                    f"no cable medium in the catalog joins {a.form_factor} ({a.lane_rate}G lanes) and {z.form_factor} "
                    f"({z.lane_rate}G lanes) over {link.length_m:g} m at {link.speed}G "
                    f"({link.a.device} {link.a.interface} - {link.z.device} {link.z.interface})",
                    "cabling",
                    plan.source,
                )
            )
            continue
        result.append(Cable(link, a, z, names.parts(medium, link.speed, a, z)))
    if problems:
        raise FabricError(problems)
    return result


def render_cables(plan: Plan, context: RenderContext) -> list[Cable]:
    """`cables(plan)` once per render: the cabling plan, the BOM and the NetBox export all need
    every cable's media choice. Kept in the render's context (dropped with it), checked against
    the plan it was computed for."""
    found = context.memo.get("cables")
    if found is None or found[0] is not plan:
        found = context.memo["cables"] = (plan, cables(plan))
    result: list[Cable] = found[1]
    return result
