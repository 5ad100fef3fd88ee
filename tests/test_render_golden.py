"""Golden files: full configs of a spine and a leaf of every platform in every RoCE example,
and the plan fragments (plan/fabric.json, plan/devices/*.json) of the smallest fixture. Update with `pytest --update-goldens` and review the
diff like code."""

from __future__ import annotations

from typing import Any

import pytest

from tests.render_cases import rendered


@pytest.mark.golden_test("goldens/configs/*.yml")
def test_device_config_golden(golden: Any) -> None:
    _, files = rendered(golden["inventory"])
    assert files[f"configs/{golden['device']}.cfg"] == golden.out["config"]


@pytest.mark.golden_test("goldens/plans/*.yml")
def test_plan_fragments_golden(golden: Any) -> None:
    _, files = rendered(golden["inventory"])
    assert {path: text for path, text in files.items() if path.startswith("plan/")} == golden.out["plan_files"]


@pytest.mark.golden_test("goldens/config-folders/*.yml")
def test_device_config_folder_golden(golden: Any) -> None:
    """A switch whose platform takes several files (`config_files:`): the whole folder."""
    _, files = rendered(golden["inventory"])
    folder = f"configs/{golden['device']}/"
    assert {path.removeprefix(folder): text for path, text in files.items() if path.startswith(folder)} == golden.out["files"]
