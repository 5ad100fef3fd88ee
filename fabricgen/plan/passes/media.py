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
from fabricgen.core.records import record
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.plan.media import End, Ends, choose
from fabricgen.plan.passes.ports import AnyLink


@record
class _Miss:
    """Cables of one length source that no medium reaches."""

    count: int
    example: AnyLink
    a: End
    z: End

    @property
    def ends(self) -> tuple[End, End]:
        return self.a, self.z


def length_source(link: AnyLink, overrides: Mapping[tuple[str, str], int]) -> PathKey:
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
    links: Iterable[AnyLink],
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
    """`links` (drafts or links) as `Link`s with `media` set, in the same order; FabricError with one diagnostic per length
    key that some cable cannot be bought for. A server end takes its NIC model's facts
    (`servers`, `nics`), a dedicated SM host's end its HCA model's (`hosts`), or the far cage's
    when it has none."""
    table = table or rules.media_table()
    ends = Ends(devices, models, servers, nics, hosts)
    decided: dict[tuple[object, ...], Choice | None] = {}
    misses: dict[PathKey, _Miss] = {}
    result: list[Link] = []
    for link in links:
        # Many cables share the same hardware and length: decide once per combination, and
        # build the full ends only then.
        signature = (link.speed, link.length_m, *ends.facts_of(link))
        if signature not in decided:
            decided[signature] = choose(link.speed, link.length_m, *ends.of(link), table)
        t = decided[signature]
        if t is None:
            where = length_source(link, overrides)
            miss = misses.get(where)
            misses[where] = _Miss(miss.count + 1, miss.example, *miss.ends) if miss else _Miss(1, link, *ends.of(link))
            continue
        result.append(_with_media(link, t))
    if misses:
        raise FabricError([_diagnostic(where, miss, source, table) for where, miss in sorted(misses.items(), key=lambda i: str(i[0]))])
    return tuple(result)


def _with_media(link: AnyLink, media: Choice) -> Link:
    return Link(link.kind, link.a, link.z, link.speed, link.subnet, link.a_address, link.z_address, link.length_m, media, link.mtu)


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
