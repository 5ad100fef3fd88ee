"""Media choice: the reach table in the catalog, at each boundary, for 400G and 800G cages."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fabricgen.plan.media import End, choose, keys, optics_table


def _end(form_factor: str, speed: int, shared: int = 1, device: str = "sw", port: int = 1) -> End:
    return End(device, port, f"Ethernet{port}/1", form_factor, speed, shared)


QDD = _end("QSFP-DD", 400)
OSFP800 = _end("OSFP", 800, device="sp")

BOUNDARIES = [
    (0.5, "DAC"),
    (3, "DAC"),
    (3.01, "AEC"),
    (7, "AEC"),
    (7.01, "SR"),
    (100, "SR"),
    (100.01, "DR"),
    (500, "DR"),
    (500.01, "FR"),
    (2000, "FR"),
    (2000.01, "LR"),
    (10000, "LR"),
]


@pytest.mark.parametrize(("length", "medium"), BOUNDARIES)
def test_400g_qsfp_dd_medium_by_reach(length: float, medium: str) -> None:
    choice = choose(400, length, QDD, QDD)
    assert choice is not None
    assert choice.medium == medium


@pytest.mark.parametrize(("length", "medium"), BOUNDARIES)
def test_800g_osfp_medium_by_reach(length: float, medium: str) -> None:
    choice = choose(800, length, OSFP800, OSFP800)
    assert choice is not None
    assert choice.medium == medium


@pytest.mark.parametrize(
    ("length", "part"),
    [
        (3, "QSFP-DD-400G-DAC"),
        (7, "QSFP-DD-400G-AEC"),
        (100, "QSFP-DD-400G-SR8"),
        (500, "QSFP-DD-400G-DR4"),
        (2000, "QSFP-DD-400G-FR4"),
        (10000, "QSFP-DD-400G-LR4"),
    ],
)
def test_400g_parts(length: float, part: str) -> None:
    choice = choose(400, length, QDD, QDD)
    assert choice is not None
    assert part in (choice.cable_part, choice.a_optic)
    if choice.kind == "fibre":
        assert choice.a_optic == choice.z_optic == part
    else:
        assert choice.a_optic == choice.z_optic == ""


@pytest.mark.parametrize(
    ("length", "optic"), [(100, "OSFP-800G-2xSR4"), (500, "OSFP-800G-2xDR4"), (2000, "OSFP-800G-2xFR4"), (10000, "OSFP-800G-2xLR4")]
)
def test_800g_variants(length: float, optic: str) -> None:
    choice = choose(800, length, OSFP800, OSFP800)
    assert choice is not None
    assert choice.a_optic == choice.z_optic == optic


def test_nothing_reaches_past_10km() -> None:
    assert choose(400, 10000.01, QDD, QDD) is None


def test_breakout_cage_shares_one_800g_transceiver() -> None:
    """A 400G leaf port into half of an 800G OSFP cage: 2xDR4 at the cage, DR4 at the leaf,
    and the cage's transceiver is one physical item for both links."""
    leaf, other_leaf = _end("QSFP-DD", 400, device="leaf"), _end("QSFP-DD", 400, device="leaf", port=2)
    cage = _end("OSFP", 800, shared=2, device="spine", port=1)
    first = choose(400, 200, leaf, cage)
    second = choose(400, 200, other_leaf, cage)
    assert first is not None and second is not None
    assert (first.a_optic, first.z_optic) == ("QSFP-DD-400G-DR4", "OSFP-800G-2xDR4")
    _, first_a, first_z = keys(first.kind, leaf, cage)
    _, second_a, second_z = keys(second.kind, other_leaf, cage)
    assert first_z == second_z
    assert first_a != second_a


def test_breakout_copper_is_one_cable_per_cage() -> None:
    spine = _end("OSFP", 800, shared=2, device="spine", port=4)
    l1, l2 = _end("QSFP-DD", 400, device="l1"), _end("QSFP-DD", 400, device="l2")
    first = choose(400, 2, l1, spine)
    second = choose(400, 2, l2, spine)
    assert first is not None and second is not None
    assert first.cable_part == "OSFP-800G-to-2xQSFP-DD-400G-DAC"
    assert keys(first.kind, l1, spine)[0] == keys(second.kind, l2, spine)[0]


def test_mixed_form_factor_copper_names_both() -> None:
    choice = choose(400, 1, _end("OSFP", 400), QDD)
    assert choice is not None
    assert choice.cable_part == "OSFP-to-QSFP-DD-400G-DAC"


@given(st.floats(min_value=0.1, max_value=10000), st.sampled_from([400, 800]))
def test_choice_reaches_and_is_the_shortest_reach_that_does(length: float, speed: int) -> None:
    table = optics_table()
    end = QDD if speed == 400 else OSFP800
    choice = choose(speed, length, end, end)
    assert choice is not None
    reach = {m.name: m.reach_m for m in table.media}
    assert reach[choice.medium] >= length
    assert all(r < length for name, r in reach.items() if r < reach[choice.medium])
