"""`cabling.csv` (NetBox cable import) and `cabling.md` (every link for people).

`cabling.md`: one row per link, A end (lower tier: server or leaf) to Z end (upper tier), sorted
by A device and port. `cabling.csv`: one NetBox cable per physical cable that NetBox's CSV
import can hold (one interface at each end); breakout and splitter cables, one physical cable
serving several links, go to `netbox-breakout-cables.json` (fabricgen/artifacts/netbox.py). The
CSV's columns are exactly the fields of NetBox's cable bulk import (NetBox rejects unknown column
headers), so speed, medium and parts travel in `description`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.artifacts.common import csv_text, md_table, metres, natural_key
from fabricgen.artifacts.media import Cable, cables, render_cables
from fabricgen.artifacts.netbox import breakout
from fabricgen.model import Plan

if TYPE_CHECKING:
    from fabricgen.render import RenderContext

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


def sorted_cables(plan: Plan, chosen: list[Cable] | None = None) -> list[Cable]:
    """The cables in A-device, A-port order; `chosen` is `cables(plan)` when already known."""
    return sorted(
        cables(plan) if chosen is None else chosen,
        key=lambda c: (natural_key(c.link.a.device), natural_key(c.link.a.interface), natural_key(c.link.z.device)),
    )


def cable_label(cable: Cable) -> str:
    """Stable under growth: derived from the two ends, not from a running number."""
    return f"{cable.link.a.device}:{cable.link.a.interface}--{cable.link.z.device}:{cable.link.z.interface}"


def parts(cable: Cable) -> str:
    choice = cable.choice
    if choice.kind != "fibre":
        return choice.cable_part
    ends = choice.a_optic if choice.a_optic == choice.z_optic else f"{choice.a_optic} / {choice.z_optic}"
    cords = len(choice.cable_keys)
    return f"{ends} + {cords} x {choice.cable_part}" if cords > 1 else f"{ends} + {choice.cable_part}"


def cabling(plan: Plan, context: RenderContext) -> dict[str, str]:
    rows = sorted_cables(plan, render_cables(plan, context))
    csv_rows = [
        (
            c.link.a.device,
            "dcim.interface",
            c.link.a.interface,
            c.link.z.device,
            "dcim.interface",
            c.link.z.interface,
            c.choice.netbox_type,
            "planned",
            cable_label(c),
            metres(c.link.length_m),
            "m",
            f"{c.link.speed}G {c.choice.variant}: {parts(c)}",
        )
        for c in rows
        if not breakout(c)
    ]
    md_rows = [
        (
            c.link.a.device,
            c.link.a.interface,
            c.link.z.device,
            c.link.z.interface,
            f"{c.link.speed}G",
            c.choice.variant,
            parts(c),
            metres(c.link.length_m),
        )
        for c in rows
    ]
    header = (
        f"# Cabling plan: {plan.name}\n\n{len(rows)} links, A end (lower tier) to Z end (upper tier). Import `cabling.csv` with "
        "NetBox's cable import (DCIM > Cables > Import) after the other NetBox files (docs/artifacts.md); breakout cables are "
        "in `netbox-breakout-cables.json`.\n\n"
    )
    table = md_table(("A device", "A port", "Z device", "Z port", "speed", "medium", "optics / cable", "length (m)"), md_rows)
    return {"cabling.csv": csv_text(NETBOX_COLUMNS, csv_rows), "cabling.md": header + table}
