"""The examples in the docstrings of the validation modules, the loader and the writer run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "fabricgen.loader",
    "fabricgen.write",
    "fabricgen.validation.addresses",
    "fabricgen.validation.common",
    "fabricgen.validation.names",
    "fabricgen.validation.text",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0, result
