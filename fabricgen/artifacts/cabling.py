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

from fabricgen.artifacts.common import csv_line, csv_text, md_line, md_table, metres, natural_order
from fabricgen.core.model import Cable, Plan
from fabricgen.core.records import record
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
    """The cables in A-device, A-port order (then Z device); `chosen` is `plan.cables` when
    already known."""
    rows = plan.cables if chosen is None else chosen
    links = [cable.link for cable in rows]
    order = natural_order([link.a.device for link in links], [link.a.interface for link in links], [link.z.device for link in links])
    return [rows[i] for i in order]


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
    (MD_COLUMNS, one per cable, in `rows` order), line ends included.

    Cables of one kind (Choice, links sharing each end's cage, length, speed) share every column
    but their ends' (the cords and whether it is a breakout cable follow from the first two), so a
    kind's columns are written once (`_Kind`) and a cable's lines are one f-string each. Whether
    any cell needs quoting or escaping is checked once on the whole text: a cell with a `,` or a
    `|` or a line break of its own adds one to the count of separators; then every line is
    written again by the general writers (`_general_rows`)."""
    csv_lines: list[str] = []
    md_lines: list[str] = []
    kinds: dict[tuple[int, int, int, float, int], _Kind] = {}
    for cable in rows:
        link = cable.link
        key = (id(cable.choice), cable.a.shared, cable.z.shared, link.length_m, link.speed)  # decides cords and breakout
        kind = kinds.get(key)
        if kind is None:
            kind = kinds[key] = _Kind.of(cable)
        a, z = link.a, link.z
        md_lines.append(f"| {a.device} | {a.interface} | {z.device} | {z.interface}{kind.md_tail}")
        if not kind.breakout:
            csv_lines.append(
                f"{a.device},dcim.interface,{a.interface},{z.device},dcim.interface,{z.interface}"
                f"{kind.csv_mid}{a.device}:{a.interface}--{z.device}:{z.interface}{kind.csv_tail}"
            )
    if not (_separated(md_lines, "|", len(MD_COLUMNS) + 1) and _separated(csv_lines, ",", len(NETBOX_COLUMNS) - 1, '"\r')):
        return _general_rows(rows)
    return csv_lines, md_lines


@record
class _Kind:
    """What the lines of every cable of one kind share: the Markdown columns after the ends, the
    CSV columns between the ends and the label, and after the label."""

    md_tail: str
    csv_mid: str
    csv_tail: str
    breakout: bool

    @staticmethod
    def of(cable: Cable) -> _Kind:
        link, choice = cable.link, cable.choice
        text, length, speed = parts(cable), metres(link.length_m), f"{link.speed}G"
        return _Kind(
            f" | {speed} | {choice.variant} | {text} | {length} |\n",
            f",{choice.netbox_type},planned,",
            f",{length},m,{speed} {choice.variant}: {text}\n",
            cable.breakout,
        )


def _separated(lines: list[str], separator: str, per_line: int, absent: str = "") -> bool:
    """Whether `lines` hold exactly `per_line` separators and one line end each, and none of the
    `absent` characters: then no cell holds a separator or a line break of its own."""
    text = "".join(lines)
    return text.count(separator) == per_line * len(lines) and text.count("\n") == len(lines) and not any(c in text for c in absent)


def _general_rows(rows: list[Cable]) -> tuple[list[str], list[str]]:
    """`rows_of` written cell by cell by `csv_line` and `md_line` (quoting and escaping what needs it)."""
    csv_lines: list[str] = []
    md_lines: list[str] = []
    for cable in rows:
        link, choice = cable.link, cable.choice
        a, z = link.a, link.z
        text, length, speed = parts(cable), metres(link.length_m), f"{link.speed}G"
        md_lines.append(md_line((a.device, a.interface, z.device, z.interface, speed, choice.variant, text, length)))
        if not cable.breakout:
            row = (a.device, "dcim.interface", a.interface, z.device, "dcim.interface", z.interface, choice.netbox_type, "planned")
            csv_lines.append(csv_line((*row, cable_label(cable), length, "m", f"{speed} {choice.variant}: {text}")))
    return csv_lines, md_lines


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
