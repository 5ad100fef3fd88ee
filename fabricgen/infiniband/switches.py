"""Render producer: the switch-side steps of split ports, `ib/switches/<switch>.split.txt` per
InfiniBand switch with split ports (`InfinibandPlan.switch_splits`, plan/passes/ib_split.py).

OpenSM configures no port widths: NVIDIA switches do not sense split cables, so a port that
carries two NDR200 (QM9700) or HDR100 (QM8790) links is split in the switch's own OS before it
is cabled. The file gives those commands and the split ports with what the plan cables to them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.core.model import Plan
from fabricgen.render.templating import environment

if TYPE_CHECKING:
    from fabricgen.render.context import RenderContext


def switch_split_files(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`ib/switches/<switch>.split.txt` for every switch with split ports; nothing otherwise."""
    if plan.infiniband is None or not plan.infiniband.switch_splits:
        return {}
    template = environment(context.user_template_dirs).get_template("opensm/switch-split.txt.j2")
    return {f"ib/switches/{split.switch}.split.txt": template.render(split=split) for split in plan.infiniband.switch_splits}
