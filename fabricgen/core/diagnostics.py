"""Diagnostics: every problem found in an inventory, with where it is.

Stages collect diagnostics instead of raising on the first one, so a user sees every problem
of a broken inventory in one run. `FabricError` carries the whole list out of the pipeline;
the CLI prints them and exits 2.
"""

from __future__ import annotations

from enum import StrEnum

from fabricgen.core.records import record


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@record
class Diagnostic:
    """One finding. `path` is the dotted key path (`leaves.nodes[2].asn`), `line`/`column` 1-based."""

    message: str
    path: str = ""
    file: str = ""
    line: int = 0
    column: int = 0
    hint: str = ""
    severity: Severity = Severity.ERROR

    def format(self) -> str:
        where = self.file
        if self.line:
            where += f":{self.line}:{self.column}"
        prefix = f"{where}: " if where else ""
        if self.severity is Severity.WARNING:
            prefix += "warning: "
        key = f"{self.path}: " if self.path else ""
        text = f"{prefix}{key}{self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


class FabricError(Exception):
    """Raised when a stage found errors; carries all of them."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        super().__init__(f"{len(diagnostics)} problem(s)")
        self.diagnostics = diagnostics


def raise_if_errors(diagnostics: list[Diagnostic]) -> None:
    if any(d.is_error for d in diagnostics):
        raise FabricError(diagnostics)
