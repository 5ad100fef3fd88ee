"""Golden files for the review artifacts of each bundled example: README, cabling plan, BOM.

Update after an intended change with `pytest --update-goldens tests/test_artifacts_golden.py`
and review the diff like any other change to the output.
"""

from __future__ import annotations

import pytest

from fabricgen.artifacts import bom, cabling, fabric_readme
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES


@pytest.mark.golden_test("goldens/artifacts/*.yml")
def test_artifacts_match_goldens(golden) -> None:  # type: ignore[no-untyped-def]
    plan = load_and_plan(EXAMPLES / golden["example"], display_name=f"inventories/{golden['example']}/fabric.yml").plan
    files = render_files(plan, RenderContext(), (fabric_readme, cabling, bom))
    assert files["README.md"] == golden.out["readme"]
    assert files["cabling.csv"] == golden.out["cabling_csv"]
    assert files["cabling.md"] == golden.out["cabling_md"]
    assert files["bom.csv"] == golden.out["bom_csv"]
