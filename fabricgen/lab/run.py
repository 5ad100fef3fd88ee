"""`lab verify` end to end: boot, run the checks in order, tear down (always)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from fabricgen import platforms as registry
from fabricgen.lab import expect
from fabricgen.lab.drain_drill import run_drill
from fabricgen.lab.drill import check_fault_drill
from fabricgen.lab.lab import Lab
from fabricgen.lab.report import Check, Report
from fabricgen.lab.topology import LabTopology
from fabricgen.lab.verify import check_advertised, check_bfd, check_bgp, check_ecmp, check_lldp, check_mtu, poll

CHECKS = ("bgp", "bfd", "lldp", "ecmp", "advertised", "mtu", "fault-drill")


def convergence_timeout(plan: LabTopology) -> float:
    """Bounded wait for the fabric to converge: 45 s plus 0.3 s per switch (2 cores)."""
    return 45 + 0.3 * len(plan.switches)


def run_checks(
    lab: Lab, plan: LabTopology, names: Sequence[str] = CHECKS, report: Report | None = None, timeout: float | None = None
) -> Report:
    """The checks in `names` against a running lab; `plan` says what it must show. `timeout`:
    how long a check may wait for convergence (default `convergence_timeout`)."""
    report = report or new_report(plan)
    timeout = convergence_timeout(plan) if timeout is None else timeout
    polled: dict[str, Callable[[], Check]] = {
        "bgp": lambda: check_bgp(lab, plan),
        "bfd": lambda: check_bfd(lab, plan),
        "lldp": lambda: check_lldp(lab, plan),
        "ecmp": lambda: check_ecmp(lab, plan),
        "advertised": lambda: check_advertised(lab, plan),
        "mtu": lambda: check_mtu(lab, plan),
    }
    for name in names:
        if name == "fault-drill":
            converged = all(c.passed or c.skipped for c in report.checks)
            if converged:
                report.checks.append(check_fault_drill(lab, plan))
            else:
                report.checks.append(Check(7, "fault-drill", "Fault drill", skipped="the fabric did not converge (see the failed checks)"))
            continue
        # once one check has waited out its deadline, the rest look once: the fabric is as converged as it gets
        waited = any(c.failures for c in report.checks)
        report.checks.append(poll(polled[name], 0 if waited or name == "mtu" else timeout))
    return report


def new_report(plan: LabTopology) -> Report:
    return Report(plan.fabric, len(plan.switches), len(plan.servers), len(plan.cables))


def verify(
    plan: LabTopology, built: LabTopology | None = None, names: Sequence[str] = CHECKS, timeout: float | None = None, drill: str = ""
) -> Report:
    """Boot the lab of `built` (default: the plan's; a miswired copy in tests), check it against
    `plan`, tear it down whatever happens. `drill` (`drain`, `cut`): the traffic drill
    (`lab/drain_drill.py`) after the checks, on a converged fabric only."""
    report = new_report(plan)
    start = time.monotonic()
    with Lab(built or plan) as lab:
        report.boot_seconds = time.monotonic() - start
        run_checks(lab, plan, names, report, timeout)
        if drill:
            report.checks.append(_traffic_drill(lab, plan, report, drill))
    return report


def _traffic_drill(lab: Lab, plan: LabTopology, report: Report, mode: str) -> Check:
    if not all(c.passed or c.skipped for c in report.checks):
        return Check(8, f"drill-{mode}", f"Traffic drill ({mode})", skipped="the fabric did not converge (see the failed checks)")
    return run_drill(lab, plan, mode, list(registry.section("drain")["frr"]["bgp_lines"]))


__all__ = ["CHECKS", "expect", "run_checks", "verify"]
