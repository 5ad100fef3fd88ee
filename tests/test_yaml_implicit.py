"""YAML 1.1's implicit types read as the person meant them, everywhere in the inventory.

PyYAML reads unquoted `1:1` as the base-60 number 61, `010` as the octal 8 and `on` as true.
Every value is read as written where the schema expects text, as a boolean where it expects
one, and refused with the reason where a number is expected and YAML 1.1 would change it.
Expected values come from the text written, never from the code under test.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricgen.core.diagnostics import FabricError
from fabricgen.core.units import format_ratio
from fabricgen.inventory.loader import parse_inventory_text
from fabricgen.inventory.schema import normalise_units
from fabricgen.pipeline import load_and_plan
from tests.fabrics import fabric

RAW = "@RAW@"


def text_with(raw: str, **changes: Any) -> str:
    """The YAML of `fabric(**changes)` with the value RAW replaced by `raw`, written unquoted."""
    text = yaml.safe_dump(fabric(**changes), sort_keys=False)
    assert f"'{RAW}'" in text
    return text.replace(f"'{RAW}'", raw)


def normalised(text: str) -> tuple[Any, list[str]]:
    document = parse_inventory_text(text, "f.yml")
    data, problems = normalise_units(document.data, document.source)
    return data, [d.format() for d in problems]


def _errors(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "fabric.yml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(FabricError) as caught:
        load_and_plan(path)
    return [d.format() for d in caught.value.diagnostics if d.is_error]


# --- ratios -----------------------------------------------------------------------------------


def test_unquoted_1_1_is_one_to_one_and_refuses_a_2_to_1_leaf(tmp_path: Path) -> None:
    """The issue's case: read as 61, a 4:1 fabric (16 x 400G down, 2 spines x 2 x 400G up)
    passed with "allowed 61:1"."""
    text = text_with("1:1", servers={"per_leaf": 16}, oversubscription={"max_ratio": RAW})
    errors = _errors(tmp_path, text)
    assert any("oversubscribed 4:1 (6400G to servers, 1600G to spines); allowed 1:1" in e for e in errors), errors


@pytest.mark.parametrize(
    ("raw", "value"), [("1:1", 1.0), ("3:1", 3.0), ('"3:1"', 3.0), ("'2:1'", 2.0), ("1.5", 1.5), ("2", 2.0), ("1:2", 0.5)]
)
def test_ratio_spellings(raw: str, value: float) -> None:
    data, problems = normalised(text_with(raw, oversubscription={"max_ratio": RAW}))
    assert problems == []
    assert data["oversubscription"]["max_ratio"] == pytest.approx(value)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    down=st.integers(min_value=1, max_value=64),
    up=st.integers(min_value=1, max_value=64),
    quote=st.sampled_from(["", '"', "'"]),
)
def test_every_ratio_spelling_round_trips_to_its_canonical_form(down: int, up: int, quote: str) -> None:
    """`a:b`, quoted or not (YAML 1.1 reads some unquoted ones as base 60, others as text),
    and the decimal a/b all give one value, shown one way."""
    expected = Fraction(down, up)
    data, problems = normalised(text_with(f"{quote}{down}:{up}{quote}", oversubscription={"max_ratio": RAW}))
    assert problems == []
    read = data["oversubscription"]["max_ratio"]
    assert read == pytest.approx(float(expected))
    decimal, _ = normalised(text_with(f"{float(expected):.4f}", oversubscription={"max_ratio": RAW}))
    assert format_ratio(decimal["oversubscription"]["max_ratio"]) == format_ratio(read)
    canonical, _ = normalised(text_with(format_ratio(read), oversubscription={"max_ratio": RAW}))
    assert format_ratio(canonical["oversubscription"]["max_ratio"]) == format_ratio(read)


@pytest.mark.parametrize(("raw", "message"), [("3:0", "divides by 0"), ("3/1", "is not in the expected form")])
def test_a_ratio_that_is_none_is_refused(tmp_path: Path, raw: str, message: str) -> None:
    errors = _errors(tmp_path, text_with(raw, oversubscription={"max_ratio": RAW}))
    assert len(errors) == 1 and "oversubscription.max_ratio" in errors[0] and message in errors[0], errors


# --- numbers YAML 1.1 changes: refused where a number is meant ---------------------------------

NUMBER_KEYS = [
    {"spines": {"count": RAW}},
    {"servers": {"per_leaf": RAW}},
    {"bgp": {"spine_asn": RAW}},
    {"roce": {"dscp": {"data": RAW}}},
    {"uplinks": {"per_spine": RAW}},
    {"jobs": {"train": {"gpus": RAW}}},
]


def _where(changes: dict[str, Any]) -> str:
    path: list[str] = []
    node: Any = changes
    while isinstance(node, dict):
        key = next(iter(node))
        path.append(key)
        node = node[key]
    return ".".join(path)


@pytest.mark.parametrize("changes", NUMBER_KEYS, ids=_where)
@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("010", "'010' has a leading zero: YAML 1.1 reads it as the octal number 8, YAML 1.2 as 10"),
        ("1:30", "'1:30' is read by YAML 1.1 as the base-60 (sexagesimal) number 90"),
        ("on", "'on' is the YAML 1.1 boolean true, not a number"),
        ("No", "'No' is the YAML 1.1 boolean false, not a number"),
    ],
)
def test_a_number_yaml_would_change_is_refused_with_the_reason(changes: dict[str, Any], raw: str, message: str) -> None:
    _, problems = normalised(text_with(raw, **changes))
    assert len(problems) == 1, problems
    assert f": {_where(changes)}: {message}" in problems[0]


@settings(max_examples=100, deadline=None)
@given(number=st.integers(min_value=1, max_value=4095))
def test_every_leading_zero_integer_is_refused_never_read_as_octal(number: int) -> None:
    written = f"0{number:o}"
    _, problems = normalised(text_with(written, roce={"dscp": {"data": RAW}}))
    assert problems and f"'{written}' has a leading zero" in problems[0]


def test_numbers_nobody_reads_two_ways_keep_their_value() -> None:
    data, problems = normalised(text_with("0x1a", roce={"dscp": {"data": RAW}}))
    assert problems == [] and data["roce"]["dscp"]["data"] == 26
    data, problems = normalised(text_with("65_000", bgp={"spine_asn": RAW}))
    assert problems == [] and data["bgp"]["spine_asn"] == 65000


# --- text and booleans ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "raw", "path", "text"),
    [
        ({"fabric": {"name": RAW}}, "on", ("fabric", "name"), "on"),
        ({"fabric": {"name": RAW}}, "1:30", ("fabric", "name"), "1:30"),
        ({"fabric": {"name": RAW}}, "0755", ("fabric", "name"), "0755"),
        ({"services": {"domain": RAW}}, "1.10", ("services", "domain"), "1.10"),
        ({"qos": {"vlarb_low": RAW}}, "1:4", ("qos", "vlarb_low"), "1:4"),
        ({"jobs": {"train": {"params": RAW}}}, "70", ("jobs", "train", "params"), "70"),
    ],
)
def test_text_is_read_as_written(changes: dict[str, Any], raw: str, path: tuple[str, ...], text: str) -> None:
    data, problems = normalised(text_with(raw, **changes))
    assert problems == []
    value: Any = data
    for key in path:
        value = value[key]
    assert value == text


def test_an_unquoted_guid_is_its_text_not_a_number() -> None:
    text = text_with("0x0002c90300000001", fabric={"name": "ib", "transport": "infiniband"}, guid_prefix=RAW)
    data, problems = normalised(text)
    assert problems == [] and data["guid_prefix"] == "0x0002c90300000001"


@pytest.mark.parametrize(("raw", "value"), [("on", True), ("off", False), ("yes", True), ("No", False), ("true", True)])
def test_word_booleans_are_booleans_where_a_boolean_is_meant(raw: str, value: bool) -> None:
    data, problems = normalised(text_with(raw, roce={"ecn": {"enabled": RAW}}))
    assert problems == [] and data["roce"]["ecn"]["enabled"] is value


def test_every_problem_is_reported_at_once_with_its_place(tmp_path: Path) -> None:
    text = text_with("010", spines={"count": RAW}).replace("spine_asn: 65000", "spine_asn: 1:30")
    errors = _errors(tmp_path, text)
    assert len(errors) == 2, errors
    lines = text.splitlines()
    count_line = next(i for i, line in enumerate(lines, 1) if "count: 010" in line)
    asn_line = next(i for i, line in enumerate(lines, 1) if "spine_asn: 1:30" in line)
    assert any(e.startswith(f"{tmp_path / 'fabric.yml'}:{count_line}:") and "spines.count" in e for e in errors)
    assert any(e.startswith(f"{tmp_path / 'fabric.yml'}:{asn_line}:") and "bgp.spine_asn" in e for e in errors)
