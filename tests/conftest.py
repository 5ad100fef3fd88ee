"""Shared fixtures: the repository root, the bundled example inventories, waiting on a condition."""

from __future__ import annotations

import time
from collections.abc import Callable
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


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    """Whether `condition()` came true before `timeout` seconds passed, asked every `interval`:
    the tests wait on what they need to see, never for a fixed time."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(interval)
    return True
