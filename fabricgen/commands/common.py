"""What every command does the same way: run a pipeline stage, print diagnostics, exit 2 on
bad input and 70 on a bug of ours. Its own module so the `ib` and `analyze` command groups
and the main CLI import it without importing each other.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.pipeline import Checked, load_and_plan

if TYPE_CHECKING:
    from rich.console import Console

EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 70
T = TypeVar("T")

_FORCE_TERMINAL = frozenset({"FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"})
"""Variables by which rich treats a stream that is not a TTY as a terminal."""


def _isatty(stream: object) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty()) if callable(isatty) else False


class ErrorConsole:
    """Standard error through rich, created on first use: importing rich costs about 0.08 CPU-s,
    a sixth of a successful `fabricgen validate` of 96 switches, which prints nothing there."""

    def __init__(self) -> None:
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The rich console itself (for a progress bar), made on the first call."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False, soft_wrap=True)
        return self._console

    @property
    def is_terminal(self) -> bool:
        """rich's answer; but a piped stderr that no variable rich reads forces to a terminal is
        not one, and `render` asks this on every run (to show a progress bar or not)."""
        if self._console is None and not _isatty(sys.stderr) and not _FORCE_TERMINAL.intersection(os.environ):
            return False
        return self.console.is_terminal

    def print(self, *objects: Any, **options: Any) -> None:
        self.console.print(*objects, **options)


err_console = ErrorConsole()


def print_diagnostics(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
    for diagnostic in diagnostics:
        style = "red" if diagnostic.is_error else "yellow"
        err_console.print(diagnostic.format(), style=style, markup=False)


def run_stage(action: Callable[[], T]) -> T:
    """Run a pipeline step; on bad input print every problem and exit 2."""
    try:
        return action()
    except FabricError as exc:
        print_diagnostics(exc.diagnostics)
        errors = sum(1 for d in exc.diagnostics if d.is_error)
        err_console.print(f"{errors} error(s); nothing written.", style="bold red", markup=False)
        sys.exit(EXIT_BAD_INPUT)
    except (KeyboardInterrupt, SystemExit):
        raise
    except Exception as exc:  # a bug of ours: say so plainly, keep the output untouched
        err_console.print(
            f"internal error: {type(exc).__name__}: {exc}; nothing written. Please report it with the inventory.",
            style="bold red",
            markup=False,
        )
        sys.exit(EXIT_INTERNAL)


def checked_plan(inventory: Path, drain: Sequence[str] = ()) -> Checked:
    """The checked plan of `inventory` (with `--drain` switches), its warnings printed."""
    checked = run_stage(lambda: load_and_plan(inventory, drain=drain))
    print_diagnostics(checked.warnings)
    return checked
