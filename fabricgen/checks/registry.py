"""Every check of an inventory and its plan, named, in the order they run: the one place a
check is added.

A check is a pure function returning located diagnostics; it changes nothing. It reads either
the inventory document (`inventory/validation/`), and then runs before the plan is built,
because the planner would expand a bad name or prefix into garbage; or the finished plan with
the typed inputs (`checks/`), which it reads to point at the inventory key to change. To add
one, write the function in the module of its topic and name it in `DOCUMENT_CHECKS` or
`PLAN_CHECKS`; tests/test_checks_registry.py fails on a `check_*` function named nowhere.
`validate` runs all of them, so it refuses everything `render` would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from fabricgen.checks.drain import check_drain
from fabricgen.checks.fabric import (
    check_asns,
    check_duplicates,
    check_names,
    check_oversubscription,
    check_pools,
    check_ports,
    check_roce,
)
from fabricgen.checks.forwarding import check_load_balancing, check_strict_queues, check_traffic_classes
from fabricgen.checks.headroom import check_pfc_headroom
from fabricgen.checks.ib_jobs import check_job_partitions
from fabricgen.checks.ib_protection import check_sm_protection
from fabricgen.checks.ib_sm import check_sm_software
from fabricgen.checks.infiniband import check_infiniband
from fabricgen.checks.jobs import check_jobs
from fabricgen.checks.mtu import check_mtu
from fabricgen.checks.parallelism import check_parallelism
from fabricgen.checks.reserved import check_gateway_users, check_public_asns, check_reserved_asns, check_service_addresses
from fabricgen.checks.scale import check_rails, check_tier_asns
from fabricgen.checks.watchdog import check_watchdog_timers
from fabricgen.core.diagnostics import Diagnostic, raise_if_errors
from fabricgen.core.model import Plan
from fabricgen.core.records import record
from fabricgen.inventory import validation
from fabricgen.inventory.loader import LoadedDocument, SourceMap
from fabricgen.inventory.schema import apply_defaults, normalise_units, validate_document
from fabricgen.plan.inputs import Inputs


@record
class DocumentCheck:
    """A check of the inventory document: `run(document, source)`."""

    name: str
    run: Callable[[Any, SourceMap], Iterable[Diagnostic]]


@record
class PlanCheck:
    """A check of the finished plan: `run(plan, inputs, inputs.source)`."""

    name: str
    run: Callable[[Plan, Inputs, SourceMap], Iterable[Diagnostic]]
    unless_earlier_errors: bool = False
    """Skipped when a check before it found an error: a root cause (a pool too small, a port
    used twice) spills addresses into neighbouring blocks, and this check would only repeat it
    hundreds of times."""


RAW_CHECKS: tuple[DocumentCheck, ...] = (DocumentCheck("control characters", validation.text.check_text),)
"""On the document as read, keys included, beside the schema."""

DOCUMENT_CHECKS: tuple[DocumentCheck, ...] = (
    DocumentCheck("addresses", validation.addresses.check_addresses),
    DocumentCheck("identity", validation.identity.check_identity),
    DocumentCheck("names", validation.names.check_names),
    DocumentCheck("settings", validation.settings.check_settings),
)
"""On the schema-valid document with its defaults; their errors stop the pipeline."""

PLAN_CHECKS: tuple[PlanCheck, ...] = (
    PlanCheck("pools", check_pools),
    PlanCheck("ports", check_ports),
    PlanCheck("duplicates", check_duplicates, unless_earlier_errors=True),
    PlanCheck("device names", check_names),
    PlanCheck("oversubscription", check_oversubscription),
    PlanCheck("drain", check_drain),
    PlanCheck("roce", check_roce),
    PlanCheck("traffic classes", check_traffic_classes),
    PlanCheck("strict queues", check_strict_queues),
    PlanCheck("load balancing", check_load_balancing),
    PlanCheck("pfc watchdog timers", check_watchdog_timers),
    PlanCheck("pfc headroom", check_pfc_headroom),
    PlanCheck("mtu", check_mtu),
    PlanCheck("asns", check_asns),
    PlanCheck("infiniband", check_infiniband),
    PlanCheck("subnet manager software", check_sm_software),
    PlanCheck("subnet manager protection", check_sm_protection),
    PlanCheck("rails", check_rails),
    PlanCheck("tier asns", check_tier_asns),
    PlanCheck("management gateway", check_gateway_users),
    PlanCheck("reserved asns", check_reserved_asns),
    PlanCheck("public asns", check_public_asns),
    PlanCheck("service addresses", check_service_addresses),
    PlanCheck("jobs", check_jobs),
    PlanCheck("job partitions", check_job_partitions),
    PlanCheck("parallelism", check_parallelism),
)
"""On the finished plan, in this order."""


def check_document(document: LoadedDocument) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The document with its units normalised and the schema's defaults, and the document
    checks' warnings; FabricError with every error the document has on its own (units, schema
    and the raw checks together, then the document checks)."""
    source = document.source
    data, unit_problems = normalise_units(document.data, source)
    refused = {d.path for d in unit_problems}
    problems = unit_problems + [d for d in validate_document(data, source) if d.path not in refused]
    problems += [finding for check in RAW_CHECKS for finding in check.run(document.data, source)]
    raise_if_errors(problems)
    doc = apply_defaults(data)
    early = [finding for check in DOCUMENT_CHECKS for finding in check.run(doc, source)]
    raise_if_errors(early)
    return doc, early


def check_plan(plan: Plan, inputs: Inputs) -> list[Diagnostic]:
    """Every plan check's findings, in `PLAN_CHECKS` order."""
    found: list[Diagnostic] = []
    for check in PLAN_CHECKS:
        if check.unless_earlier_errors and any(d.is_error for d in found):
            continue
        found.extend(check.run(plan, inputs, inputs.source))
    return found
