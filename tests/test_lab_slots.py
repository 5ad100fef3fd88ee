"""The lab slots of a parallel run (tests/conftest.py): at most LAB_SLOTS labs at once, and a
slot comes free when its holder ends."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.conftest import LAB_SLOTS, _slot


def test_no_more_labs_than_slots_and_a_freed_slot_is_taken(tmp_path: Path) -> None:
    with contextlib.ExitStack() as held:
        for _ in range(LAB_SLOTS):
            held.enter_context(_slot(tmp_path, timeout=5))
        with pytest.raises(AssertionError, match="no lab slot free"), _slot(tmp_path, timeout=0):
            pass
    with _slot(tmp_path, timeout=0):  # every holder gone: one is free at once
        pass
