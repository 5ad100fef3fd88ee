"""PFC headroom against a model's stated default (docs/render.md, "PFC headroom").

fabricgen renders no buffer line, so a RoCE port runs with its model's default headroom; where
the catalog (or the inventory's `models:`) states that figure with its source, `validate`
refuses a fabric whose cables need more. Fabrics of our own: 800G and 400G switches with 30 m
and 150 m leaf-spine cables, the expected bytes worked out here from the formula's parts
(two maximum frames, the PFC frame, the fibre round trip at 5.13 ns/m, 1,160 ns of response).
Before, nothing compared: the 150 m 800G fabric below validated.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from fabricgen.core.diagnostics import FabricError
from fabricgen.pipeline import load_and_plan
from tests.fabrics import fabric, write

FIGURE = 200_000
MODEL = "test-800g-stated-headroom"


def needed(length_m: float, speed_gbps: int, mtu: int = 9214, response_ns: int = 1160) -> int:
    """Bytes after PAUSE, from the parts: frames (header+FCS 18, preamble+IFG 20), PFC frame 84,
    the cable both ways, the peer's response."""
    per_ns = speed_gbps / 8
    return math.ceil(2 * (mtu + 18 + 20) + 84 + 2 * length_m * 5.13 * per_ns + response_ns * per_ns)


def inventory(length: str, speed: int, figure: dict[str, Any] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "vendor": "Arista",
        "ports": 64,
        "speed": speed,
        "form_factor": "OSFP",
        "breakouts": {speed: 1, speed // 2: 2},
        "platforms": ["eos"],
    }
    entry.update(figure or {})
    switch = {"model": MODEL, "platform": "eos"}
    return fabric(
        models={MODEL: entry},
        spines=switch,
        leaves=switch,
        uplinks={"per_spine": 2, "speed": f"{speed}G"},
        servers={"per_leaf": 4, "ports_per_server": 1, "speed": f"{speed // 2}G"},
        cabling={"length": {"leaf-spine": length, "server-leaf": "3m"}},
    )


STATED = {"pfc_headroom_bytes": FIGURE, "pfc_headroom_source": "a figure of this test"}


def test_the_worked_figures() -> None:
    """The issue's 288,488 bytes for 150 m of 800G; 30 m of 800G and 150 m of 400G fit 200 kB."""
    assert needed(150, 800) == 288_488 > FIGURE
    assert needed(30, 800) < FIGURE and needed(150, 400) < FIGURE


def test_long_800g_cables_exceed_the_stated_headroom(tmp_path: Path) -> None:
    with pytest.raises(FabricError) as raised:
        load_and_plan(write(tmp_path, inventory("150m", 800, STATED)))
    errors = [d for d in raised.value.diagnostics if d.path == f"models.{MODEL}.pfc_headroom_bytes"]
    assert len(errors) == 1, raised.value.diagnostics
    ports = 2 * 4 * 2 * 2  # spines x leaves x per_spine links, both ends
    assert errors[0].message.startswith(f"{ports} RoCE port(s) of {MODEL} need more PFC headroom than its {FIGURE} bytes")
    assert f"needs {needed(150, 800)} bytes" in errors[0].message
    assert errors[0].line > 0


@pytest.mark.parametrize(("length", "speed"), [("30m", 800), ("150m", 400)])
def test_what_fits_the_stated_headroom_validates(tmp_path: Path, length: str, speed: int) -> None:
    checked = load_and_plan(write(tmp_path, inventory(length, speed, STATED)))
    worst = max(i.pfc_headroom_bytes for d in checked.plan.devices for i in d.interfaces)
    assert worst == needed(float(length.removesuffix("m")), speed) <= FIGURE


def test_a_model_without_a_figure_is_not_compared(tmp_path: Path) -> None:
    """No bundled model states a figure (none found): nothing is invented, nothing compared."""
    checked = load_and_plan(write(tmp_path, inventory("150m", 800, None)))
    assert not [d for d in checked.warnings if "headroom" in d.path]


def test_a_figure_needs_its_source(tmp_path: Path) -> None:
    with pytest.raises(FabricError) as raised:
        load_and_plan(write(tmp_path, inventory("150m", 800, {"pfc_headroom_bytes": FIGURE})))
    assert any("pfc_headroom_source" in d.message for d in raised.value.diagnostics), raised.value.diagnostics
