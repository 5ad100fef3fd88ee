"""Checks of what the plan asks the switches to do with traffic classes and load balancing,
against platform and catalog data (never a platform name in code):

- RoCE's no-drop class or the strict CNP class on the traffic class that carries default
  (DSCP 0) traffic on some platform (`qos.best_effort_tc`: EOS TC1, NX-OS qos-group 0);
- RoCE on the strict network-control class, or a strict CNP class below a round-robin queue
  on a platform whose scheduler cannot do that (`qos.strict_above_round_robin`: EOS);
- `roce.load_balancing: flowlet` on a model that has no dynamic load balancing fabricgen can
  render (catalog `dynamic_load_balancing`, platform `dlb_modes`);
- `roce.dcbx` on a platform without a per-port DCBX command (warned: nothing is rendered there).
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.catalog import platforms
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.common import warning
from fabricgen.plan.inputs import Inputs

TIER_NAMES = {"leaf": "leaves", "spine": "spines", "superspine": "super-spines"}


def check_traffic_classes(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Default traffic must keep its own round-robin queue: made no-drop, every unmarked packet
    is paused by PFC and marked by ECN with RoCE (PFC pause storms reach all traffic); made the
    CNP class, it runs strict priority above RoCE. Priority 0 is refused in `check_roce` already."""
    roce = plan.roce
    if roce is None:
        return
    for name in sorted({d.platform for d in plan.devices}):
        platform = platforms()[name]
        default_tc = int(platform.qos.get("best_effort_tc", 0))
        if roce.no_drop_priority == default_tc != 0:
            yield source.diagnostic(
                ("roce", "no_drop_priority"),
                f"no-drop priority {default_tc} is the traffic class of default traffic (DSCP 0) on {platform.title}: "
                "every unmarked packet would share the lossless queue, be paused by PFC and marked by ECN",
                hint=f"use a class other than {default_tc}; 3, as NVIDIA, AMD and Cisco examples do",
            )
        if inputs.roce.cnp_traffic_class is not None and roce.cnp_traffic_class.get(name) == default_tc:
            yield source.diagnostic(
                ("roce", "cnp_traffic_class"),
                f"CNP traffic class {default_tc} is the traffic class of default traffic (DSCP 0) on {platform.title}: "
                "all unmarked traffic would run strict priority above RoCE",
                hint=f"leave roce.cnp_traffic_class out: the default here is {platform.cnp_traffic_class_default}",
            )


def check_strict_queues(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Strict priority is for CNP and network control only. RoCE on the network-control class
    would run strict above everything; and where the scheduler makes every queue below a
    round-robin one round-robin too (`qos.strict_above_round_robin`: EOS Trident/Tomahawk,
    `no priority` on queue N covers 0..N), a strict class below a round-robin class cannot be
    configured: the config would say strict and the switch would schedule it round-robin."""
    roce = plan.roce
    if roce is None:
        return
    for name in sorted({d.platform for d in plan.devices}):
        profile = roce.profiles.get(name)
        if profile is None:
            continue
        title = platforms()[name].title
        control = profile.network_control_traffic_class
        if roce.no_drop_priority == control:
            yield source.diagnostic(
                ("roce", "no_drop_priority"),
                f"no-drop priority {control} is the strict network-control class (DSCP CS6/CS7) on {title}: "
                "RoCE would run strict priority above every other queue",
                hint="use a class below the strict ones; 3, as NVIDIA, AMD and Cisco examples do",
            )
        if not platforms()[name].qos.get("strict_above_round_robin"):
            continue
        strict = sorted(q.traffic_class for q in profile.queues if q.strict)
        weighted_above = [q.traffic_class for q in profile.queues if not q.strict and q.traffic_class > strict[0]]
        if weighted_above:
            yield source.diagnostic(
                ("roce", "cnp_traffic_class"),
                f"CNP traffic class {profile.cnp_traffic_class} sits below round-robin queue {max(weighted_above)} on {title}: "
                f"its scheduler makes every queue below a round-robin one round-robin, so CNP would not be strict",
                hint=f"use CNP class {profile.network_control_traffic_class - 1} or {profile.network_control_traffic_class} "
                "(the strict queues must be the highest-numbered), or leave roce.cnp_traffic_class out",
            )


def check_load_balancing(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    roce = plan.roce
    if roce is None:
        return
    if roce.load_balancing != "hash":
        yield from _dynamic_load_balancing(plan, roce.load_balancing, source)
    if roce.dcbx:
        for name in sorted({d.platform for d in plan.devices if d.role == "leaf"}):
            platform = platforms()[name]
            if not platform.dcbx_command:
                yield warning(
                    source,
                    ("roce", "dcbx"),
                    f"{platform.title} has no per-port DCBX command fabricgen renders: its host ports keep their DCBX defaults",
                    hint="set PFC and ETS on the NICs themselves (non-willing), or leave roce.dcbx off",
                )


def _dynamic_load_balancing(plan: Plan, mode: str, source: SourceMap) -> Iterable[Diagnostic]:
    """One error per model (and platform) in use that cannot run `mode`, naming its tiers."""
    roles: dict[tuple[str, str], set[str]] = {}
    for device in plan.devices:
        roles.setdefault((device.model, device.platform), set()).add(device.role)
    models = {model.name: model for model in plan.models}
    for (name, platform), used_by in sorted(roles.items()):
        model = models[name]
        if model.dynamic_load_balancing and mode in platforms()[platform].dlb_modes:
            continue
        tiers = ", ".join(TIER_NAMES.get(role, role) for role in sorted(used_by))
        yield source.diagnostic(
            ("roce", "load_balancing"),
            f"{mode} load balancing is not available on {name} ({model.description}; {tiers}): "
            "fabricgen knows no command for it on this model",
            hint="use roce.load_balancing: hash (the 5-tuple hash includes the UDP source port), "
            "or models whose catalog entry has dynamic_load_balancing: true",
        )
