"""Media of one cable from the hardware at its two ends, the parts it takes and their identities.

The rule (which medium joins two ends over a length) is `fabricgen/core/media_rules.py`, a pure
function of the ends' facts. This module gives it those facts from the plan's parts (switch
cage or server NIC: form factor, lane rate, the module in the cage and how many links share it)
and names the parts. The planner's media pass (`plan/passes/media.py`) stores the resulting
`Choice` on every link, and `build_plan` stores each link's ends and physical items
(`cables_of`) as `Plan.cables`; the cabling plan, the BOM and the NetBox export read them
from the plan, so they can never disagree.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from fabricgen.core import media_rules as rules
from fabricgen.core.model import Cable, CableEnd, Choice, Device, Identities, Link, Model, NicModel, Server, SubnetManager

Key = tuple[str, ...]
End = CableEnd
"""One end's hardware (`core.model.CableEnd`), by its short name here."""


def facts(end: End) -> rules.End:
    """What the media rule sees of an end: one instance per distinct hardware (the rule runs per
    combination; the cabling reads only the ends' names and sharing)."""
    return _facts(end.form_factor, end.lane_rate, end.cage_speed, end.shared)


@cache
def _facts(form_factor: str, lane_rate: int, cage_speed: int, shared: int) -> rules.End:
    return rules.End(form_factor, lane_rate, cage_speed, shared)


def _end_key(end: End) -> Key:
    return (end.device, str(end.port)) if end.shared > 1 else (end.device, end.interface)


def _pair(a: End, z: End) -> str:
    return a.form_factor if a.form_factor == z.form_factor else f"{a.form_factor}-to-{z.form_factor}"


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
    return Choice(medium.name, medium.name, medium.kind, medium.netbox_type, part, "", "")


def _cord_part(medium: rules.Medium, a: End, z: End, table: rules.MediaTable) -> str:
    """The patch cord: one per optical port a link uses, or, when several links share one optical
    port (NDR200 on a twin-port module), a 1:N splitter cord per shared port."""
    assert medium.a is not None and medium.z is not None
    if rules.patch_cords(medium, facts(a), facts(z)) > 0:
        return medium.a.fibre
    shared, variant = (a, medium.a) if a.shared > medium.a.ports else (z, medium.z)
    return table.splitter_part.format(fibre=variant.fibre, count=shared.shared // variant.ports)


def parts_for(medium: rules.Medium, speed: int, a: End, z: End, table: rules.MediaTable) -> Choice:
    """The parts a decided medium takes between these two ends."""
    if medium.a is None or medium.z is None:
        return _electrical(medium, speed, a, z, table)
    return Choice(
        medium.name,
        medium.link_variant(facts(a), facts(z)),
        "fibre",
        medium.netbox_type,
        _cord_part(medium, a, z, table),
        table.part.format(form_factor=a.form_factor, speed=a.cage_speed, variant=medium.a.name),
        table.part.format(form_factor=z.form_factor, speed=z.cage_speed, variant=medium.z.name),
        medium.a.ports,
        medium.z.ports,
    )


def choose(speed: int, length_m: float, a: End, z: End, table: rules.MediaTable | None = None) -> Choice | None:
    """The medium and parts for one cable; None when nothing in the catalog joins its ends."""
    table = table or rules.media_table()
    medium = rules.choose_medium(facts(a), facts(z), length_m, table)
    return None if medium is None else parts_for(medium, speed, a, z, table)


def _electrical_key(a: End, z: End) -> Key:
    """One cable per shared cage (a breakout cable), else per pair of interfaces."""
    if a.shared > 1 and z.shared > 1:
        return ("cable", *_end_key(a), *_end_key(z))
    if a.shared > 1:
        return ("cable", *_end_key(a))
    if z.shared > 1:
        return ("cable", *_end_key(z))
    return ("cable", *_end_key(a), *_end_key(z))


_CORD_NUMBERS = tuple(str(i) for i in range(8))


def _cord_numbers(cords: int) -> tuple[str, ...]:
    """`("0", ..., str(cords - 1))`: the patch cords of one link, numbered."""
    return _CORD_NUMBERS[:cords] if cords <= len(_CORD_NUMBERS) else tuple(map(str, range(cords)))


def identities(choice: Choice, a: End, z: End) -> Identities:
    """The physical items of one cable, from its chosen media and its two ends.

    >>> a, z = End("l1", 1, "Ethernet1/1", "OSFP", 800, 1, 100), End("s1", 9, "Ethernet9/1", "OSFP", 800, 1, 100)
    >>> twin = Choice("DR", "2xDR4", "fibre", "smf-os2", "SMF-OS2-MPO-12-APC", "OSFP-800G-2xDR4", "OSFP-800G-2xDR4", 2, 2)
    >>> len(identities(twin, a, z).cables)
    2
    """
    if choice.kind != "fibre":
        return Identities((_electrical_key(a, z),), (), ())
    cords = min(choice.a_ports // a.shared, choice.z_ports // z.shared)
    if cords > 0:
        a_key = (a.device, a.interface) if a.shared == 1 else _end_key(a)
        z_key = (z.device, z.interface) if z.shared == 1 else _end_key(z)
        ends = (a.device, a.interface, z.device, z.interface)
        if cords == 1:  # most links: no loop to build one tuple
            return Identities((("fibre", *ends, "0"),), a_key, z_key)
        return Identities(tuple([("fibre", *ends, number) for number in _cord_numbers(cords)]), a_key, z_key)
    shared, ports = (a, choice.a_ports) if a.shared > choice.a_ports else (z, choice.z_ports)
    per_port = shared.shared // max(ports, 1)
    splitter = ("splitter", shared.device, str(shared.port), str((shared.sub - 1) // per_port))
    return Identities((splitter,), _end_key(a), _end_key(z))


class Ends:
    """Builds the End of each link end from the switches' models and breakouts and the servers'
    (and dedicated SM hosts') NIC models."""

    def __init__(
        self,
        devices: Iterable[Device],
        models: Iterable[Model],
        servers: Iterable[Server] = (),
        nics: Iterable[NicModel] = (),
        hosts: Iterable[SubnetManager] = (),
    ) -> None:
        by_name: dict[str, Model] = {m.name: m for m in models}
        devices = tuple(devices)
        self.switches = {d.name: (by_name[d.model], {b.port: b.count for b in d.breakouts}) for d in devices}
        self.subs = {(d.name, i.name): i.sub for d in devices for i in d.interfaces if i.sub > 1}
        nic_by_name: dict[str, NicModel] = {n.name: n for n in nics}
        self.server_nic = {s.name: nic_by_name[s.nic_model] for s in servers if s.nic_model in nic_by_name}
        # Dedicated subnet-manager hosts: their HCA is an end like a server's NIC.
        self.server_nic.update({h.host: nic_by_name[h.nic_model] for h in hosts if not h.server and h.nic_model in nic_by_name})
        self._server_facts: dict[tuple[str, int, rules.End], rules.End] = {}
        self._switch_facts: dict[tuple[str, int, int], rules.End] = {}

    def switch(self, device: str, port: int, interface: str, speed: int) -> End:
        model, breakouts = self.switches[device]
        shared = breakouts.get(port, 1) if breakouts else 1
        if shared == 1:  # most ports: no breakout, no shared cage
            return End(device, port, interface, model.form_factor, speed, 1, speed // max(model.lanes, 1))
        rate = speed * shared // max(model.lanes, 1)  # rules.lane_rate, inlined: once per link end
        sub = self.subs.get((device, interface), 1)
        return End(device, port, interface, model.form_factor, model.cage_speed, shared, rate, sub)

    def switch_facts(self, device: str, port: int, speed: int) -> rules.End:
        """What the rule sees of a switch end: `facts(switch(...))` without building the End, once
        per (model, links sharing the cage, speed)."""
        model, breakouts = self.switches[device]
        shared = breakouts.get(port, 1)
        key = (model.name, shared, speed)
        found = self._switch_facts.get(key)
        if found is None:
            rate = speed * shared // max(model.lanes, 1)
            found = self._switch_facts[key] = rules.End(model.form_factor, rate, model.cage_speed if shared > 1 else speed, shared)
        return found

    def facts_of(self, link: Link) -> tuple[rules.End, rules.End]:
        """Both ends' rule facts, `(facts(a), facts(z))` of `of(link)`, at a fraction of the cost:
        the media pass needs the full ends only once per distinct combination."""
        z = self.switch_facts(link.z.device, link.z.port, link.speed)
        if link.a.device in self.switches:
            return self.switch_facts(link.a.device, link.a.port, link.speed), z
        nic = self.server_nic.get(link.a.device)
        key = (nic.name if nic else "", link.speed, z)
        a = self._server_facts.get(key)
        if a is None:
            a = self._server_facts[key] = facts(self.server(link, self.switch(link.z.device, link.z.port, link.z.interface, link.speed)))
        return a, z

    def of(self, link: Link) -> tuple[End, End]:
        """Both ends of `link` (A: a leaf or a server, Z: a switch)."""
        z = self.switch(link.z.device, link.z.port, link.z.interface, link.speed)
        if link.a.device in self.switches:
            return self.switch(link.a.device, link.a.port, link.a.interface, link.speed), z
        return self.server(link, z), z

    def server(self, link: Link, far: End) -> End:
        """The server (A) end of `link`, whose far end is `far`."""
        end = link.a
        nic = self.server_nic.get(end.device)
        if nic is None:  # no NIC model known: the far cage's facts (plans built without one)
            return End(end.device, end.port, end.interface, far.form_factor, link.speed, 1, far.lane_rate)
        return nic_end(end.device, end.port, end.interface, nic, link.speed, far.lane_rate)


def nic_end(device: str, port: int, interface: str, nic: NicModel, speed: int, far_rate: int) -> End:
    """A NIC below its native speed runs fewer or slower lanes: 200G as 4 x 50G (HDR) or as
    2 x 100G (NDR200, in its 400G module), 100G as 2 x 50G. It runs the far end's lane rate
    when its lanes can carry the speed at that rate, else all its lanes evenly."""
    fits = far_rate <= nic.lane_rate and speed % far_rate == 0 and speed // far_rate <= nic.lanes
    rate = far_rate if fits else rules.lane_rate(speed, nic.lanes, 1)
    # Several native lanes run in the NIC's own module (NDR200: 2 of a 400G module's 4
    # channels); one lane, or slower lanes, take a module of the link's speed.
    module_speed = nic.speed if rate == nic.lane_rate and speed // rate >= 2 else speed
    return End(device, port, interface, nic.form_factor, module_speed, 1, rate)


def cables_of(
    links: Iterable[Link],
    devices: Iterable[Device],
    models: Iterable[Model],
    servers: Iterable[Server] = (),
    nics: Iterable[NicModel] = (),
    hosts: Iterable[SubnetManager] = (),
) -> tuple[Cable, ...]:
    """Every link (media chosen) with its ends' hardware and its physical items, in link order:
    the plan's `cables`, built once by the planner so the cabling plan, the BOM and the NetBox
    export read the same objects in any process."""
    ends = Ends(devices, models, servers, nics, hosts)
    switch, server, switches = ends.switch, ends.server, ends.switches
    result: list[Cable] = []
    for link in links:  # `ends.of(link)`, inlined: this loop runs once per cable
        choice = link.media
        assert choice is not None, link
        near, far = link.a, link.z
        z = switch(far.device, far.port, far.interface, link.speed)
        a = switch(near.device, near.port, near.interface, link.speed) if near.device in switches else server(link, z)
        result.append(Cable(link, a, z, choice, identities(choice, a, z)))
    return tuple(result)
