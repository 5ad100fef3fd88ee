"""The bundled example inventories validate and plan."""

from __future__ import annotations

import pytest

from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES

EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "fabric.yml").is_file())


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_plans(name: str) -> None:
    plan = load_and_plan(EXAMPLES / name).plan
    assert plan.devices
    assert all(o.ratio <= plan.max_oversubscription for o in plan.oversubscription)
