"""The medium rule at every reach and lane-rate boundary, against the vendor facts (not the code).

Expected reaches, copied from the public sources the catalog cites:
- passive copper, 50G lanes: 3 m (200GBASE-CR4, https://itwissen.info/en/200-gigabit-Ethernet-200GbE.html)
- passive copper, 100G lanes: 2 m (NVIDIA MCP4Y10: 0.5 to 2 m, https://docs.nvidia.com/networking/display/mcp4y10nxxx2x400pub)
- active copper, 100G lanes: 5 m (NVIDIA ACC 4 and 5 m, https://docs.nvidia.com/networking/display/MCP7Y00NXXX800pub/Use+Cases)
- AOC, 50G lanes: 30 m (NVIDIA MFS1S50-V 3 to 30 m, https://docs.nvidia.com/networking/display/mfs1s50v0xxespec/ordering+information)
- 400G SR8 (8 x 50G): 100 m OM4 (IEEE 802.3cm, https://www.tiafotc.org/ieee-802-3-ethernet-standards-update/multimode-standards-update/400gbase-sr8/)
- 400G SR4 / 800G 2xSR4 (100G lanes): 50 m (NVIDIA MMA4Z00-NS / -NS400)
- 200G SR4 (4 x 50G): 100 m (200GBASE-SR4, itwissen page above)
- DR4: 500 m, FR4: 2 km, LR4: 10 km (https://www.flexoptix.net/en/blog/2018/06/the-400g-overview/)
"""

from __future__ import annotations

import copy

import pytest

from fabricgen.catalog import catalog_section
from fabricgen.media_rules import End, choose_medium, lane_rate, patch_cords, table_from

QSFP_DD_400 = End("QSFP-DD", 50, 400, 1)  # Arista 7060DX5 / Cisco 9364D-GX2A port: 8 x 50G
OSFP_800 = End("OSFP", 100, 800, 1)  # Arista 7060X6 port at 800G: 8 x 100G
OSFP_HALF = End("OSFP", 100, 800, 2)  # one 400G port of a twin-port / 2 x 400G OSFP cage
CX7 = End("OSFP", 100, 400, 1)  # ConnectX-7 OSFP: 4 x 100G
QSFP56_HDR = End("QSFP56", 50, 200, 1)  # QM8790 port / ConnectX-6: 4 x 50G
NDR200 = End("OSFP", 100, 800, 4)  # one NDR200 port of a QM9700 cage split 4 ways


def _name(a: End, z: End, length: float) -> str:
    medium = choose_medium(a, z, length)
    assert medium is not None
    return medium.name


@pytest.mark.parametrize(
    ("length", "medium"),
    [
        (3, "DAC"),
        (3.01, "AOC"),
        (30, "AOC"),
        (30.01, "SR"),
        (100, "SR"),
        (100.01, "DR"),
        (500, "DR"),
        (500.01, "FR"),
        (2000, "FR"),
        (2000.01, "LR"),
        (10000, "LR"),
    ],
)
def test_400g_50g_lanes_each_side(length: float, medium: str) -> None:
    assert _name(QSFP_DD_400, QSFP_DD_400, length) == medium


@pytest.mark.parametrize(
    ("length", "medium"),
    [
        (2, "DAC"),
        (2.01, "ACC"),
        (5, "ACC"),
        (5.01, "SR"),
        (50, "SR"),
        (50.01, "DR"),
        (500, "DR"),
        (500.01, "FR"),
        (2000, "FR"),
        (2000.01, "LR"),
        (10000, "LR"),
    ],
)
def test_800g_100g_lanes_each_side(length: float, medium: str) -> None:
    assert _name(OSFP_800, OSFP_800, length) == medium


def test_100g_lane_copper_reaches_less_than_50g_lane_copper() -> None:
    assert _name(QSFP_DD_400, QSFP_DD_400, 2.5) == "DAC"
    assert _name(OSFP_800, OSFP_800, 2.5) == "ACC"


@pytest.mark.parametrize("length", [0.5, 1, 3, 7, 100, 500])
def test_50g_lanes_to_100g_lanes_never_take_passive_copper(length: float) -> None:
    """A 7060DX5 port (8 x 50G) to a ConnectX-7 (4 x 100G): no passive cable joins them, and no
    gearbox cable is in the catalog, so optics with the same optical interface: DR4 at both."""
    medium = choose_medium(QSFP_DD_400, CX7, length)
    assert medium is not None and medium.kind == "fibre"
    assert medium.a is not None and medium.z is not None
    assert (medium.a.name, medium.z.name) == ("DR4", "DR4")


def test_2m_7060x6_to_9364d_takes_optics_not_a_breakout_dac() -> None:
    medium = choose_medium(QSFP_DD_400, OSFP_HALF, 2)
    assert medium is not None and medium.a is not None and medium.z is not None
    assert (medium.name, medium.a.name, medium.z.name) == ("DR", "DR4", "2xDR4")


@pytest.mark.parametrize(
    ("length", "medium", "module"), [(50, "SR", "2xSR4"), (50.01, "DR", "2xDR4"), (60, "DR", "2xDR4"), (500, "DR", "2xDR4")]
)
def test_ndr_twin_port_cages(length: float, medium: str, module: str) -> None:
    """QM9700 to QM9700: 2xSR4 reaches 50 m, 2xDR4 beyond; the link uses one port of each."""
    chosen = choose_medium(OSFP_HALF, OSFP_HALF, length)
    assert chosen is not None and chosen.a is not None
    assert (chosen.name, chosen.a.name, chosen.link_variant(OSFP_HALF, OSFP_HALF)) == (medium, module, module.removeprefix("2x"))


@pytest.mark.parametrize(("length", "medium"), [(2, "DAC"), (2.01, "ACC"), (5, "ACC"), (5.01, "SR"), (50, "SR"), (50.01, "DR")])
def test_ndr_hca_from_a_twin_port_cage(length: float, medium: str) -> None:
    assert _name(CX7, OSFP_HALF, length) == medium


@pytest.mark.parametrize(("length", "medium"), [(3, "DAC"), (5, "AOC"), (30, "AOC"), (30.01, "SR"), (100, "SR"), (150, "FR"), (2000, "FR")])
def test_hdr(length: float, medium: str) -> None:
    """HDR: AOC beyond copper (not active copper), 200G FR4 beyond multimode (150 m has a medium)."""
    assert _name(QSFP56_HDR, QSFP56_HDR, length) == medium


def test_hdr_past_2km_has_no_medium() -> None:
    assert choose_medium(QSFP56_HDR, QSFP56_HDR, 2000.01) is None


def test_nothing_reaches_past_10km() -> None:
    assert choose_medium(QSFP_DD_400, QSFP_DD_400, 10000.01) is None


def test_lane_rates_from_cage_facts() -> None:
    """speed x ports per cage / lanes per cage: 7060DX5 400G = 50G lanes; 7060X6 2 x 400G and
    QM9700 NDR = 100G lanes; QM9700 NDR200 (4 per cage) = 100G; QM8790 HDR100 (2 per cage) = 50G."""
    assert lane_rate(400, 8, 1) == 50
    assert lane_rate(400, 8, 2) == 100
    assert lane_rate(200, 8, 4) == 100
    assert lane_rate(100, 4, 2) == 50
    assert lane_rate(400, 4, 1) == 100  # ConnectX-7 at 400G


def test_patch_cords_one_per_optical_port() -> None:
    """800G 2xDR4 to 800G 2xDR4: two MPO cords; 400G DR4 into one port of a 2xDR4: one; NDR200
    (four links on a two-port module): none of its own (one 1:2 splitter cord per port)."""
    full = choose_medium(OSFP_800, OSFP_800, 300)
    half = choose_medium(QSFP_DD_400, OSFP_HALF, 300)
    hca_ndr200 = End("OSFP", 100, 400, 1)  # a 400G HCA module running 2 of its 4 channels (MMS4X00-NS400)
    split = choose_medium(NDR200, hca_ndr200, 300)
    assert full is not None and half is not None and split is not None
    assert patch_cords(full, OSFP_800, OSFP_800) == 2
    assert patch_cords(half, QSFP_DD_400, OSFP_HALF) == 1
    assert patch_cords(split, NDR200, hca_ndr200) == 0


def test_every_catalog_fact_cites_a_source() -> None:
    """Each medium (per lane rate), module variant, switch model and NIC names where it comes from."""
    from fabricgen.catalog import catalog_section

    optics = catalog_section("optics")
    for name, entry in optics["electrical"].items():
        assert set(entry["source"]) == set(entry["reach_m"]), name
        assert all(str(text).strip() for text in entry["source"].values()), name
    for name, entry in optics["fibre"].items():
        for key, variant in entry["variants"].items():
            assert str(variant.get("source", "")).strip(), f"{name} {key}"
    for section in ("models", "nics"):
        for name, entry in catalog_section(section).items():
            assert str(entry.get("source", "")).strip(), name


def test_a_gearbox_cable_added_as_data_is_chosen_within_its_reach_and_optics_beyond() -> None:
    """No gearbox AEC is in the built-in catalog (no citable vendor part, docs/artifacts.md); one
    added under `optics.electrical` with `gearbox: true` joins 50G and 100G lanes within its reach
    at the slower lane rate, with no code change. The 2.5 m reach is this test's own, not a vendor's."""
    optics = copy.deepcopy(catalog_section("optics"))
    assert not any(entry.get("gearbox") for entry in optics["electrical"].values())
    gearbox = {"kind": "copper", "netbox_type": "dac-active", "reach_m": {50: 2.5}, "gearbox": True}
    optics["electrical"] = {**optics["electrical"], "AEC": gearbox}  # after DAC, ACC and AOC, as a catalog lists it
    table = table_from(optics)
    chosen = choose_medium(QSFP_DD_400, CX7, 2.5, table)
    assert chosen is not None and chosen.name == "AEC"
    beyond = choose_medium(QSFP_DD_400, CX7, 2.51, table)
    assert beyond is not None and beyond.kind == "fibre"
    same_rate = choose_medium(QSFP_DD_400, QSFP_DD_400, 2.5, table)
    assert same_rate is not None and same_rate.name == "DAC"  # equal lane rates: the passive cable first
