"""`cabling.csv` (NetBox cable import) and `cabling.md` (the same cables for people).

One row per cable, A end (lower tier: server or leaf) to Z end (upper tier), sorted by A device
and port. The CSV's columns are exactly the fields of NetBox's cable bulk import (NetBox
rejects unknown column headers), so speed, medium and parts travel in `description`; the
Markdown table shows them as columns.
"""

from __future__ import annotations

from fabricgen.artifacts.common import csv_text, md_table, metres, natural_key
from fabricgen.context import RenderContext
from fabricgen.model import Choice, Link, Plan

NETBOX_COLUMNS = (
    "side_a_device",
    "side_a_type",
    "side_a_name",
    "side_b_device",
    "side_b_type",
    "side_b_name",
    "type",
    "status",
    "label",
    "length",
    "length_unit",
    "description",
)


def sorted_cables(plan: Plan) -> list[Link]:
    """The cables in A-device, A-port order."""
    return sorted(plan.links, key=lambda c: (natural_key(c.a.device), natural_key(c.a.interface), natural_key(c.z.device)))


def cable_label(cable: Link) -> str:
    """Stable under growth: derived from the two ends, not from a running number."""
    return f"{cable.a.device}:{cable.a.interface}--{cable.z.device}:{cable.z.interface}"


def media(cable: Link) -> Choice:
    """The media the planner chose (every link of a finished plan has one)."""
    assert cable.media is not None, cable
    return cable.media


def parts(cable: Link) -> str:
    choice = media(cable)
    if choice.kind == "copper":
        return choice.cable_part
    ends = choice.a_optic if choice.a_optic == choice.z_optic else f"{choice.a_optic} / {choice.z_optic}"
    return f"{ends} + {choice.cable_part}"


def cabling(plan: Plan, context: RenderContext) -> dict[str, str]:
    rows = sorted_cables(plan)
    csv_rows = [
        (
            c.a.device,
            "dcim.interface",
            c.a.interface,
            c.z.device,
            "dcim.interface",
            c.z.interface,
            media(c).netbox_type,
            "planned",
            cable_label(c),
            metres(c.length_m),
            "m",
            f"{c.speed}G {media(c).variant}: {parts(c)}",
        )
        for c in rows
    ]
    md_rows = [
        (
            c.a.device,
            c.a.interface,
            c.z.device,
            c.z.interface,
            f"{c.speed}G",
            media(c).variant,
            parts(c),
            metres(c.length_m),
        )
        for c in rows
    ]
    header = f"# Cabling plan: {plan.name}\n\n{len(rows)} cables, A end (lower tier) to Z end (upper tier). Import `cabling.csv` with NetBox's cable import (DCIM > Cables > Import).\n\n"
    table = md_table(("A device", "A port", "Z device", "Z port", "speed", "medium", "optics / cable", "length (m)"), md_rows)
    return {"cabling.csv": csv_text(NETBOX_COLUMNS, csv_rows), "cabling.md": header + table}
