"""The pipeline, top to bottom: load -> check the document -> plan -> check the plan. Rendering
and writing read its result (`producers.py`, `render/stream.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from fabricgen.checks.registry import check_document, check_plan
from fabricgen.core.diagnostics import Diagnostic, FabricError, raise_if_errors
from fabricgen.core.model import Plan
from fabricgen.core.records import record
from fabricgen.inventory.loader import load_inventory, resolve_inventory_path
from fabricgen.plan.build import build_plan
from fabricgen.plan.inputs import Inputs, inputs_of, with_drained


@record
class Checked:
    plan: Plan
    warnings: tuple[Diagnostic, ...]
    inputs: Inputs
    """The typed inventory the plan was built from (growth planning re-plans variations of it)."""


def load_and_plan(inventory: Path, display_name: str | None = None, drain: Sequence[str] = ()) -> Checked:
    """Run every stage up to a checked plan; raise FabricError with all problems otherwise.
    `drain`: switches drained from the command line on top of the inventory's `drain:`."""
    document = load_inventory(inventory, display_name or str(resolve_inventory_path(inventory)))
    doc, early = check_document(document)
    inputs = with_drained(inputs_of(doc, document.source), drain)
    try:
        plan = build_plan(inputs)
    except FabricError as exc:  # keep the early warnings with the planner's errors
        raise FabricError(early + exc.diagnostics) from None
    findings = early + check_plan(plan, inputs)
    raise_if_errors(findings)
    return Checked(plan, tuple(findings), inputs)


__all__ = ["Checked", "FabricError", "load_and_plan"]
