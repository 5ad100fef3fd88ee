"""Parts and physical identities of a cable's media: module names per cage, breakout and splitter
cables once per cage, one patch cord per optical port, cord part names distinct per connector."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from fabricgen.core.model import Choice
from fabricgen.plan.media import End, choose, identities


@dataclass(frozen=True)
class _Decision:
    """A cable's parts (`choice`) with the identities of its physical items from its ends."""

    choice: Choice
    cable_keys: tuple[tuple[str, ...], ...]
    a_key: tuple[str, ...]
    z_key: tuple[str, ...]

    @property
    def cable_key(self) -> tuple[str, ...]:
        return self.cable_keys[0]

    def __getattr__(self, name: str) -> object:
        return getattr(self.choice, name)


def decide(speed: int, length_m: float, a: End, z: End) -> _Decision | None:
    choice = choose(speed, length_m, a, z)
    if choice is None:
        return None
    items = identities(choice, a, z)
    return _Decision(choice, items.cables, items.a, items.z)


def _end(form_factor: str, cage_speed: int, rate: int, shared: int = 1, device: str = "sw", port: int = 1, sub: int = 1) -> End:
    return End(device, port, f"Ethernet{port}/{sub}", form_factor, cage_speed, shared, rate, sub)


QDD = _end("QSFP-DD", 400, 50)


@pytest.mark.parametrize(
    ("length", "part"),
    [
        (3, "QSFP-DD-400G-DAC"),
        (30, "QSFP-DD-400G-AOC"),
        (100, "QSFP-DD-400G-SR8"),
        (500, "QSFP-DD-400G-DR4"),
        (2000, "QSFP-DD-400G-FR4"),
        (10000, "QSFP-DD-400G-LR4"),
    ],
)
def test_400g_qsfp_dd_parts(length: float, part: str) -> None:
    choice = decide(400, length, QDD, _end("QSFP-DD", 400, 50, device="sp"))
    assert choice is not None
    if choice.kind == "fibre":
        assert choice.a_optic == choice.z_optic == part
    else:
        assert (choice.cable_part, choice.a_optic, choice.z_optic) == (part, "", "")


@pytest.mark.parametrize(
    ("length", "fibre"),
    [(100, "MMF-OM4-MPO-16"), (500, "SMF-OS2-MPO-12-APC"), (2000, "SMF-OS2-LC-DUPLEX")],
)
def test_patch_cord_part_follows_the_connector(length: float, fibre: str) -> None:
    """SR8 takes an MPO-16 cord (IEEE 802.3cm: 16 fibres), DR4 an MPO-12/APC, FR4 a duplex LC."""
    choice = decide(400, length, QDD, _end("QSFP-DD", 400, 50, device="sp"))
    assert choice is not None and choice.cable_part == fibre


def test_sr8_and_sr4_cords_are_distinct_parts() -> None:
    sr8 = decide(400, 40, QDD, _end("QSFP-DD", 400, 50, device="sp"))
    sr4 = decide(400, 40, _end("OSFP", 400, 100), _end("OSFP", 800, 100, shared=2, device="sp"))
    assert sr8 is not None and sr4 is not None
    assert (sr8.variant, sr4.variant) == ("SR8", "SR4")
    assert sr8.cable_part != sr4.cable_part


def test_800g_twin_port_link_takes_two_cords() -> None:
    """Each 2xDR4 module has two MPO-12/APC ports: an 800G link between two uses both."""
    a, z = _end("OSFP", 800, 100, device="sp"), _end("OSFP", 800, 100, device="ss")
    choice = decide(800, 150, a, z)
    assert choice is not None
    assert (choice.a_optic, choice.variant, len(set(choice.cable_keys))) == ("OSFP-800G-2xDR4", "2xDR4", 2)


def test_400g_into_half_an_800g_cage_shares_the_cage_module() -> None:
    spine = _end("OSFP", 800, 100, shared=2, device="spine", port=1)
    first = decide(400, 200, _end("QSFP-DD", 400, 50, device="l1"), spine)
    second = decide(400, 200, _end("QSFP-DD", 400, 50, device="l2"), _end("OSFP", 800, 100, shared=2, device="spine", port=1, sub=5))
    assert first is not None and second is not None
    assert (first.a_optic, first.z_optic) == ("QSFP-DD-400G-DR4", "OSFP-800G-2xDR4")
    assert first.z_key == second.z_key
    assert first.a_key != second.a_key
    assert len(first.cable_keys) == 1 and first.cable_keys != second.cable_keys


def test_ndr_hca_splitter_dac_once_per_cage() -> None:
    """QM9700 cage to two ConnectX-7 OSFP HCAs at 2 m: one 1:2 splitter DAC (NVIDIA MCP7Y00)."""
    leaf = _end("OSFP", 800, 100, shared=2, device="leaf", port=3)
    first = decide(400, 2, _end("OSFP", 400, 100, device="gpu1"), leaf)
    second = decide(400, 2, _end("OSFP", 400, 100, device="gpu2"), _end("OSFP", 800, 100, shared=2, device="leaf", port=3, sub=2))
    assert first is not None and second is not None
    assert first.cable_part == "OSFP-800G-to-2xOSFP-400G-DAC"
    assert first.cable_key == second.cable_key


def test_nothing_reaches_past_10km() -> None:
    assert decide(400, 10000.01, QDD, _end("QSFP-DD", 400, 50, device="sp")) is None


def test_ndr200_links_share_one_splitter_cord_per_optical_port() -> None:
    """Four NDR200 links on one twin-port module (two optical ports): two 1:2 splitter cords."""
    keys = set()
    for sub in (1, 2, 3, 4):
        choice = decide(
            200, 80, _end("OSFP", 400, 100, device=f"gpu{sub}"), _end("OSFP", 800, 100, shared=4, device="leaf", port=1, sub=sub)
        )
        assert choice is not None
        assert choice.cable_part == "SMF-OS2-MPO-12-APC-1x2-SPLITTER"
        keys.update(choice.cable_keys)
    assert len(keys) == 2


def test_mixed_form_factor_copper_names_both() -> None:
    choice = decide(400, 1, _end("OSFP", 400, 100), _end("QSFP112", 400, 100, device="nic"))
    assert choice is not None
    assert choice.cable_part == "OSFP-to-QSFP112-400G-DAC"
