"""yaml_text writes what yaml.dump writes (libyaml, block style, sorted keys), for any plain data."""

from __future__ import annotations

from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.yamlemit import yaml_text

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
