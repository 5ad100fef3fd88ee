"""The cable medium rule: which cable or optics joins two cage ends over a length, and why.

Pure functions of the two ends' facts (form factor, electrical lane rate, the module in the
cage and how many links share it), the link speed and the cable length, over the media table
in `data/catalog.yml` (`optics:`). Nothing here knows producers, plans or files, so a plan pass
and the artifact producers can both call it.

The rule, as NVIDIA's LinkX pages and IEEE 802.3 describe the parts:

- equal electrical lane rates: the first electrical medium (passive DAC, active copper, AOC)
  whose reach *at that lane rate* covers the length (100G-per-lane copper reaches less than
  50G-per-lane copper);
- different lane rates (8 x 50G QSFP-DD against a 4 x 100G NIC): no passive cable joins them;
  only an electrical medium marked `gearbox`, or optics;
- optics: the first optical medium whose module variant at each end exists and whose optical
  interface *per port* is the same at both ends (400G DR4 on an 8 x 50G QSFP-DD talks to one
  port of an 800G 2xDR4 twin-port module; SR8 does not talk to SR4), within both reaches.

>>> table = media_table()
>>> qsfp_dd = End("QSFP-DD", lane_rate=50, module_speed=400, shared=1)
>>> cx7 = End("OSFP", lane_rate=100, module_speed=400, shared=1)
>>> choose_medium(qsfp_dd, qsfp_dd, 3, table).name
'DAC'
>>> choose_medium(qsfp_dd, cx7, 3, table).name
'DR'
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from fabricgen.core.catalog import catalog_section
from fabricgen.core.records import record


class End(NamedTuple):
    """One end of a cable as the rule sees it (a tuple: the rule's results are cached per pair
    of ends, and tuples hash in C). `lane_rate`: Gb/s per electrical lane at the link
    speed; `module_speed`: speed of the module (or cable end) in the cage, the cage's whole
    speed when several links share it; `shared`: links sharing that cage (1 = its own)."""

    form_factor: str
    lane_rate: int
    module_speed: int
    shared: int


@record
class Electrical:
    """A cable with its ends built in (DAC, active copper, AOC): reach per lane rate."""

    name: str
    kind: str
    netbox_type: str
    reach_m: dict[int, float]
    gearbox: bool


@record
class Variant:
    """One optical module: its name, the optical interface of each of its `ports` (what the far
    end must match), its reach and the patch cord part its ports take."""

    name: str
    port: str
    reach_m: float
    ports: int
    fibre: str
    link: str = ""
    """What one port of the module is called on its own (`DR4` for a `2xDR4`)."""
    split: dict[int, str] | None = None
    """Links per module -> optical interface of each when a port is broken out (400G DR4 as
    4 x 100G DR); a module without an entry cannot be split that way."""

    def interface(self, shared: int) -> str | None:
        """The optical interface one link sees, when `shared` links use this module."""
        if shared <= self.ports:
            return self.port
        return (self.split or {}).get(shared)


@record
class Optical:
    name: str
    netbox_type: str
    variants: dict[str, Variant]
    """`<module speed>@<lane rate>` -> module."""


@record
class MediaTable:
    electrical: tuple[Electrical, ...]
    optical: tuple[Optical, ...]
    part: str
    cable_part: str
    breakout_cable_part: str
    splitter_part: str


@record
class Medium:
    """The decision for one cable. Electrical media leave `a`/`z` None; optics name the module at
    each end (a twin-port or broken-out cage's module serves all links sharing it)."""

    name: str
    kind: str
    netbox_type: str
    reach_m: float
    a: Variant | None = None
    z: Variant | None = None

    def link_variant(self, a: End, z: End) -> str:
        """The medium as one link sees it: `DAC`, `SR8`, `2xDR4` between two 800G modules, but
        `DR4` on one port of a shared twin-port 2xDR4 module."""
        if self.a is None or self.z is None:
            return self.name
        if a.shared == 1:
            return self.a.name
        if z.shared == 1:
            return self.z.name
        return self.a.link


def _electrical(name: str, entry: dict[str, Any]) -> Electrical:
    return Electrical(
        name=name,
        kind=str(entry["kind"]),
        netbox_type=str(entry["netbox_type"]),
        reach_m={int(rate): float(reach) for rate, reach in entry["reach_m"].items()},
        gearbox=bool(entry.get("gearbox", False)),
    )


def _optical(name: str, entry: dict[str, Any]) -> Optical:
    variants = {
        str(key): Variant(
            str(v["name"]),
            str(v["port"]),
            float(v["reach_m"]),
            int(v["ports"]),
            str(v["fibre"]),
            str(v.get("link", v["name"])),
            {int(n): str(i) for n, i in v["split"].items()} if "split" in v else None,
        )
        for key, v in entry["variants"].items()
    }
    return Optical(name=name, netbox_type=str(entry["netbox_type"]), variants=variants)


def table_from(optics: dict[str, Any]) -> MediaTable:
    """The media table from the catalog's `optics:` section (or a test's own)."""
    return MediaTable(
        electrical=tuple(_electrical(name, entry) for name, entry in optics["electrical"].items()),
        optical=tuple(_optical(name, entry) for name, entry in optics["fibre"].items()),
        part=str(optics["part"]),
        cable_part=str(optics["cable_part"]),
        breakout_cable_part=str(optics["breakout_cable_part"]),
        splitter_part=str(optics["splitter_part"]),
    )


@cache
def media_table() -> MediaTable:
    """The built-in media table, parsed once per process."""
    return table_from(catalog_section("optics"))


def lane_rate(speed: int, lanes: int, per_cage: int) -> int:
    """Gb/s per electrical lane of a logical port at `speed` when its cage of `lanes` lanes is split
    `per_cage` ways (a NIC: per_cage 1, all its lanes).

    >>> lane_rate(400, 8, 1), lane_rate(400, 8, 2), lane_rate(200, 8, 4), lane_rate(100, 4, 2)
    (50, 100, 100, 50)
    """
    return speed * per_cage // max(lanes, 1)


def choose_electrical(a: End, z: End, length_m: float, table: MediaTable) -> Electrical | None:
    """The first cable with built-in ends that joins the two lane rates and reaches the length."""
    for medium in table.electrical:
        if a.lane_rate != z.lane_rate and not medium.gearbox:
            continue
        reach = medium.reach_m.get(min(a.lane_rate, z.lane_rate))
        if reach is not None and length_m <= reach:
            return medium
    return None


def module(optical: Optical, end: End) -> Variant | None:
    """The module this medium puts into `end`'s cage, or None when the medium has none for it."""
    return optical.variants.get(f"{end.module_speed}@{end.lane_rate}")


def choose_optics(a: End, z: End, length_m: float, table: MediaTable) -> Medium | None:
    """The first optical medium with a module at both ends, the same optical interface per port
    and a reach (the shorter module's) covering the length."""
    for optical in table.optical:
        va, vz = module(optical, a), module(optical, z)
        if va is None or vz is None or va.interface(a.shared) is None or va.interface(a.shared) != vz.interface(z.shared):
            continue
        reach = min(va.reach_m, vz.reach_m)
        if length_m <= reach:
            return Medium(optical.name, "fibre", optical.netbox_type, reach, va, vz)
    return None


def choose_medium(a: End, z: End, length_m: float, table: MediaTable | None = None) -> Medium | None:
    """Electrical when it reaches at the ends' lane rate, else optics; None when nothing does."""
    table = table or media_table()
    cable = choose_electrical(a, z, length_m, table)
    if cable is not None:
        return Medium(cable.name, cable.kind, cable.netbox_type, cable.reach_m[min(a.lane_rate, z.lane_rate)])
    return choose_optics(a, z, length_m, table)


def patch_cords(medium: Medium, a: End, z: End) -> int:
    """Fibre ports one link uses: each optical port of a module takes its own patch cord (an 800G
    2xDR4 link: two MPO cords); a link on one port of a shared module: one; 0 when several links
    share one optical port (a 1:2 splitter cord, counted per port by the caller).

    >>> v = Variant("2xDR4", "DR4", 500, 2, "SMF")
    >>> m = Medium("DR", "fibre", "smf-os2", 500, v, v)
    >>> patch_cords(m, End("OSFP", 100, 800, 1), End("OSFP", 100, 800, 1))
    2
    """
    if medium.a is None or medium.z is None:
        return 0
    return min(medium.a.ports // a.shared, medium.z.ports // z.shared)
