"""`bom.csv`: the optics and cables the cabling plan needs, per part type (and length for cables).

Counts physical items: a cage broken out into several links holds one transceiver (or one
breakout cable) whatever the number of links it serves; each fibre link needs one patch cord.
"""

from __future__ import annotations

from collections import defaultdict

from fabricgen.artifacts.cabling import media
from fabricgen.artifacts.common import csv_text, metres
from fabricgen.context import RenderContext
from fabricgen.model import Plan
from fabricgen.plan.media import cage_facts, keys, link_ends

COLUMNS = ("category", "part", "length_m", "count")


def bom_rows(plan: Plan) -> list[tuple[str, str, str, int]]:
    """Physical items per (category, part, length), from the media the planner chose."""
    items: dict[tuple[str, str, str], set[tuple[str, ...]]] = defaultdict(set)
    hardware = cage_facts(plan.devices, plan.models)
    for cable in plan.links:
        choice = media(cable)
        length = metres(cable.length_m)
        cable_key, a_key, z_key = keys(choice.kind, *link_ends(cable, hardware))
        if choice.kind == "copper":
            items[("cable", choice.cable_part, length)].add(cable_key)
            continue
        items[("fibre", choice.cable_part, length)].add(cable_key)
        items[("transceiver", choice.a_optic, "")].add(a_key)
        items[("transceiver", choice.z_optic, "")].add(z_key)
    order = {"transceiver": 0, "cable": 1, "fibre": 2}
    rows = sorted(items, key=lambda k: (order[k[0]], k[1], float(k[2] or 0)))
    return [(category, part, length, len(items[(category, part, length)])) for category, part, length in rows]


def bom(plan: Plan, context: RenderContext) -> dict[str, str]:
    return {"bom.csv": csv_text(COLUMNS, bom_rows(plan))}
