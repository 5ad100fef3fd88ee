"""Check the PFC headroom each RoCE port needs against what its switch model holds
(docs/render.md, "PFC headroom").

The planner works out per port how many bytes still arrive after the port sends PAUSE
(`Interface.pfc_headroom_bytes`, from the cable's length, speed and MTU); fabricgen renders no
buffer line (neither platform's headroom command is confirmed in a vendor source), so a port
runs with its model's default headroom. Where the catalog states that default with its source
(`pfc_headroom_bytes`, `pfc_headroom_source`), a port that needs more would drop "lossless"
traffic under congestion: an error, one per model, at the key that set the figure. A model
without a figure is not compared (none of the bundled models has one: no public figure was
found).
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.plan.inputs import Inputs

TIERS = {"leaf": "leaves", "spine": "spines", "superspine": "superspines"}


def check_pfc_headroom(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    models = {model.name: model for model in plan.models if model.pfc_headroom_bytes}
    if plan.roce is None or not models:
        return
    short: dict[str, list[tuple[int, str, str]]] = {}
    roles: dict[str, set[str]] = {}
    for device in plan.devices:
        model = models.get(device.model)
        if model is None:
            continue
        for interface in device.interfaces:
            if interface.pfc_headroom_bytes > model.pfc_headroom_bytes:
                short.setdefault(model.name, []).append((interface.pfc_headroom_bytes, device.name, interface.name))
                roles.setdefault(model.name, set()).add(device.role)
    for name, ports in sorted(short.items()):
        model = models[name]
        needed, worst_device, worst_port = max(ports)
        yield source.diagnostic(
            _model_key(name, inputs, roles[name]),
            f"{len(ports)} RoCE port(s) of {name} need more PFC headroom than its {model.pfc_headroom_bytes} bytes "
            f"({model.pfc_headroom_source}): {worst_device} {worst_port} needs {needed} bytes for its cable; "
            "the excess of a paused burst would be dropped from the lossless class",
            hint="shorten those cables, lower roce.mtu, or give the no-drop class more buffer through the "
            "platform's buffer profile and state the new figure with its source",
        )


def _model_key(name: str, inputs: Inputs, roles: set[str]) -> PathKey:
    """Where the figure was set: the inventory's `models.<name>` entry, else the first tier
    (leaves, spines, super-spines) that uses the bundled model."""
    if name in inputs.models:
        return ("models", name, "pfc_headroom_bytes")
    role = min(roles, key=list(TIERS).index)
    return (TIERS[role], "model")
