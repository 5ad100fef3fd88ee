"""`fabricgen diff --running DIR`: per device, the commands that turn the backed-up running
config into the rendered one (remediation) and back (rollback), computed offline by
hier_config. The hier_config platform of each fabricgen platform is data (`catalog.yml`,
`hier_config:`).

Only the sections fabricgen owns are compared (platforms/<os>/ownership.yml): users, AAA, SSH/API, SNMP,
boot, CoPP, agents and anything else fabricgen does not render are never in a remediation, and
the platform's default lines (`no shutdown`, lines EOS always displays) are dropped on both
sides, so a device that matches comes back empty. Both outputs are redacted (password hashes,
keys, communities) because they are written under build/.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

from hier_config import Platform, WorkflowRemediation, get_hconfig

from fabricgen import platforms as registry
from fabricgen.push.ownership import owned_text, redact


@cache
def hier_platforms() -> dict[str, str]:
    data: dict[str, str] = registry.section("hier_config")
    return data


@dataclass(frozen=True, slots=True)
class Remediation:
    device: str
    remediation: str
    rollback: str


def remediate(platform: str, running: str, intended: str) -> tuple[str, str]:
    """(remediation, rollback) command text for one device, owned sections only, secrets
    redacted; empty strings when in sync."""
    hier_platform = Platform[hier_platforms()[platform]]
    before, after = owned_text(platform, running), owned_text(platform, intended)
    workflow = WorkflowRemediation(get_hconfig(hier_platform, before), get_hconfig(hier_platform, after))
    remediation = "\n".join(workflow.remediation_config.lines())
    rollback = "\n".join(workflow.rollback_config.lines())
    return (redact(platform, remediation + "\n") if remediation else "", redact(platform, rollback + "\n") if rollback else "")


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
