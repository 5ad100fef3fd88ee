"""`checks/registry.py` is the one place a check is added: every public `check_*` function of
the inventory and plan checks is named there exactly once, under a unique name, and the root
causes' rule (no duplicate report on top of a pool too small) is the registry's."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

import pytest

import fabricgen
from fabricgen.checks import registry
from fabricgen.core.diagnostics import Diagnostic, Severity
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.inputs import Inputs

PACKAGE = Path(fabricgen.__file__).parent
CHECK_FOLDERS = ("checks", "inventory/validation")


def _defined_checks() -> dict[str, object]:
    """`module.check_x` -> the function, for every public check_* defined in a check folder."""
    found: dict[str, object] = {}
    for folder in CHECK_FOLDERS:
        for path in sorted((PACKAGE / folder).glob("*.py")):
            if path.stem in ("__init__", "registry"):
                continue
            module = importlib.import_module(".".join(("fabricgen", *folder.split("/"), path.stem)))
            for name, function in inspect.getmembers(module, inspect.isfunction):
                if name.startswith("check_") and function.__module__ == module.__name__:
                    found[f"{module.__name__}.{name}"] = function
    return found


def _registered() -> list[object]:
    return [check.run for check in (*registry.RAW_CHECKS, *registry.DOCUMENT_CHECKS, *registry.PLAN_CHECKS)]


def test_every_check_function_is_registered_once() -> None:
    registered = _registered()
    defined = _defined_checks()
    assert len(defined) >= 20  # the walk found the checks
    missing = [name for name, function in defined.items() if function not in registered]
    assert not missing, f"not named in fabricgen/checks/registry.py: {missing}"
    twice = [run for run in registered if registered.count(run) > 1]
    assert not twice


def test_check_names_are_unique() -> None:
    names = [check.name for check in (*registry.RAW_CHECKS, *registry.DOCUMENT_CHECKS, *registry.PLAN_CHECKS)]
    assert len(names) == len(set(names))


def test_a_check_after_a_root_cause_is_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A check marked `unless_earlier_errors` runs when the checks before it found only
    warnings, and is skipped once one of them found an error."""
    ran: list[str] = []

    def finding(severity: Severity) -> registry.PlanCheck:
        def run(plan: Plan, inputs: Inputs, source: SourceMap) -> list[Diagnostic]:
            ran.append("root")
            return [Diagnostic("root cause", "pools", severity=severity)]

        return registry.PlanCheck("root", run)

    def follower(plan: Plan, inputs: Inputs, source: SourceMap) -> list[Diagnostic]:
        ran.append("follower")
        return []

    class _Inputs:
        source = SourceMap("f.yml")

    for severity, expected in ((Severity.WARNING, ["root", "follower"]), (Severity.ERROR, ["root"])):
        ran.clear()
        monkeypatch.setattr(
            registry, "PLAN_CHECKS", (finding(severity), registry.PlanCheck("follower", follower, unless_earlier_errors=True))
        )
        registry.check_plan(object.__new__(Plan), _Inputs())  # type: ignore[arg-type]
        assert ran == expected
