"""yaml_text writes what yaml.dump writes (libyaml, block style, sorted keys), for any plain data."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.render import yamlemit
from fabricgen.render.yamlemit import yaml_text

_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

scalars = st.one_of(
    st.text(max_size=12),
    st.integers(),
    st.booleans(),
    st.none(),
    st.sampled_from(["yes", "0x1f", "1e3", "null", "~", "a: b", "- x", "Ethernet1/1", ""]),
)
data = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=20
)


@settings(max_examples=300)
@given(data, st.sampled_from([None, 40, 200]), st.booleans())
def test_same_text_as_yaml_dump(value: Any, width: int | None, sort_keys: bool) -> None:
    expected = yaml.dump(value, Dumper=_DUMPER, sort_keys=sort_keys, default_flow_style=False, width=width)
    assert yaml_text(value, width=width, sort_keys=sort_keys) == expected
    assert yaml_text(value, width=width, sort_keys=sort_keys) == expected  # the memoised resolver answers the same the second time


def test_refuses_unknown_types() -> None:
    try:
        yaml_text({"a": 1.5})
    except TypeError as error:
        assert "float" in str(error)
    else:
        raise AssertionError("a float was represented")


fabric_text = (
    st.text(alphabet="aEy0159._/-:#'\"!&*%@,[]{}?|>~=<+ \n\t\u00e9", max_size=10)
    | st.text(alphabet="ab .", min_size=60, max_size=90)
    | st.from_regex(r"[0-9_]{1,3}(\.[0-9_eE+-]{0,3}){1,3}(/[0-9]{1,2})?", fullmatch=True)
)
"""Strings near the edge of plain style: indicators, resolver look-alikes, quotes."""
fabric_data = st.recursive(
    st.one_of(fabric_text, st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.from_regex(r"[a-z_.:][a-z0-9_:.-]{0,6}", fullmatch=True), inner, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=500, deadline=None)  # no timing: a loaded machine is not a failure
@given(fabric_data, st.sampled_from([None, 200]), st.booleans())
def test_direct_writer_same_text_as_yaml_dump(value: Any, width: int | None, sort_keys: bool) -> None:
    """Data shaped like the host_vars (identifier keys, short strings): mostly the direct writer."""
    expected = yaml.dump(value, Dumper=_DUMPER, sort_keys=sort_keys, default_flow_style=False, width=width)
    assert yaml_text(value, width=width, sort_keys=sort_keys) == expected


def test_host_vars_shape_takes_the_direct_path(monkeypatch: Any) -> None:
    """The shape of ansible/host_vars never falls back to building libyaml's node tree."""

    def refuse(*args: Any) -> str:
        raise AssertionError("fell back to the node path")

    data = {
        "fabricgen_config": "configs/leaf01.cfg",
        "fabricgen_bgp_neighbors": [{"address": "10.1.0.0", "remote_asn": 4200000101, "peer": "spine01", "peer_interface": "Ethernet1/1"}],
        "fabricgen_fabric_interfaces": ["Ethernet1/1", "Ethernet2/1"],
        "fabricgen_roce_interfaces": [],
        "fabricgen_lldp_plan": [{"interface": "Ethernet1/1", "peer": "yes", "peer_interface": "Ethernet1/1"}],
    }
    expected = yaml.dump(data, Dumper=_DUMPER, sort_keys=True, default_flow_style=False, width=200)
    monkeypatch.setattr(yamlemit, "_node", refuse)
    assert yaml_text(data, width=200) == expected


names = st.text(alphabet="aynoNTEx019._/:-", max_size=8) | st.from_regex(r"(\.\./)?[a-zA-Z]{0,3}[0-9.:/_-]{0,4}", fullmatch=True)
"""Strings around the one-scan rule: bool and null words, dotted numbers, trailing colons, `../`."""


def test_plain_texts_only_for_what_yaml_dump_writes_as_it_is() -> None:
    """A true answer means libyaml writes every string as it is; with `known`, a second look at
    the same strings answers the same without scanning them again. Fails when too few lists
    were found plain, so it cannot pass by answering no."""
    plain: list[list[str]] = []

    @settings(max_examples=500, derandomize=True)
    @given(st.lists(names, min_size=1, max_size=4), st.booleans())
    def check(texts: list[str], remember: bool) -> None:
        known: set[str] | None = set() if remember else None
        if yamlemit.plain_texts(texts, known):
            plain.append(texts)
            for text in texts:
                assert yaml.dump([text], Dumper=_DUMPER, width=200) == f"- {text}\n"
            assert yamlemit.plain_texts(texts, known)

    check()
    assert len(plain) >= 50, len(plain)


def test_plain_texts_takes_names_and_addresses_not_words_or_line_breaks() -> None:
    plain = ["Ethernet1/1", "b3-p01-leaf01", "10.4.0.1", "10.0.0.0/31", "../configs/leaf01.cfg", "leaf01:eth1_1"]
    assert yamlemit.plain_texts(plain)
    for odd in ("yes", "leaf", "1.5", "12", "leaf01:", "a b", "leaf01\nleaf02", ""):
        assert not yamlemit.plain_texts([*plain, odd]), odd
    known: set[str] = set()
    assert yamlemit.plain_texts(plain, known) and "Ethernet1/1" in known and "10.4.0.1" not in known
