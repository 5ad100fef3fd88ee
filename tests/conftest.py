"""Shared fixtures: the repository root and the bundled example inventories."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "inventories"


@pytest.fixture
def root() -> Path:
    return ROOT
