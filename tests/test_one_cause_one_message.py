"""One cause, one message: an InfiniBand leaf with more servers than uplinks is reported once
(its oversubscription), not again per leaf as "not 1:1"; a limit below 1:1 reads as what it is.
Expected figures come from the inventories: ib-ndr with 32 x 400G servers per leaf against
30 x 400G uplinks is 12800G:12000G, 1.07:1."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.core.diagnostics import FabricError
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES
from tests.fabrics import fabric, write


def _errors(path: Path) -> list[str]:
    with pytest.raises(FabricError) as caught:
        load_and_plan(path)
    return [d.format() for d in caught.value.diagnostics if d.is_error]


def test_an_oversubscribed_infiniband_leaf_is_one_message(tmp_path: Path) -> None:
    text = (EXAMPLES / "ib-ndr" / "fabric.yml").read_text(encoding="utf-8")
    assert "per_leaf: 28 " in text
    path = tmp_path / "fabric.yml"
    path.write_text(text.replace("per_leaf: 28 ", "per_leaf: 32 "), encoding="utf-8")
    errors = _errors(path)
    assert len(errors) == 1, errors
    assert "ib2-leaf01..ib2-leaf04 are oversubscribed 1.07:1 (12800G to servers, 12000G to spines); allowed 1:1" in errors[0]


def test_a_limit_below_one_to_one_does_not_call_a_balanced_leaf_oversubscribed(tmp_path: Path) -> None:
    # BASE: 4 x 400G servers per leaf; 2 spines x 2 x 400G uplinks: 1600G down, 1600G up.
    errors = _errors(write(tmp_path, fabric(oversubscription={"max_ratio": "1:2"})))
    assert len(errors) == 1, errors
    assert "t1-leaf01..t1-leaf04 have downlink:uplink 1:1 (1600G to servers, 1600G to spines), above the allowed 0.5:1" in errors[0]
    assert "oversubscribed" not in errors[0]


def test_an_oversubscribed_leaf_shows_the_ratio_canonically(tmp_path: Path) -> None:
    errors = _errors(write(tmp_path, fabric(servers={"per_leaf": 6})))
    assert any("are oversubscribed 1.5:1 (2400G to servers, 1600G to spines); allowed 1:1" in e for e in errors), errors
