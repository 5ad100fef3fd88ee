"""PFC headroom as the plan's intent per switch, and against the Nexus 9000's sourced default
(docs/render.md, "PFC headroom").

Cisco's Nexus 9000 QoS guide (NX-OS 10.5(x), "Configuring Priority Flow Control", Guidelines and
Limitations): the pause buffer is optional for cables shorter than 100 m and mandatory beyond.
fabricgen renders no pause buffer (no Cisco page read gives its grammar and units), so the
catalog states that the Nexus models' default covers 100 m, and `validate` refuses RoCE ports of
those models on longer cables, at the key that set the length. Every expected figure is worked
out here from the RoCE reference's parts, not from the planner: two maximum frames (MTU + 18
header/FCS + 20 preamble/IFG), the 84-byte PFC frame, the cable both ways at 5.13 ns per metre,
and the peer's 1,160 ns response. Before: a 150 m NX-OS fabric validated, the plan had no
figure per switch, and the README told the reader to set a buffer without saying no switch
gets one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from fabricgen.artifacts.readme import fabric_readme
from fabricgen.core.catalog import builtin_models
from fabricgen.core.diagnostics import FabricError
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from tests.fabrics import fabric, write

NXOS = {"spines": {"model": "cisco-n9k-9332d-gx2b", "platform": "nxos"}, "leaves": {"model": "cisco-n9k-9364d-gx2a", "platform": "nxos"}}
MTU = {"eos": 9214, "nxos": 9216}
NO_DROP = 3
"""The default `roce.no_drop_priority`: the RoCE data traffic class on both platforms."""
GUIDE = "Cisco Nexus 9000 Series NX-OS Quality of Service Configuration Guide, Release 10.5(x)"


def needed(length_m: float, speed_gbps: int, mtu: int, response_ns: int = 1160) -> int:
    """Bytes still arriving after PAUSE: frames, PFC frame, the cable both ways, the peer's response."""
    per_ns = speed_gbps / 8
    return math.ceil(2 * (mtu + 18 + 20) + 84 + 2 * length_m * 5.13 * per_ns + response_ns * per_ns)


def inventory(platform: str, leaf_spine: str, **changes: Any) -> dict[str, Any]:
    switches: dict[str, Any] = NXOS if platform == "nxos" else {}
    return fabric(**switches, cabling={"length": {"leaf-spine": leaf_spine, "server-leaf": "3m"}}, **changes)


@pytest.mark.parametrize(("platform", "length"), [("eos", 30.0), ("eos", 150.0), ("nxos", 30.0), ("nxos", 100.0)])
def test_each_switch_carries_the_largest_need_of_its_no_drop_class(tmp_path: Path, platform: str, length: float) -> None:
    """Leaves: the larger of the 400G uplink's need and the 3 m 400G server cable's; spines: the uplinks'."""
    plan = load_and_plan(write(tmp_path, inventory(platform, f"{length:g}m"))).plan
    mtu = MTU[platform]
    expected = {"leaf": max(needed(length, 400, mtu), needed(3, 400, mtu)), "spine": needed(length, 400, mtu)}
    for device in plan.devices:
        (need,) = device.pfc_headroom
        assert (need.traffic_class, need.headroom_bytes) == (NO_DROP, expected[device.role]), device.name
        port = next(i for i in device.interfaces if i.name == need.port)
        assert port.roce and port.pfc_headroom_bytes == expected[device.role]


def test_nxos_cables_beyond_100_m_are_refused_at_their_length(tmp_path: Path) -> None:
    with pytest.raises(FabricError) as raised:
        load_and_plan(write(tmp_path, inventory("nxos", "150m")))
    errors = [d for d in raised.value.diagnostics if d.path == "cabling.length.leaf-spine"]
    assert len(errors) == 2, raised.value.diagnostics  # one per model: the 9364D leaves, the 9332D spines
    ports = 2 * 4 * 2  # spines x leaves x per_spine: one end on each model
    for error in errors:
        assert error.line > 0 and error.column > 0
        assert f"{ports} RoCE port(s) of cisco-n9k-93" in error.message
        assert "longer than the 100 m its default no-drop buffer covers" in error.message
        assert GUIDE in error.message
        assert f"needs {needed(150, 400, MTU['nxos'])} bytes of PFC headroom for its 150 m cable" in error.message


def test_an_override_beyond_100_m_is_refused_at_the_override(tmp_path: Path) -> None:
    plan = load_and_plan(write(tmp_path, inventory("nxos", "30m"))).plan
    leaf = next(d for d in plan.devices if d.role == "leaf")
    uplink = next(i for i in leaf.interfaces if i.role == "uplink")
    doc = inventory("nxos", "30m")
    doc["cabling"]["overrides"] = [{"device": leaf.name, "interface": uplink.name, "length": "120m"}]
    with pytest.raises(FabricError) as raised:
        load_and_plan(write(tmp_path, doc))
    errors = [d for d in raised.value.diagnostics if "default no-drop buffer covers" in d.message]
    assert len(errors) == 2, raised.value.diagnostics  # the leaf's end and the spine's end, one model each
    assert {e.path for e in errors} == {"cabling.overrides[0].length"}
    assert any(f"{leaf.name} {uplink.name} needs {needed(120, 400, MTU['nxos'])} bytes" in e.message for e in errors)


@pytest.mark.parametrize(("platform", "length"), [("nxos", "100m"), ("eos", "150m")])
def test_within_the_stated_default_or_without_one_validates(tmp_path: Path, platform: str, length: str) -> None:
    """100 m is what Cisco's default covers; the Arista models state no default (none published)."""
    checked = load_and_plan(write(tmp_path, inventory(platform, length)))
    assert not [d for d in checked.warnings if "headroom" in d.message]


def test_every_bundled_figure_has_its_source() -> None:
    stated = {n: m for n, m in builtin_models().items() if m.pfc_headroom_bytes or m.pfc_headroom_cable_m}
    assert {n for n, m in stated.items() if m.pfc_headroom_cable_m == 100} == {"cisco-n9k-9364d-gx2a", "cisco-n9k-9332d-gx2b"}
    assert all(GUIDE in m.pfc_headroom_source for m in stated.values())
    assert not any(m.pfc_headroom_bytes for m in builtin_models().values())  # no published byte figure: none invented


def test_a_length_figure_needs_its_source(tmp_path: Path) -> None:
    model = {"vendor": "Cisco", "ports": 64, "speed": 400, "form_factor": "QSFP-DD", "platforms": ["nxos"], "pfc_headroom_cable_m": 300}
    switch = {"model": "my-nexus", "platform": "nxos"}
    with pytest.raises(FabricError) as raised:
        load_and_plan(write(tmp_path, fabric(models={"my-nexus": model}, spines=switch, leaves=switch)))
    assert any("pfc_headroom_source" in d.message for d in raised.value.diagnostics), raised.value.diagnostics


def test_a_longer_length_stated_in_the_inventory_lifts_the_limit(tmp_path: Path) -> None:
    """An operator who configures the pause buffer outside fabricgen states what the switch then covers."""
    model = {"vendor": "Cisco", "ports": 64, "speed": 400, "form_factor": "QSFP-DD", "breakouts": {400: 1, 100: 4}, "platforms": ["nxos"]}
    model |= {"pfc_headroom_cable_m": 300, "pfc_headroom_source": "our pause buffer, lab-tested"}
    switch = {"model": "my-nexus", "platform": "nxos"}
    doc = fabric(models={"my-nexus": model}, spines=switch, leaves=switch, cabling={"length": {"leaf-spine": "150m"}})
    load_and_plan(write(tmp_path, doc))


def test_the_readme_says_per_platform_what_the_switches_get(tmp_path: Path) -> None:
    checked = load_and_plan(write(tmp_path, inventory("nxos", "80m")))
    readme = fabric_readme(checked.plan, RenderContext())["README.md"]
    assert f"| nxos | {NO_DROP} | {needed(80, 400, MTU['nxos'])} | 6 |" in readme  # 80 m uplinks outweigh 3 m server cables
    assert "- nxos: not configured by fabricgen:" in readme
    assert "Set it where the platform's buffer profile takes it" not in readme


@pytest.mark.parametrize(("length", "refused"), [("100m", False), ("100.01m", True), ("99.99m", False)])
def test_the_100_m_limit_is_inclusive(tmp_path: Path, length: str, refused: bool) -> None:
    """Cisco: optional below 100 m, mandatory above; exactly 100 m is covered."""
    path = write(tmp_path, inventory("nxos", length))
    if not refused:
        load_and_plan(path)
        return
    with pytest.raises(FabricError) as raised:
        load_and_plan(path)
    assert [d.path for d in raised.value.diagnostics if "covers" in d.message] == ["cabling.length.leaf-spine"] * 2
