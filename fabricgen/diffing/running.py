"""`fabricgen diff --running DIR`: per device, the commands that turn the backed-up running
config into the rendered one (remediation) and back (rollback), computed offline by
hier_config. The hier_config platform of each fabricgen platform is data (`catalog.yml`,
`hier_config:`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from hier_config import Platform, WorkflowRemediation, get_hconfig

from fabricgen.catalog import catalog_section


@cache
def hier_platforms() -> dict[str, str]:
    data: dict[str, str] = catalog_section("hier_config")
    return data


@dataclass(frozen=True, slots=True)
class Remediation:
    device: str
    remediation: str
    rollback: str


def remediate(platform: str, running: str, intended: str) -> tuple[str, str]:
    """(remediation, rollback) command text for one device; empty strings when in sync."""
    hier_platform = Platform[hier_platforms()[platform]]
    workflow = WorkflowRemediation(get_hconfig(hier_platform, running), get_hconfig(hier_platform, intended))
    remediation = "\n".join(workflow.remediation_config.lines())
    rollback = "\n".join(workflow.rollback_config.lines())
    return (remediation + "\n" if remediation else "", rollback + "\n" if rollback else "")


@dataclass(slots=True)
class RunningDiff:
    remediations: list[Remediation] = field(default_factory=list)
    missing_running: list[str] = field(default_factory=list)
    unknown_running: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


def diff_running(running: dict[str, str], rendered: dict[str, str], platform_of: dict[str, str]) -> RunningDiff:
    """`running` and `rendered`: device name -> config text; `platform_of`: device -> platform."""
    result = RunningDiff()
    supported = hier_platforms()
    for device in sorted(rendered):
        if device not in running:
            result.missing_running.append(device)
            continue
        platform = platform_of[device]
        if platform not in supported:
            result.unsupported.append(device)
            continue
        remediation, rollback = remediate(platform, running[device], rendered[device])
        result.remediations.append(Remediation(device, remediation, rollback))
    result.unknown_running = sorted(set(running) - set(rendered))
    return result
