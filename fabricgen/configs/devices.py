"""`configs/<device>.cfg`: every Ethernet switch's config of what fabricgen owns, from its
platform's template (`templates/<platform>/device.j2`), which only formats plan values. Not a
complete startup config: users, AAA, SSH/API settings come from deploy.yml's management overlay
(docs/render.md, opening).
"""

from __future__ import annotations

from fabricgen import platforms as registry
from fabricgen.core.catalog import platforms
from fabricgen.core.model import Device, Plan
from fabricgen.render.context import RenderContext
from fabricgen.render.templating import environment
from fabricgen.render.tidy import tidy


def device_configs(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`configs/<device>.cfg`: the owned config of every Ethernet switch, in this process
    (`render` and `producers.render_files` spread the configs over `-j` processes in slices)."""
    chosen = chosen_devices(plan, context)
    return render_devices((plan, context, chosen), 0, len(chosen))


def chosen_devices(plan: Plan, context: RenderContext) -> tuple[Device, ...]:
    """The Ethernet switches to render; their templates compiled (before any fork)."""
    env = environment(context.user_template_dirs)
    by_name = platforms()
    chosen = tuple(d for d in plan.devices if by_name[d.platform].transport == "roce" and context.selected(d))
    for folder in sorted({registry.template_folder(d.platform) for d in chosen}):
        env.get_template(f"{folder}/device.j2")
    return chosen


def render_devices(shared: tuple[Plan, RenderContext, tuple[Device, ...]], start: int, stop: int) -> dict[str, str]:
    plan, context, chosen = shared
    env = environment(context.user_template_dirs)
    by_name = platforms()
    folders = {name: registry.template_folder(name) for name in by_name}
    files = {}
    for device in chosen[start:stop]:
        template = env.get_template(f"{folders[device.platform]}/device.j2")
        qos = plan.roce.profiles.get(device.platform) if plan.roce else None
        text = template.render(device=device, plan=plan, platform=by_name[device.platform], roce=plan.roce, qos=qos)
        files[f"configs/{device.name}.cfg"] = tidy(text)
    return files
