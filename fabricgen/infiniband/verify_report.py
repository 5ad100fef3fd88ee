"""The result of `fabricgen ib verify`: named checks with evidence and hints, and their text.

A check either passes, fails, or passes with a warning (`warn`): a finding that does not break
the fabric but that an operator should read (e.g. spines carrying uneven shares of routes).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Check:
    name: str
    ok: bool
    summary: str
    evidence: list[str] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    warn: bool = False
    """Passed, but with a finding to read (shown as WARN; does not fail the run)."""

    @property
    def status(self) -> str:
        return "FAIL" if not self.ok else "WARN" if self.warn else "PASS"


@dataclass(slots=True)
class Report:
    fabric: str
    sm: str
    checks: list[Check] = field(default_factory=list)
    workdir: str = ""

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def add(self, check: Check) -> Check:
        self.checks.append(check)
        return check

    def format(self) -> str:
        lines = [f"fabricgen ib verify: fabric {self.fabric}, OpenSM on {self.sm}"]
        for check in self.checks:
            lines.append(f"{check.status} {check.name}: {check.summary}")
            lines += [f"     {line}" for line in check.evidence]
            lines += [f"  -> {hint}" for hint in check.hints]
        failed = [c.name for c in self.checks if not c.ok]
        lines.append(f"{'FAILED: ' + ', '.join(failed) if failed else 'PASSED'} ({len(self.checks)} checks)")
        if self.workdir:
            lines.append(f"files, logs and dumps kept in {self.workdir}")
        return "\n".join(lines) + "\n"
