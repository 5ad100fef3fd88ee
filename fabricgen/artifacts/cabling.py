"""`cabling.csv` (NetBox cable import) and `cabling.md` (every link for people).

`cabling.md`: one row per link, A end (lower tier: server or leaf) to Z end (upper tier), sorted
by A device and port. `cabling.csv`: one NetBox cable per physical cable that NetBox's CSV
import can hold (one interface at each end); breakout and splitter cables, one physical cable
serving several links, go to `netbox-breakout-cables.json` (fabricgen/artifacts/netbox.py). The
CSV's columns are exactly the fields of NetBox's cable bulk import (NetBox rejects unknown column
headers), so speed, medium and parts travel in `description`; the Markdown table shows them as
columns.

A fabric of several pods gets its Markdown per pod and per super-spine plane
(`cabling/pod3.md`, `cabling/plane2.md`) and `cabling.md` becomes their index: adding a pod then
shows a reviewer one new page, not a 10,000-line table rewritten in the middle. The split is a
thin layer over the rows (`cable_section`), so whatever a row holds, it follows.
"""

from __future__ import annotations

from collections import defaultdict

from fabricgen.artifacts.common import csv_line, csv_text, md_line, md_table, metres, natural_key, sorted_by_group
from fabricgen.core.model import Plan
from fabricgen.plan.media import Cable, cables
from fabricgen.render.context import RenderContext

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


def sorted_cables(plan: Plan, chosen: tuple[Cable, ...] | None = None) -> list[Cable]:
    """The cables in A-device, A-port order; `chosen` is `cables(plan)` when already known."""
    return sorted_by_group(
        cables(plan) if chosen is None else chosen,
        lambda c: natural_key(c.link.a.device),
        lambda c: (natural_key(c.link.a.interface), natural_key(c.link.z.device)),
    )


def cable_label(cable: Cable) -> str:
    """Stable under growth: derived from the two ends, not from a running number."""
    return f"{cable.link.a.device}:{cable.link.a.interface}--{cable.link.z.device}:{cable.link.z.interface}"


def parts(cable: Cable) -> str:
    choice = cable.choice
    if choice.kind != "fibre":
        return choice.cable_part
    ends = choice.a_optic if choice.a_optic == choice.z_optic else f"{choice.a_optic} / {choice.z_optic}"
    cords = len(cable.items.cables)
    return f"{ends} + {cords} x {choice.cable_part}" if cords > 1 else f"{ends} + {choice.cable_part}"


MD_COLUMNS = ("A device", "A port", "Z device", "Z port", "speed", "medium", "optics / cable", "length (m)")


def rows_of(rows: list[Cable]) -> tuple[list[str], list[str]]:
    """The CSV lines (NETBOX_COLUMNS, breakout cables left out) and the Markdown table lines
    (MD_COLUMNS, one per cable, in `rows` order), line ends included. Each cable's facts are read
    once for both and each line is one f-string (checked, as csv_text and md_table check a row,
    for a character that needs quoting or escaping: then written by `csv_line` / `md_line`);
    the parts text is the same for every cable of one Choice and cord count (links share their
    Choice), so it is written once per kind of cable, not per cable."""
    csv_lines: list[str] = []
    md_lines: list[str] = []
    parts_of: dict[tuple[int, int], str] = {}
    for cable in rows:
        link, choice = cable.link, cable.choice
        key = (id(choice), len(cable.items.cables))
        text = parts_of.get(key)
        if text is None:
            text = parts_of[key] = parts(cable)
        a, z = link.a, link.z
        length = metres(link.length_m)
        speed = f"{link.speed}G"
        md = f"| {a.device} | {a.interface} | {z.device} | {z.interface} | {speed} | {choice.variant} | {text} | {length} |\n"
        if md.count("|") != len(MD_COLUMNS) + 1 or md.count("\n") != 1:
            md = md_line((a.device, a.interface, z.device, z.interface, speed, choice.variant, text, length))
        md_lines.append(md)
        if not cable.breakout:
            csv_lines.append(_csv_line(cable, text, speed, length))
    return csv_lines, md_lines


def _csv_line(cable: Cable, parts_text: str, speed: str, length: str) -> str:
    """The `cabling.csv` line of one cable (NETBOX_COLUMNS)."""
    link, variant = cable.link, cable.choice.variant
    a, z = link.a, link.z
    label = f"{a.device}:{a.interface}--{z.device}:{z.interface}"  # cable_label(cable)
    description = f"{speed} {variant}: {parts_text}"
    line = f"{a.device},dcim.interface,{a.interface},{z.device},dcim.interface,{z.interface},{cable.choice.netbox_type},planned,{label},{length},m,{description}"
    if line.count(",") == len(NETBOX_COLUMNS) - 1 and '"' not in line and "\n" not in line and "\r" not in line:
        return line + "\n"
    row = (a.device, "dcim.interface", a.interface, z.device, "dcim.interface", z.interface)
    return csv_line((*row, cable.choice.netbox_type, "planned", label, length, "m", description))


def section_names(plan: Plan) -> tuple[dict[str, str], dict[str, str]]:
    """A cable's section: `plane<j>` when its upper end is a super-spine (the first mapping, by
    device), else `pod<p>` of its lower end (the second, by switch or server; `pod1` when
    unknown). Named once per device, not once per cable."""
    planes = {d.name: f"plane{d.plane}" for d in plan.devices if d.role == "superspine"}
    pods = {s.name: f"pod{s.pod}" for s in plan.servers}
    pods.update({d.name: f"pod{d.pod}" for d in plan.devices})  # a switch's pod first, as before a server's
    return planes, pods


def _section_key(name: str) -> tuple[int, int]:
    """Pods before planes, each in number order.

    >>> sorted(["plane2", "pod10", "pod2", "plane1"], key=_section_key)
    ['pod2', 'pod10', 'plane1', 'plane2']
    """
    return (0 if name.startswith("pod") else 1, int(name.removeprefix("pod").removeprefix("plane")))


def sections(plan: Plan, rows: list[Cable], md_rows: list[str]) -> dict[str, list[str]]:
    """The Markdown lines (one per cable of `rows`) by section, in section order; one section
    (`pod1`) for a fabric of one pod."""
    planes, pods = section_names(plan)
    grouped: dict[str, list[str]] = defaultdict(list)
    for cable, row in zip(rows, md_rows, strict=True):
        link = cable.link
        grouped[planes.get(link.z.device) or pods.get(link.a.device, "pod1")].append(row)
    return {name: grouped[name] for name in sorted(grouped, key=_section_key)}


def _title(section: str) -> str:
    return f"pod {section[3:]}" if section.startswith("pod") else f"super-spine plane {section[5:]}"


_IMPORT = (
    "Import `cabling.csv` with NetBox's cable import (DCIM > Cables > Import) after the other NetBox files "
    "(docs/artifacts.md); breakout cables are in `netbox-breakout-cables.json`."
)


def _split_markdown(plan: Plan, grouped: dict[str, list[str]], total: int) -> dict[str, str]:
    files: dict[str, str] = {}
    index = []
    for section, rows in grouped.items():
        what = "servers to leaves and leaves to spines" if section.startswith("pod") else "spines to super-spines"
        files[f"cabling/{section}.md"] = (
            f"# Cabling plan: {plan.name}, {_title(section)}\n\n{len(rows)} cables ({what}), A end (lower tier) to Z end (upper tier).\n\n"
            + md_table(MD_COLUMNS, ())
            + "".join(rows)
        )
        index.append((f"[{_title(section)}](cabling/{section}.md)", len(rows)))
    files["cabling.md"] = (
        f"# Cabling plan: {plan.name}\n\n{total} links, one page per pod and per super-spine plane. {_IMPORT}\n\n"
        + md_table(("section", "links"), index)
    )
    return files


def cabling(plan: Plan, context: RenderContext) -> dict[str, str]:
    rows = sorted_cables(plan)
    csv_lines, md_lines = rows_of(rows)
    files = {"cabling.csv": csv_text(NETBOX_COLUMNS, ()) + "".join(csv_lines)}
    grouped = sections(plan, rows, md_lines)
    if len(grouped) > 1:
        return files | _split_markdown(plan, grouped, len(rows))
    header = f"# Cabling plan: {plan.name}\n\n{len(rows)} links, A end (lower tier) to Z end (upper tier). {_IMPORT}\n\n"
    files["cabling.md"] = header + md_table(MD_COLUMNS, ()) + "".join(md_lines)
    return files
