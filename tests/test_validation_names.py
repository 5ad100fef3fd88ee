"""Name rules, checked against RFC 1123 §2.1 examples and the documented placeholders."""

from __future__ import annotations

import pytest

from fabricgen.inventory.validation.names import PLACEHOLDERS, hostname_problem, pattern_problem


@pytest.mark.parametrize("name", ["a", "leaf01", "3com", "pod1-leaf01", "A-b-C", "x" * 63, "0"])
def test_valid_host_names(name: str) -> None:
    assert hostname_problem(name) == ""


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("", "it is empty"),
        ("x" * 64, "it is 64 characters long"),
        ("leaf-", "it ends with '-'"),
        ("-leaf", "it starts with '-'"),
        ("leaf 01", "' ' is not allowed"),
        ("leaf.01", "'.' is not allowed"),
        ("leaf_01", "'_' is not allowed"),
        ("leaf$(id)", "'$' is not allowed"),
        ("l\u0435af", "'\u0435' is not allowed"),  # a Cyrillic e that looks Latin
    ],
)
def test_invalid_host_names(name: str, why: str) -> None:
    assert hostname_problem(name) == why


@pytest.mark.parametrize(
    ("pattern", "key", "problem"),
    [
        ("{fabric}-spine{index:02d}", "spines", ""),
        ("{fabric}-p{pod}-leaf{index:03d}", "leaves", ""),
        ("{fabric}-ss{plane:02d}-{index}", "superspines", ""),
        ("{leaf}-srv{index:02d}", "servers", ""),
        ("su{unit}-gpu{index:02d}-{leaf_index}", "servers", ""),
        ("{fabric.__class__}-{index}", "spines", "{fabric.__class__}: attribute or index access is not allowed in a name pattern"),
        ("{fabric[0]}-{index}", "spines", "{fabric[0]}: attribute or index access is not allowed in a name pattern"),
        ("{index!r}", "spines", "{index!r}: conversions (!r, !s, !a) are not allowed in a name pattern"),
        ("x{index:>9}", "spines", "{index:>9}: only zero padding like {index:02d} is allowed"),
        ("{fabric:>20}{index}", "spines", "{fabric:>20}: a format is not allowed here"),
        ("{plane}-{index}", "spines", "{plane} is not a placeholder of this pattern"),
        ("{}-{index}", "spines", "{} is not a placeholder of this pattern"),
        ("{leaf}-{index}", "leaves", "{leaf} is not a placeholder of this pattern"),
        ("x}{index}", "leaves", "braces do not pair up (Single '}' encountered in format string); write '{{' and '}}' for literal braces"),
    ],
)
def test_name_patterns(pattern: str, key: str, problem: str) -> None:
    assert pattern_problem(pattern, PLACEHOLDERS[key]) == problem
