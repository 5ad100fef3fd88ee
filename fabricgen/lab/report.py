"""`lab verify` results: checks with evidence and named failures, as text or JSON."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field


@dataclass(frozen=True, slots=True)
class Failure:
    device: str
    message: str


@dataclass
class Check:
    number: int
    name: str
    title: str
    evidence: list[str] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    skipped: str = ""

    @property
    def passed(self) -> bool:
        return not self.failures and not self.skipped

    def fail(self, device: str, message: str) -> None:
        self.failures.append(Failure(device, message))


@dataclass
class Report:
    fabric: str
    switches: int
    servers: int
    cables: int
    checks: list[Check] = field(default_factory=list)
    boot_seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return all(c.passed or c.skipped for c in self.checks) and any(c.passed for c in self.checks)

    def failed_checks(self) -> list[str]:
        return [c.name for c in self.checks if c.failures]

    def as_json(self) -> str:
        data = {
            "fabric": self.fabric,
            "passed": self.passed,
            "switches": self.switches,
            "servers": self.servers,
            "cables": self.cables,
            "boot_seconds": round(self.boot_seconds, 2),
            "checks": [{**asdict(c), "passed": c.passed, "seconds": round(c.seconds, 2)} for c in self.checks],
        }
        return json.dumps(data, indent=2, sort_keys=True) + "\n"

    def as_text(self, limit: int = 20) -> str:
        lines = [
            f"lab {self.fabric}: {self.switches} switches, {self.servers} servers, {self.cables} cables; booted in {self.boot_seconds:.1f} s"
        ]
        for check in self.checks:
            state = "SKIP" if check.skipped else ("PASS" if check.passed else "FAIL")
            lines.append(f"{state} {check.number}. {check.title} ({check.seconds:.1f} s)")
            lines += [f"     {line}" for line in check.evidence]
            if check.skipped:
                lines.append(f"     skipped: {check.skipped}")
            for failure in check.failures[:limit]:
                lines.append(f"     {failure.device}: {failure.message}")
            if len(check.failures) > limit:
                lines.append(f"     ... and {len(check.failures) - limit} more")
        lines.append("lab verify: " + ("PASS" if self.passed else "FAIL (" + ", ".join(self.failed_checks()) + ")"))
        return "\n".join(lines) + "\n"
