"""Checks of an inventory beyond its schema, in three steps of the pipeline:

- `check_raw`: on the document as read (control characters, keys included);
- `check_document`: on the schema-valid document with defaults, before the plan is built
  (names, addresses, identity, settings); their errors stop the pipeline, since the planner
  would otherwise expand them into garbage or fail;
- `check_planned`: on the plan, for what only the expansion knows (derived ASNs, derived
  management addresses).

Each check is a pure function of the document (or plan) and the source map, returning located
diagnostics; none changes anything. `validate` runs all of them, so it refuses everything
`render` would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.addresses import check_addresses, check_gateway_users, check_service_addresses
from fabricgen.inventory.validation.identity import check_identity, check_public_asns, check_reserved_asns
from fabricgen.inventory.validation.names import check_names
from fabricgen.inventory.validation.settings import check_settings
from fabricgen.inventory.validation.text import check_text

DocumentCheck = Callable[[dict[str, Any], SourceMap], list[Diagnostic]]
PlanCheck = Callable[[Plan, dict[str, Any], SourceMap], Iterable[Diagnostic]]

DOCUMENT_CHECKS: tuple[DocumentCheck, ...] = (check_addresses, check_identity, check_names, check_settings)
PLAN_CHECKS: tuple[PlanCheck, ...] = (check_gateway_users, check_reserved_asns, check_public_asns, check_service_addresses)


def check_raw(data: Any, source: SourceMap) -> list[Diagnostic]:
    return check_text(data, source)


def check_document(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    for check in DOCUMENT_CHECKS:
        found.extend(check(doc, source))
    return found


def check_planned(plan: Plan, doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    return [finding for check in PLAN_CHECKS for finding in check(plan, doc, source)]


__all__ = ["DOCUMENT_CHECKS", "PLAN_CHECKS", "check_document", "check_planned", "check_raw"]
