"""`fabricgen plan`'s growth line names a unit and a count that are true for the fabric's shape.

Before, a rail fabric of 12 leaves (3 units of 4 rail leaves) read "by unit of 4 rail leaves
(leaves.count, today 3)": leaves.count is 12. Expected figures come from the inventories below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from tests.fabrics import fabric, write


def _plan_text(tmp_path: Path, doc: dict[str, Any]) -> str:
    result = CliRunner().invoke(main, ["plan", str(write(tmp_path, doc))], terminal_width=250)
    assert result.exit_code == 0, result.output
    return " ".join(result.output.split())


def _rail(rails: int, units: int) -> dict[str, Any]:
    return fabric(
        leaves={"count": rails * units},
        servers={"attachment": "rail", "rails": rails, "ports_per_server": rails, "per_leaf": 4, "speed": "400G"},
    )


@pytest.mark.parametrize(("rails", "units"), [(4, 3), (2, 5), (8, 1)])
def test_a_rail_fabric_counts_units_and_names_the_leaves(tmp_path: Path, rails: int, units: int) -> None:
    text = _plan_text(tmp_path, _rail(rails, units))
    unit = f"unit of {rails} rail leaves"
    today = f"{units} {unit}" if units == 1 else f"{units} units of {rails} rail leaves"
    assert f"Growth headroom: by {unit} (leaves.count {rails * units}: today {today})" in text
    # one unit: `rails` leaves, 4 servers per unit with one NIC port on each rail
    assert f"one {unit} adds {rails} leaves and {4 * rails} GPU ports" in text


@pytest.mark.parametrize("leaves", [3, 6])
def test_a_leaf_fabric_counts_leaves(tmp_path: Path, leaves: int) -> None:
    text = _plan_text(tmp_path, fabric(leaves={"count": leaves}))
    assert f"Growth headroom: by leaf (leaves.count, today {leaves})" in text
    assert "one leaf adds 1 leaf and 4 GPU ports" in text  # BASE: 4 servers x 1 port
