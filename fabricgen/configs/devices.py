"""`configs/<device>.cfg`: every Ethernet switch's config of what fabricgen owns, from its
platform's template (`templates/<platform>/device.j2`), which only formats plan values. Not a
complete startup config: users, AAA, SSH/API settings come from deploy.yml's management overlay
(docs/render.md, opening). A platform whose switches take several files names them
(`config_files:` in its platform.yml: SONiC's `configs/<device>/config_db.json` and
`configs/<device>/frr.conf`); a `.json` file is written as the device saves it (`tidy_json`).
"""

from __future__ import annotations

from fabricgen import platforms as registry
from fabricgen.core.catalog import platforms
from fabricgen.core.model import Device, Plan
from fabricgen.render.context import RenderContext
from fabricgen.render.jsontext import tidy_json
from fabricgen.render.templating import environment
from fabricgen.render.tidy import tidy


def config_device(path: str) -> str:
    """The switch a rendered config file belongs to: `configs/<name>.cfg` or `configs/<name>/<file>`.

    >>> config_device("configs/leaf1.cfg"), config_device("configs/leaf1/config_db.json")
    ('leaf1', 'leaf1')
    """
    inside = path.removeprefix("configs/")
    return inside.split("/", 1)[0] if "/" in inside else inside.removesuffix(".cfg")


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
    for name in sorted({d.platform for d in chosen}):
        for template in registry.config_files(name).values():
            env.get_template(template)
    return chosen


def render_devices(shared: tuple[Plan, RenderContext, tuple[Device, ...]], start: int, stop: int) -> dict[str, str]:
    plan, context, chosen = shared
    env = environment(context.user_template_dirs)
    by_name = platforms()
    outputs = {name: registry.config_files(name) for name in by_name}
    models = {model.name: model for model in plan.models}
    files = {}
    for device in chosen[start:stop]:
        qos = plan.roce.profiles.get(device.platform) if plan.roce else None
        values = {"device": device, "plan": plan, "platform": by_name[device.platform], "roce": plan.roce, "qos": qos}
        values["model"] = models[device.model]
        for pattern, template in outputs[device.platform].items():
            text = env.get_template(template).render(values)
            path = f"configs/{pattern.format(name=device.name)}"
            files[path] = tidy_json(text) if path.endswith(".json") else tidy(text)
    return files
