"""Shared fixtures: the repository root and the bundled example inventories."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "inventories"


@pytest.fixture
def root() -> Path:
    return ROOT


@cache
def example_plan(name: str) -> Plan:
    """The plan of inventories/NAME, planned once per test session and shared by every test that
    only reads it (a plan is frozen). cluster-3tier alone costs about 1.5 CPU-seconds to plan,
    and a dozen tests in several files read it."""
    return load_and_plan(EXAMPLES / name).plan
