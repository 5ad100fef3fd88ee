"""No part name the catalog cannot back: a NIC asked for more than its cage makes is refused at
the inventory key, and every example's BOM names only modules and cables whose form factor and
speed a catalog cage (switch model or NIC model) has, and optics variants the catalog lists."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.artifacts.bom import bom
from fabricgen.context import RenderContext
from fabricgen.diagnostics import FabricError
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES
from tests.fabrics import fabric, write

CATALOG = Path(__file__).resolve().parent.parent / "fabricgen" / "data" / "catalog.yml"
EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "fabric.yml").exists())

_TRANSCEIVER = re.compile(r"^(?P<ff>.+?)-(?P<speed>\d+)G-(?P<variant>[^-]+)$")
_BREAKOUT = re.compile(r"^(?P<ff>.+?)-(?P<cage>\d+)G-to-(?P<count>\d+)x(?P<far>.+?)-(?P<speed>\d+)G-(?P<medium>[^-]+)$")


def _catalog() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))
    return data


def _cages(data: dict[str, Any]) -> set[tuple[str, int]]:
    """(form factor, speed) every catalog cage makes, read from the catalog file itself: a switch
    cage's whole speed (lanes x lane rate) and each breakout speed; a NIC's native speed and the
    halvings on fewer lanes."""
    cages = set()
    for model in data["models"].values():
        cages.add((model["form_factor"], model["lanes"] * model["lane_rate"]))
        cages.update((model["form_factor"], int(speed)) for speed in model["breakouts"])
    for nic in data["nics"].values():
        cages.update((nic["form_factor"], nic["speed"] >> i) for i in range(3))
    return cages


def _variants(data: dict[str, Any]) -> set[tuple[int, str]]:
    return {(int(key.split("@")[0]), v["name"]) for medium in data["optics"]["fibre"].values() for key, v in medium["variants"].items()}


def _fibres(data: dict[str, Any]) -> set[str]:
    return {v["fibre"] for medium in data["optics"]["fibre"].values() for v in medium["variants"].values()}


def _bad_part(category: str, part: str, data: dict[str, Any]) -> str | None:
    """Why `part` is not backed by the catalog, or None."""
    cages, electrical = _cages(data), set(data["optics"]["electrical"])
    if category == "fibre":
        base = part.split("-1x")[0] if part.endswith("-SPLITTER") else part
        return None if base in _fibres(data) else "unknown fibre"
    if category == "transceiver":
        m = _TRANSCEIVER.match(part)
        if m is None:
            return "unparsed"
        speed = int(m["speed"])
        if (m["ff"], speed) not in cages:
            return f"no {m['ff']} cage makes {speed}G"
        return None if (speed, m["variant"]) in _variants(data) else "no such optics variant"
    m = _BREAKOUT.match(part)
    if m is not None:
        if (m["ff"], int(m["cage"])) not in cages or (m["far"], int(m["speed"])) not in cages:
            return "an end no cage makes"
        return None if m["medium"] in electrical else "unknown medium"
    m = _TRANSCEIVER.match(part)
    if m is None or m["variant"] not in electrical:
        return "unparsed or unknown medium"
    ends = m["ff"].split("-to-")
    return None if all((ff, int(m["speed"])) in cages for ff in ends) else "an end no cage makes"


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_every_bom_part_of_every_example_is_backed_by_the_catalog(name: str) -> None:
    plan = load_and_plan(EXAMPLES / name).plan
    rows = list(csv.DictReader(io.StringIO(bom(plan, RenderContext())["bom.csv"])))
    assert rows
    data = _catalog()
    bad = {row["part"]: why for row in rows if (why := _bad_part(row["category"], row["part"], data))}
    assert not bad


def test_the_part_check_fails_on_a_part_no_cage_makes() -> None:
    """The walker itself catches the parts a 200G NIC at 400G used to get."""
    data = _catalog()
    assert _bad_part("transceiver", "QSFP56-400G-DR4", data) == "no QSFP56 cage makes 400G"
    assert _bad_part("cable", "OSFP-800G-to-2xQSFP56-400G-ACC", data) == "an end no cage makes"
    assert _bad_part("transceiver", "OSFP-800G-2xDR4", data) is None


def _line_of(text: str, key: str, section: str) -> int:
    """1-based line of `key:` inside top-level `section:` of the YAML text (found by reading it)."""
    lines = text.splitlines()
    start = lines.index(f"{section}:")
    return next(i + 1 for i in range(start + 1, len(lines)) if lines[i].strip().startswith(f"{key}:"))


@pytest.mark.parametrize(
    ("leaf", "speed", "nic", "native"),
    [
        ("arista-7060x6-64pe", "800G", "nvidia-connectx-7-osfp", 400),  # 4 x 100G lanes make 400G
        ("arista-7060x6-64pe", "400G", "nvidia-connectx-6-qsfp56", 200),  # 4 x 50G lanes make 200G
        ("arista-7060dx5-64s", "400G", "nvidia-connectx-6-qsfp56", 200),
    ],
)
def test_a_nic_above_its_native_speed_is_refused_at_servers_speed(tmp_path: Path, leaf: str, speed: str, nic: str, native: int) -> None:
    doc = fabric(leaves={"model": leaf}, spines={"model": leaf}, servers={"speed": speed, "nic": nic})
    path = write(tmp_path, doc)
    with pytest.raises(FabricError) as caught:
        load_and_plan(path)
    errors = [d for d in caught.value.diagnostics if d.is_error]
    assert len(errors) == 1
    text = errors[0].format()
    line = _line_of(path.read_text(encoding="utf-8"), "speed", "servers")
    assert text.startswith(f"{path}:{line}:"), text
    assert f"servers.speed: NIC model {nic}" in text
    assert f"runs at most {native}G" in text and f"not the {speed}" in text
    assert "hint: set servers.speed to" in text


def test_a_faster_nic_is_named_in_the_hint(tmp_path: Path) -> None:
    doc = fabric(servers={"speed": "400G", "nic": "nvidia-connectx-6-qsfp56"})
    with pytest.raises(FabricError) as caught:
        load_and_plan(write(tmp_path, doc))
    assert "nvidia-connectx-7-osfp" in caught.value.diagnostics[0].format()


def test_a_nic_at_its_native_speed_or_below_is_accepted(tmp_path: Path) -> None:
    doc = fabric(servers={"speed": "200G", "nic": "nvidia-connectx-6-qsfp56"})
    plan = load_and_plan(write(tmp_path, doc)).plan
    assert {n.speed for s in plan.servers for n in s.nics} == {200}


def test_a_leaf_speed_above_the_nic_is_refused_at_servers_nic(tmp_path: Path) -> None:
    """No `servers.speed`: the servers run the leaf's native speed (a 7060X6-64PE: 800G), which a
    ConnectX-7 (400G) cannot; the finding points at `servers.nic`, the key to change."""
    doc = fabric(leaves={"model": "arista-7060x6-64pe"}, spines={"model": "arista-7060x6-64pe"}, servers={"nic": "nvidia-connectx-7-osfp"})
    doc["servers"].pop("speed")
    doc["uplinks"].pop("speed")
    path = write(tmp_path, doc)
    with pytest.raises(FabricError) as caught:
        load_and_plan(path)
    text = caught.value.diagnostics[0].format()
    line = _line_of(path.read_text(encoding="utf-8"), "nic", "servers")
    assert text.startswith(f"{path}:{line}:") and "servers.nic: NIC model nvidia-connectx-7-osfp" in text, text
    assert "not the 800G of the server ports" in text
