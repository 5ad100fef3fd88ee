"""The bundled example inventories validate and plan."""

from __future__ import annotations

import pytest

from tests.conftest import EXAMPLES, example_plan

EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "fabric.yml").is_file())


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_example_plans(name: str) -> None:
    plan = example_plan(name)
    assert plan.devices
    assert all(o.ratio <= plan.max_oversubscription for o in plan.oversubscription)
