"""Pass: choose the media of every cable (copper or fibre, parts) from the catalog.

The medium is a physical fact of the plan, so it is chosen here, once per link, and not by a
producer: `validate` then finds a cable that nothing in the catalog reaches, and says where
its length comes from (`cabling.length.<kind>` or the `cabling.overrides` entry), once per
such key rather than once per cable. The rule itself is `media_rules.choose_medium`, a pure
function of both ends' facts (form factor, lane rate, module, links per cage) and the length;
`plan.media` gives it those facts (switch cages, server NIC models) and names the parts.

Many cables share the same hardware and length: the rule runs once per combination and those
cables share one `Choice`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from fabricgen.core import media_rules as rules
from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.model import Choice, Device, Link, Model, NicModel, Server, SubnetManager
from fabricgen.core.records import record, replace
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.plan.media import End, Ends, choose


@record
class _Miss:
    """Cables of one length source that no medium reaches."""

    count: int
    example: Link
    a: End
    z: End

    @property
    def ends(self) -> tuple[End, End]:
        return self.a, self.z


def length_source(link: Link, overrides: Mapping[tuple[str, str], int]) -> PathKey:
    """The inventory key the cable's length comes from.

    >>> from fabricgen.core.model import Endpoint
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
    *,
    servers: Iterable[Server] = (),
    nics: Iterable[NicModel] = (),
    hosts: Iterable[SubnetManager] = (),
    table: rules.MediaTable | None = None,
) -> tuple[Link, ...]:
    """`links` with `media` set, in the same order; FabricError with one diagnostic per length
    key that some cable cannot be bought for. A server end takes its NIC model's facts
    (`servers`, `nics`), a dedicated SM host's end its HCA model's (`hosts`), or the far cage's
    when it has none."""
    table = table or rules.media_table()
    ends = Ends(devices, models, servers, nics, hosts)
    switches, server_nic = ends.switches, ends.server_nic
    decided: dict[tuple[object, ...], Choice | None] = {}
    misses: dict[PathKey, _Miss] = {}
    result: list[Link] = []
    for link in links:
        # Many cables share the same hardware and length: decide once per combination, and
        # build the full ends only then. A switch end is its model and how many links share
        # its cage, a host end its NIC model (shared 0): names, no objects, per cable.
        a, z, speed, length = link.a, link.z, link.speed, link.length_m
        z_model, z_breakouts = switches[z.device]
        near = switches.get(a.device)
        if near is None:
            nic = server_nic.get(a.device)
            a_name, a_shared = nic.name if nic else "", 0
        else:
            a_name, a_shared = near[0].name, near[1].get(a.port, 1) if near[1] else 1
        z_shared = z_breakouts.get(z.port, 1) if z_breakouts else 1
        signature = (speed, length, a_name, a_shared, z_model.name, z_shared)
        t = decided.get(signature, _UNDECIDED)
        if t is _UNDECIDED:
            t = decided[signature] = choose(speed, length, *ends.of(link), table)
        if t is None:
            _missed(misses, link, ends, overrides)
            continue
        result.append(replace(link, media=t))
    if misses:
        raise FabricError([_diagnostic(where, miss, source, table) for where, miss in sorted(misses.items(), key=lambda i: str(i[0]))])
    return tuple(result)


_UNDECIDED = Choice("", "", "", "", "", "", "")
"""Marks a combination not decided yet (None: decided, and nothing joins its ends)."""


def _missed(misses: dict[PathKey, _Miss], link: Link, ends: Ends, overrides: Mapping[tuple[str, str], int]) -> None:
    """Count a cable no medium reaches under the inventory key its length comes from."""
    where = length_source(link, overrides)
    miss = misses.get(where)
    misses[where] = _Miss(miss.count + 1, miss.example, *miss.ends) if miss else _Miss(1, link, *ends.of(link))


def _diagnostic(where: PathKey, miss: _Miss, source: SourceMap, table: rules.MediaTable) -> Diagnostic:
    """A length nothing reaches between these ends, or ends nothing joins at any length (lane
    rates no cable or module pair bridges): the hint differs."""
    link, a, z = miss.example, miss.a, miss.z
    others = f" and {miss.count - 1} more cable(s)" if miss.count > 1 else ""
    ends = f"{a.form_factor} ({a.lane_rate}G lanes) and {z.form_factor} ({z.lane_rate}G lanes)"
    cable = f"({link.a.device} {link.a.interface} - {link.z.device} {link.z.interface}{others})"
    if choose(link.speed, 0.0, a, z, table) is not None:
        return source.diagnostic(
            where,
            f"no cable medium in the catalog reaches {link.length_m:g} m at {link.speed}G between {ends} {cable}",
            hint="shorten the cable, or add a medium with that reach under `optics:` in the catalog",
        )
    return source.diagnostic(
        where,
        f"no cable medium in the catalog joins {ends} at {link.speed}G {cable}",
        hint="change the NIC model (`servers.nic`) or the speed, or add a medium for these ends under `optics:` in the catalog",
    )
