"""`cabling.csv` (NetBox cable import) and `cabling.md` (the same cables for people).

One row per cable, A end (lower tier: server or leaf) to Z end (upper tier), sorted by A device
and port. The CSV's columns are exactly the fields of NetBox's cable bulk import (NetBox
rejects unknown column headers), so speed, medium and parts travel in `description`; the
Markdown table shows them as columns.

A fabric of several pods gets its Markdown per pod and per super-spine plane
(`cabling/pod3.md`, `cabling/plane2.md`) and `cabling.md` becomes their index: adding a pod then
shows a reviewer one new page, not a 10,000-line table rewritten in the middle. The split is a
thin layer over the rows (`cable_section`), so whatever a row holds, it follows.
"""

from __future__ import annotations

from collections import defaultdict

from fabricgen.artifacts.common import csv_text, md_table, metres, natural_key
from fabricgen.context import RenderContext
from fabricgen.model import Choice, Device, Link, Plan

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


def csv_row(c: Link) -> tuple[str, ...]:
    return (
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


MD_COLUMNS = ("A device", "A port", "Z device", "Z port", "speed", "medium", "optics / cable", "length (m)")


def md_row(c: Link) -> tuple[str, ...]:
    return (
        c.a.device,
        c.a.interface,
        c.z.device,
        c.z.interface,
        f"{c.speed}G",
        media(c).variant,
        parts(c),
        metres(c.length_m),
    )


def cable_section(cable: Link, devices: dict[str, Device], pod_of_server: dict[str, int]) -> str:
    """`plane<j>` for a cable up to a super-spine, else `pod<p>` of its lower end (a server's
    pod when the lower end is a server)."""
    upper = devices.get(cable.z.device)
    if upper is not None and upper.role == "superspine":
        return f"plane{upper.plane}"
    lower = devices.get(cable.a.device)
    return f"pod{lower.pod if lower is not None else pod_of_server.get(cable.a.device, 1)}"


def _section_key(name: str) -> tuple[int, int]:
    """Pods before planes, each in number order.

    >>> sorted(["plane2", "pod10", "pod2", "plane1"], key=_section_key)
    ['pod2', 'pod10', 'plane1', 'plane2']
    """
    return (0 if name.startswith("pod") else 1, int(name.removeprefix("pod").removeprefix("plane")))


def sections(plan: Plan, rows: list[Link]) -> dict[str, list[Link]]:
    """The rows by section, in section order; one section (`pod1`) for a fabric of one pod."""
    devices = {d.name: d for d in plan.devices}
    pod_of_server = {s.name: s.pod for s in plan.servers}
    grouped: dict[str, list[Link]] = defaultdict(list)
    for cable in rows:
        grouped[cable_section(cable, devices, pod_of_server)].append(cable)
    return {name: grouped[name] for name in sorted(grouped, key=_section_key)}


def _title(section: str) -> str:
    return f"pod {section[3:]}" if section.startswith("pod") else f"super-spine plane {section[5:]}"


def _split_markdown(plan: Plan, grouped: dict[str, list[Link]], total: int) -> dict[str, str]:
    files: dict[str, str] = {}
    index = []
    for section, rows in grouped.items():
        what = "servers to leaves and leaves to spines" if section.startswith("pod") else "spines to super-spines"
        files[f"cabling/{section}.md"] = (
            f"# Cabling plan: {plan.name}, {_title(section)}\n\n{len(rows)} cables ({what}), A end (lower tier) to Z end (upper tier).\n\n"
            + md_table(MD_COLUMNS, (md_row(c) for c in rows))
        )
        index.append((f"[{_title(section)}](cabling/{section}.md)", len(rows)))
    files["cabling.md"] = (
        f"# Cabling plan: {plan.name}\n\n{total} cables, one page per pod and per super-spine plane. "
        "Import `cabling.csv` with NetBox's cable import (DCIM > Cables > Import).\n\n" + md_table(("section", "cables"), index)
    )
    return files


def cabling(plan: Plan, context: RenderContext) -> dict[str, str]:
    rows = sorted_cables(plan)
    files = {"cabling.csv": csv_text(NETBOX_COLUMNS, (csv_row(c) for c in rows))}
    grouped = sections(plan, rows)
    if len(grouped) > 1:
        return files | _split_markdown(plan, grouped, len(rows))
    header = f"# Cabling plan: {plan.name}\n\n{len(rows)} cables, A end (lower tier) to Z end (upper tier). Import `cabling.csv` with NetBox's cable import (DCIM > Cables > Import).\n\n"
    files["cabling.md"] = header + md_table(MD_COLUMNS, (md_row(c) for c in rows))
    return files
