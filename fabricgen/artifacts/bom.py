"""`bom.csv`: the optics and cables the cabling plan needs, per part type (and length for cables).

Counts physical items: a shared cage (broken out, or a twin-port cage) holds one module (or one
breakout / splitter cable) whatever the number of links it serves; each optical port a link uses
takes its own patch cord (an 800G 2xDR4 link: two), links sharing one optical port share one
1:N splitter cord. The parts are the media the planner chose (`Link.media`); the identities
come from each link's ends (`plan.media.identities`).
"""

from __future__ import annotations

from collections import defaultdict

from fabricgen.artifacts.common import csv_text, metres
from fabricgen.core.model import Cable, Plan
from fabricgen.render.context import RenderContext

COLUMNS = ("category", "part", "length_m", "count")


def bom_rows(plan: Plan, chosen: tuple[Cable, ...] | None = None) -> list[tuple[str, str, str, int]]:
    """Physical items per (category, part, length); `chosen` is `plan.cables` when already known."""
    items: dict[tuple[str, str, str], set[tuple[str, ...]]] = defaultdict(set)
    for cable in plan.cables if chosen is None else chosen:
        choice = cable.choice
        length = metres(cable.link.length_m)
        if choice.kind != "fibre":
            items[("cable", choice.cable_part, length)].update(cable.items.cables)
            continue
        items[("fibre", choice.cable_part, length)].update(cable.items.cables)
        items[("transceiver", choice.a_optic, "")].add(cable.items.a)
        items[("transceiver", choice.z_optic, "")].add(cable.items.z)
    order = {"transceiver": 0, "cable": 1, "fibre": 2}
    rows = sorted(items, key=lambda k: (order[k[0]], k[1], float(k[2] or 0)))
    return [(category, part, length, len(items[(category, part, length)])) for category, part, length in rows]


def bom(plan: Plan, context: RenderContext) -> dict[str, str]:
    return {"bom.csv": csv_text(COLUMNS, bom_rows(plan))}
