"""What the engine and every producer share: the render options (`RenderContext`), the
producer signature, and a unit of rendering any process can run (`RenderUnit`). Producers
(configs/, artifacts/, infiniband/) import it from here; `fabricgen/producers.py` lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

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


class RenderUnit(NamedTuple):
    """A part of the render that any process can run on its own: `render()` -> {path: text}, tidied."""

    name: str
    render: Callable[[], dict[str, str]]
    large: bool
    """Its output is too large to send back between processes cheaply (the plan fragments)."""
