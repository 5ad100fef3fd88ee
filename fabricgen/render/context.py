"""What every producer receives besides the plan: the render options (`RenderContext`), and
the producer signature. Its own module so producers (artifacts, OpenSM files) and `render.py`,
which lists the producers, import it without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from fabricgen.core.model import Device, Plan
from fabricgen.core.records import record


@record
class RenderContext:
    """What producers may know besides the plan."""

    user_template_dirs: tuple[Path, ...] = ()
    limit: frozenset[str] | None = None
    jobs: int = 1
    """Processes that render (`render -j`), this one included; the output is the same for any value."""

    def selected(self, device: Device) -> bool:
        return self.limit is None or device.name in self.limit


Producer = Callable[[Plan, RenderContext], dict[str, str]]
