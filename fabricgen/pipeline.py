"""The pipeline, top to bottom: load -> validate -> plan -> check. Rendering and writing
read its result (see `render.py` and `write.py`).
"""

from __future__ import annotations

from pathlib import Path

from fabricgen.checks.fabric import check_plan
from fabricgen.core.diagnostics import Diagnostic, FabricError, raise_if_errors
from fabricgen.core.model import Plan
from fabricgen.core.records import record
from fabricgen.inventory.loader import load_inventory, resolve_inventory_path
from fabricgen.inventory.schema import apply_defaults, normalise_units, validate_document
from fabricgen.inventory.validation import check_document, check_planned, check_raw
from fabricgen.plan.build import build_plan
from fabricgen.plan.inputs import Inputs, inputs_of


@record
class Checked:
    plan: Plan
    warnings: tuple[Diagnostic, ...]
    inputs: Inputs
    """The typed inventory the plan was built from (growth planning re-plans variations of it)."""


def load_and_plan(inventory: Path, display_name: str | None = None) -> Checked:
    """Run every stage up to a checked plan; raise FabricError with all problems otherwise."""
    document = load_inventory(inventory, display_name or str(resolve_inventory_path(inventory)))
    data, unit_problems = normalise_units(document.data, document.source)
    refused = {d.path for d in unit_problems}
    problems = unit_problems + [d for d in validate_document(data, document.source) if d.path not in refused]
    problems += check_raw(document.data, document.source)
    raise_if_errors(problems)
    doc = apply_defaults(data)
    early = check_document(doc, document.source)
    raise_if_errors(early)
    inputs = inputs_of(doc, document.source)
    try:
        plan = build_plan(inputs)
    except FabricError as exc:  # keep the early warnings with the planner's errors
        raise FabricError(early + exc.diagnostics) from None
    findings = early + check_plan(plan, inputs) + check_planned(plan, doc, document.source)
    raise_if_errors(findings)
    return Checked(plan, tuple(findings), inputs)


__all__ = ["Checked", "FabricError", "load_and_plan"]
