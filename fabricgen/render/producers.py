"""Render: a plan -> the files of `build/<fabric>/`, as a mapping of relative path to text.

Each producer is a function `(plan, context) -> {path: text}` with one job (device configs,
the plan fragments, Ansible inventory, ...). Producers only read the plan. `render_files` runs them all
and normalises every file: no trailing whitespace, no runs of blank lines, one final newline.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NamedTuple

from fabricgen.artifacts import ARTIFACT_PRODUCERS, bom, cabling, netbox
from fabricgen.core.catalog import catalog_data, platforms
from fabricgen.core.model import Device, Interface, Plan
from fabricgen.infiniband.render import opensm_files
from fabricgen.render.context import Producer as Producer
from fabricgen.render.context import RenderContext as RenderContext  # re-exported: producers and commands import it from here too
from fabricgen.render.parallel import run_each, slices
from fabricgen.render.serialize import device_fragments, fabric_fragment, plan_fragments, split_fragments
from fabricgen.render.templating import environment
from fabricgen.render.yamlemit import block_scalar, plain_texts, yaml_text

_UNTIDY = re.compile(r"[^\S\n]\n|\n\n\n|[^\S\n]\Z")
_ASCII_RARE_BLANKS = "\t\r\x0b\x0c\x1c\x1d\x1e\x1f"
"""Every ASCII character str.rstrip() strips besides the space and the line end."""


def tidy(text: str) -> str:
    """Strip trailing whitespace, collapse blank-line runs, end with exactly one newline.

    Text that is tidy already (most configs) is returned as it is
    after one regular-expression scan instead of being split into lines."""
    if _is_tidy(text):
        return text
    lines = [line.rstrip() for line in text.split("\n")]
    out: list[str] = []
    for line in lines:
        if line == "" and (not out or out[-1] == ""):
            continue
        out.append(line)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def _is_tidy(text: str) -> bool:
    if not text.endswith("\n") or text.endswith("\n\n") or text.startswith("\n") or "\n\n\n" in text:
        return False
    if text.isascii() and not any(blank in text for blank in _ASCII_RARE_BLANKS):
        # Single characters are found with memchr; the rare blanks are then absent, so only a
        # space can end a line: one two-character scan instead of one per blank character.
        return " \n" not in text
    return not _UNTIDY.search(text)


_LEFTOVER = re.compile(r"\{\{|\{%|\bNone\b")


def device_configs(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`configs/<device>.cfg`: the full startup config of every Ethernet switch, in this process
    (`render_files` and `render` spread the configs over `-j` processes in slices)."""
    chosen = _chosen_devices(plan, context)
    return _render_devices((plan, context, chosen), 0, len(chosen))


def _chosen_devices(plan: Plan, context: RenderContext) -> tuple[Device, ...]:
    """The Ethernet switches to render; their templates compiled (before any fork)."""
    env = environment(context.user_template_dirs)
    by_name = platforms()
    chosen = tuple(d for d in plan.devices if by_name[d.platform].transport == "roce" and context.selected(d))
    for name in sorted({d.platform for d in chosen}):
        env.get_template(f"{name}/device.j2")
    return chosen


def _render_devices(shared: tuple[Plan, RenderContext, tuple[Device, ...]], start: int, stop: int) -> dict[str, str]:
    plan, context, chosen = shared
    env = environment(context.user_template_dirs)
    by_name = platforms()
    files = {}
    for device in chosen[start:stop]:
        template = env.get_template(f"{device.platform}/device.j2")
        qos = plan.roce.profiles.get(device.platform) if plan.roce else None
        text = template.render(device=device, plan=plan, platform=by_name[device.platform], roce=plan.roce, qos=qos)
        files[f"configs/{device.name}.cfg"] = tidy(text)
    return files


def plan_file(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`plan/fabric.json` and `plan/devices/<name>.json` (see fabricgen.render.serialize): a change to
    one device rewrites its fragment and its neighbours', not the whole plan."""
    return plan_fragments(plan)


def _tier_groups() -> dict[str, str]:
    """Role -> inventory group, in rollout order (data/rollout.yml)."""
    return {str(t["role"]): str(t["group"]) for t in catalog_data("rollout.yml")["tiers"]}


def _role_group(role: str) -> str:
    return _tier_groups().get(role, f"{role}s")


def _tiers(roles: Iterable[str]) -> list[str]:
    """Tier groups present in the plan, top tier first: what deploy.yml rolls out in order."""
    known = list(_tier_groups())
    present = set(roles)
    ordered = [role for role in known if role in present] + sorted(present - set(known))
    return [_role_group(role) for role in ordered]


def ansible_inventory(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`ansible/hosts.yml`: groups per role and platform, no credentials (those come at push time)."""
    by_name = platforms()
    children: dict[str, dict[str, dict[str, dict[str, str | int]]]] = {}
    for device in plan.devices:
        platform = by_name[device.platform]
        if platform.transport != "roce":
            continue
        host: dict[str, str | int] = {
            "ansible_host": device.management or device.name,
            "ansible_network_os": platform.ansible_network_os,
            "fabricgen_role": device.role,
            "fabricgen_asn": device.asn,
            "fabricgen_loopback": device.loopback,
        }
        role_group = _role_group(device.role)
        for group in (f"{device.platform}", role_group, f"{device.platform}_{role_group}"):
            children.setdefault(group, {"hosts": {}})["hosts"][device.name] = dict(host)
    tiers = _tiers({d.role for d in plan.devices if by_name[d.platform].transport == "roce"})
    groups: dict[str, Any] = {name: children[name] for name in sorted(children)}
    if tiers:
        groups["switches"] = {"children": {tier: {} for tier in tiers}}
    if plan.infiniband:
        sm_hosts: dict[str, dict[str, str | int]] = {
            sm.host: {"opensm_priority": sm.priority, "opensm_port_guid": sm.port_guid} for sm in plan.infiniband.subnet_managers
        }
        groups["opensm"] = {"hosts": sm_hosts}
    variables: dict[str, Any] = {"fabricgen_fabric": plan.name, "fabricgen_build": "{{ inventory_dir }}/.."}
    if tiers:
        variables["fabricgen_tiers"] = tiers
    document = {"all": {"vars": variables, "children": {name: groups[name] for name in sorted(groups)}}}
    text = "# Generated by fabricgen from the plan. No credentials: they come from the environment or ansible-vault at push time.\n"
    return {"ansible/hosts.yml": text + yaml_text(document, width=200)}


def ansible_host_vars(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`ansible/host_vars/<host>.yml`: what the deploy playbooks check after a push, from the plan.

    Per switch: its rendered config, the BGP neighbors that must be Established, the fabric
    interfaces (uplinks and downlinks) that must be up, and the RoCE ports that must have PFC.
    Per SM host: the folder of its rendered OpenSM files. One file per host keeps hosts.yml
    small and the work per device linear. No credentials.
    """
    by_name = platforms()
    files: dict[str, str] = {}
    known: set[str] = set()  # names found plain (see yamlemit.plain_texts), for every host
    header = "# Generated by fabricgen from the plan: post-check data for playbooks/deploy.yml. No credentials.\n"
    for device in plan.devices:
        if by_name[device.platform].transport != "roce" or not context.selected(device):
            continue
        text = _host_vars_text(device, known)
        files[f"ansible/host_vars/{device.name}.yml"] = header + (text if text is not None else yaml_text(_host_vars(device), width=200))
    if plan.infiniband:
        for sm in plan.infiniband.subnet_managers:
            data_sm = {"fabricgen_opensm_dir": f"opensm/{sm.host}"}
            files[f"ansible/host_vars/{sm.host}.yml"] = header + yaml_text(data_sm)
    return files


def _host_vars(device: Device) -> dict[str, Any]:
    """A switch's host_vars as data (keys sorted when written)."""
    return {
        "fabricgen_config": f"configs/{device.name}.cfg",
        "fabricgen_bgp_neighbors": [
            {"address": n.address, "remote_asn": n.remote_asn, "peer": n.peer_device, "peer_interface": n.peer_interface}
            for n in device.bgp_neighbors
        ],
        "fabricgen_fabric_interfaces": [i.name for i in device.interfaces if i.role in ("uplink", "downlink")],
        "fabricgen_roce_interfaces": [i.name for i in device.interfaces if i.roce],
        "fabricgen_lldp_plan": [
            {"interface": i.name, "peer": i.peer_device, "peer_interface": i.peer_interface}
            for i in device.interfaces
            if i.role in ("uplink", "downlink") and i.peer_device
        ],
    }


def _host_vars_text(device: Device, known: set[str] | None = None) -> str | None:
    """`yaml_text(_host_vars(device), width=200)` written straight from the plan, keys in sorted
    order, one f-string per list item, without building the data first: at 5,000 switches this
    is three million lines. When every string is a plain name or address (`plain_texts`, one
    scan per device of the strings not met before, `known`) each is written as it is; otherwise each through block_scalar. None when a
    string needs the general writer (a space or a line break: no plan name has one); a test pins
    equality with `yaml_text`."""
    fabric = [i for i in device.interfaces if i.role in ("uplink", "downlink")]
    lldp = [i for i in fabric if i.peer_device]
    texts = [f"configs/{device.name}.cfg", *(i.name for i in device.interfaces)]
    texts += [text for n in device.bgp_neighbors for text in (n.address, n.peer_device, n.peer_interface)]
    texts += [text for i in lldp for text in (i.peer_device, i.peer_interface)]
    try:
        return _host_vars_lines(device, fabric, lldp, str if plain_texts(texts, known) else _scalar)
    except _NeedsGeneralWriter:
        return None


def _host_vars_lines(device: Device, fabric: list[Interface], lldp: list[Interface], text: Callable[[str], str]) -> str:
    """The host_vars of `device`, each string written by `text` (`str` when all are plain)."""
    neighbors = [
        f"- address: {text(n.address)}\n  peer: {text(n.peer_device)}\n  peer_interface: {text(n.peer_interface)}\n  remote_asn: {n.remote_asn}\n"
        for n in device.bgp_neighbors
    ]
    return "".join(
        (
            _yaml_list("fabricgen_bgp_neighbors", neighbors),
            f"fabricgen_config: {text(f'configs/{device.name}.cfg')}\n",
            _yaml_list("fabricgen_fabric_interfaces", [f"- {text(i.name)}\n" for i in fabric]),
            _yaml_list(
                "fabricgen_lldp_plan",
                [f"- interface: {text(i.name)}\n  peer: {text(i.peer_device)}\n  peer_interface: {text(i.peer_interface)}\n" for i in lldp],
            ),
            _yaml_list("fabricgen_roce_interfaces", [f"- {text(i.name)}\n" for i in device.interfaces if i.roce]),
        )
    )


class _NeedsGeneralWriter(Exception):
    """A string that block_scalar cannot write on its own."""


_WRITTEN: dict[str, str] = {}
"""block_scalar's answers, looked up here first (one dictionary lookup per scalar)."""


def _scalar(value: str) -> str:
    text = _WRITTEN.get(value)
    if text is None:
        written = block_scalar(value)
        if written is None:
            raise _NeedsGeneralWriter(value)
        text = _WRITTEN[value] = written
    return text


def _yaml_list(key: str, items: list[str]) -> str:
    """A block sequence under `key` (items written already), `[]` when empty."""
    return f"{key}:\n{''.join(items)}" if items else f"{key}: []\n"


PRODUCERS: tuple[Producer, ...] = (device_configs, plan_file, ansible_inventory, ansible_host_vars, *ARTIFACT_PRODUCERS, opensm_files)
_TIDY_BY_CONSTRUCTION: frozenset[Producer] = frozenset({plan_file})
_SHARING_CABLES: tuple[Producer, ...] = (cabling, bom, netbox)
"""Producers that read `fabricgen.plan.media.cables(plan)`, memoised per process: with `-j N` they run
as one unit, so one worker derives the cables once instead of each worker again (at 5,000
switches that derivation is seconds)."""
"""Producers whose text is tidy by construction (orjson never writes trailing blanks): at
5,000 switches the plan fragments are ~200 MB, and scanning them again costs time."""


def render_files(plan: Plan, context: RenderContext, producers: Iterable[Producer] = PRODUCERS) -> dict[str, str]:
    """Every producer's files, tidied, sorted by path.

    With `context.jobs` above 1 the work is spread over forked processes: device configs in
    slices, every other producer whole, while producers whose output is too large to send back
    (the plan fragments) run in this process. The result is sorted, so it is the same for any N."""
    producers = tuple(producers)
    if context.jobs > 1:
        return dict(sorted(_render_parallel(plan, context, producers).items()))
    files: dict[str, str] = {}
    for producer in producers:
        files.update(_tidied(producer, plan, context))
    return dict(sorted(files.items()))


def _tidied(producer: Producer, plan: Plan, context: RenderContext) -> dict[str, str]:
    if producer in _TIDY_BY_CONSTRUCTION:
        return producer(plan, context)
    return {path: tidy(text) for path, text in producer(plan, context).items()}


def _render_parallel(plan: Plan, context: RenderContext, producers: tuple[Producer, ...]) -> dict[str, str]:
    units = render_units(plan, context, producers, pieces=context.jobs * 2)
    ordered = [unit.render for unit in units if unit.large] + [unit.render for unit in units if not unit.large]
    files: dict[str, str] = {}
    for result in run_each(ordered, context.jobs, local=sum(unit.large for unit in units)):
        files.update(result)
    return files


class RenderUnit(NamedTuple):
    """A part of the render that any process can run on its own: `render()` -> {path: text}, tidied."""

    name: str
    render: Callable[[], dict[str, str]]
    large: bool
    """Its output is too large to send back between processes cheaply (the plan fragments)."""


def render_units(plan: Plan, context: RenderContext, producers: Iterable[Producer] = PRODUCERS, *, pieces: int) -> list[RenderUnit]:
    """The render split into independent units: the producers sharing the derived cables as one
    (one process derives them once), device configs and device plan fragments each in `pieces`
    contiguous slices, every other producer whole. Each file comes from exactly one unit, so
    the output does not depend on the split. Whole producers come first and the small config
    slices last, so processes taking units in order finish close together. Templates are
    compiled here, before any fork."""
    producers = tuple(producers)
    units: list[RenderUnit] = []
    sharing = tuple(p for p in producers if p in _SHARING_CABLES)
    if sharing:
        units.append(RenderUnit("+".join(p.__name__ for p in sharing), partial(_tidied_all, sharing, plan, context), False))
    slices_of_configs: list[RenderUnit] = []
    for producer in producers:
        if producer is plan_file:
            units += _fragment_units(plan, pieces)
        elif producer is device_configs:
            chosen = _chosen_devices(plan, context)
            for start, stop in slices(len(chosen), pieces):
                render = partial(_render_devices, (plan, context, chosen), start, stop)
                slices_of_configs.append(RenderUnit(f"device_configs[{start}:{stop}]", render, False))
        elif producer not in sharing:
            units.append(RenderUnit(producer.__name__, partial(_tidied, producer, plan, context), False))
    return units + slices_of_configs


def _fragment_units(plan: Plan, count: int) -> list[RenderUnit]:
    """The plan fragments (`plan_file`) as units: `plan/fabric.json`, then the device fragments
    in `count` slices; links and servers are grouped by device once, here, before any fork."""
    split = split_fragments(plan)
    units = [RenderUnit("plan_file[fabric]", partial(fabric_fragment, split), True)]
    for start, stop in slices(len(plan.devices), count):
        units.append(RenderUnit(f"plan_file[{start}:{stop}]", partial(device_fragments, split, start, stop), True))
    return units


def _tidied_all(producers: tuple[Producer, ...], plan: Plan, context: RenderContext) -> dict[str, str]:
    files: dict[str, str] = {}
    for producer in producers:
        files.update(_tidied(producer, plan, context))
    return files


def leftovers(text: str) -> list[str]:
    """Lines with unrendered Jinja or a Python None: a template bug, caught by tests."""
    return [line for line in text.split("\n") if _LEFTOVER.search(line)]
