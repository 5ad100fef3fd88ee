"""Shared fixtures: the repository root, the bundled example inventories, waiting on a condition,
and how the suite runs in parallel (`make test`: pytest-xdist, one file per worker at a time)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan
from tests.lab_helpers import needs_lab

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "inventories"

LAB_SLOTS = 1
"""FRR labs booted at once by one parallel run. A lab's BFD runs at 300 ms x 3 and its fault drill
times route withdrawal: with two labs beside the CPU-bound tests on a 2-core machine, a fresh-clone
run saw pod-roce-400g's withdrawal take 6.8 s against its 5.9 s limit, so labs take turns."""
FIRST = ("test_lab_", "test_playbooks_", "test_ib_verify", "test_ib_import")
"""Modules that run longest (labs, playbooks, OpenSM simulations) start first, so no worker is
left with a long test while the others are idle at the end of a parallel run."""


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first (a stable sort: file order within each). `make test` runs the
    files in this order (`--dist loadfile --no-loadscope-reorder`): all of a file's tests on one
    worker, so a module's fixture (a lab booted once per module) is built once."""
    items.sort(key=lambda item: not item.path.name.startswith(FIRST))


def _boots_labs(module: Any) -> bool:
    marks = getattr(module, "pytestmark", [])
    return any(getattr(m, "mark", m) == needs_lab.mark for m in (marks if isinstance(marks, list) else [marks]))


@contextlib.contextmanager
def _slot(folder: Path, timeout: float = 3600) -> Iterator[None]:
    """One of LAB_SLOTS lock files in `folder` (shared by the workers of one run), held while the
    lab runs; a worker that finds none free waits for one, up to `timeout` seconds."""
    folder.mkdir(exist_ok=True)
    deadline = time.monotonic() + timeout
    while True:
        for index in range(LAB_SLOTS):
            handle = (folder / f"slot{index}").open("a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                handle.close()
                continue
            try:
                yield
            finally:
                handle.close()
            return
        assert time.monotonic() < deadline, f"no lab slot free in {folder} for {timeout} s"
        time.sleep(1)


@pytest.fixture(scope="module", autouse=True)
def lab_slot(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """In a parallel run, a module that boots FRR labs holds a lab slot while its tests run on
    this worker (autouse module fixtures are set up before the module's lab)."""
    if "PYTEST_XDIST_WORKER" not in os.environ or not _boots_labs(getattr(request, "module", None)):
        yield
        return
    with _slot(tmp_path_factory.getbasetemp().parent / "lab-slots"):
        yield
