"""The topology of a rendered fabric's README as a Mermaid flowchart (GitHub and GitLab draw it
in file and pull-request views).

Two drawings, chosen by size:

- **every switch**, for a single pod with at most `DETAIL_LIMIT` switch pairs: one node per
  switch in a subgraph per tier, one edge per switch pair. When every pair of two tiers has the
  same bundle (`8x400G`), the edges carry no label and the legend says it once, instead of 64
  identical labels.
- **grouped**, otherwise: a subgraph per pod holding its spines, its leaves (per scalable unit,
  with their rails) and its servers; the super-spine planes in one subgraph above. Consecutive
  pods that look alike (same counts, same bundles) are drawn once as `pods 1-8 (each)`, so an
  8-pod or a 64-pod cluster is a handful of boxes with link counts, and adding a pod changes
  one label.

One legend explains the shapes and edge labels. Everything comes from the plan's devices,
servers and links in one pass; nothing is recomputed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from fabricgen.core.model import SERVER_LINK, SM_LINK, Plan

DETAIL_LIMIT = 64
"""Most switch-to-switch pairs drawn one by one (single-pod fabrics); beyond it, groups."""

_ID = re.compile(r"[^A-Za-z0-9_]")
_TIER_ORDER = {"spine": 0, "leaf": 1, "servers": 2}
"""Top to bottom inside a pod."""
_PLURAL = {"leaf": "leaves", "spine": "spines", "superspine": "super-spines"}

LEGEND = "legend: a box is switches (name or count), a rounded box servers; an edge label is cables x speed, per pod for a group of pods"


def _node_id(name: str) -> str:
    return "n_" + _ID.sub("_", name)


def _bundle(count: int, speed: int) -> str:
    return f"{count}x{speed}G"


def _plural(role: str, count: int) -> str:
    return f"{count} {role if count == 1 else _PLURAL.get(role, role + 's')}"


def _span(numbers: list[int]) -> str:
    """[1, 2, 3] -> `1-3`; [4] -> `4`."""
    return f"{numbers[0]}-{numbers[-1]}" if len(numbers) > 1 else str(numbers[0])


def mermaid(plan: Plan, detail_limit: int = DETAIL_LIMIT) -> str:
    notes: list[str] = []
    body = _small_pod(plan, detail_limit, notes)
    body = _grouped(plan) if body is None else body
    legend = f'  legend["{"; ".join([LEGEND, *notes])}"]'
    return "\n".join(["```mermaid", "flowchart TB", legend, *body, "```"]) + "\n"


def _small_pod(plan: Plan, detail_limit: int, notes: list[str]) -> list[str] | None:
    """Every switch (`_every_switch`) for a fabric of one pod with at most `detail_limit` switch
    pairs, else None. The pairs are counted only for one pod: a fabric of several is grouped
    whatever its size (at 5,000 switches, counting would read 200,000 links for nothing)."""
    if not all(d.pod <= 1 and d.role != "superspine" for d in plan.devices):
        return None
    role_of = {d.name: d.role for d in plan.devices}
    pairs: Counter[tuple[str, str, int]] = Counter(
        (link.a.device, link.z.device, link.speed) for link in plan.links if link.a.device in role_of
    )
    return _every_switch(plan, role_of, pairs, notes) if len(pairs) <= detail_limit else None


def _every_switch(plan: Plan, role_of: dict[str, str], pairs: Counter[tuple[str, str, int]], notes: list[str]) -> list[str]:
    """One node per switch; `notes` gets the legend's line for each uniformly cabled tier pair."""
    by_role: dict[str, list[str]] = defaultdict(list)
    for device in plan.devices:
        by_role[device.role].append(device.name)
    servers: Counter[tuple[str, int]] = Counter()
    server_names: dict[str, set[str]] = defaultdict(set)
    sm_hosts: list[tuple[str, str]] = []
    for link in plan.links:
        if link.kind == SERVER_LINK:
            servers[(link.z.device, link.speed)] += 1
            server_names[link.z.device].add(link.a.device)
        elif link.kind == SM_LINK:
            sm_hosts.append((link.a.device, link.z.device))
    lines = []
    for role in dict.fromkeys(d.role for d in plan.devices):
        lines.append(f'  subgraph {role}_tier["{role} tier ({len(by_role[role])})"]')
        lines.append("    direction LR")
        lines.extend(f'    {_node_id(name)}["{name}"]' for name in by_role[role])
        lines.append("  end")
    bundles_by_tiers: dict[tuple[str, str], set[str]] = defaultdict(set)
    for (a, z, speed), count in pairs.items():
        bundles_by_tiers[(role_of[a], role_of[z])].add(_bundle(count, speed))
    uniform = {tiers: next(iter(b)) for tiers, b in bundles_by_tiers.items() if len(b) == 1}
    for (a, z, speed), count in sorted(pairs.items()):
        label = "" if (role_of[a], role_of[z]) in uniform else f'|"{_bundle(count, speed)}"|'
        lines.append(f"  {_node_id(z)} ---{label} {_node_id(a)}")
    server_bundles = {(len(server_names[leaf]), _bundle(count, speed)) for (leaf, speed), count in servers.items()}
    uniform_servers = next(iter(server_bundles)) if len(server_bundles) == 1 else None
    for (leaf, speed), count in sorted(servers.items()):
        node = _node_id(leaf) + "_servers"
        lines.append(f'  {node}(["{len(server_names[leaf])} servers"])')
        label = "" if uniform_servers else f'|"{_bundle(count, speed)}"|'
        lines.append(f"  {_node_id(leaf)} ---{label} {node}")
    for host, leaf in sm_hosts:  # dedicated subnet-manager hosts: one cable each, no GPU bandwidth
        lines.append(f'  {_node_id(host)}(["{host} (subnet manager)"])')
        lines.append(f"  {_node_id(leaf)} --- {_node_id(host)}")
    notes.extend(f"every {lower}-{upper} pair: {bundle}" for (lower, upper), bundle in sorted(uniform.items()))
    if uniform_servers:
        notes.append(f"every leaf to its {uniform_servers[0]} servers: {uniform_servers[1]}")
    return lines


@dataclass(slots=True)
class _Pod:
    """One pod as drawn: node label and kind by local name; bundles between local names."""

    nodes: dict[str, tuple[str, bool]] = field(default_factory=dict)
    edges: Counter[tuple[str, str, int]] = field(default_factory=Counter)
    up: Counter[int] = field(default_factory=Counter)
    """Cables from this pod's spines to the super-spines, by speed."""

    def signature(self) -> tuple[object, ...]:
        return (sorted(self.nodes.items()), sorted(self.edges.items()), sorted(self.up.items()))


def _pods(plan: Plan) -> dict[int, _Pod]:
    """Each pod's spines, leaves by scalable unit (with their rails) and servers by unit."""
    unit_of_leaf: dict[str, int] = {}
    rails_of_leaf: dict[str, set[int]] = defaultdict(set)
    for server in plan.servers:
        for nic in server.nics:
            unit_of_leaf.setdefault(nic.leaf, server.unit)
            if nic.rail:
                rails_of_leaf[nic.leaf].add(nic.rail)
    local: dict[str, tuple[int, str]] = {}
    members: dict[tuple[int, str], list[str]] = defaultdict(list)
    for device in plan.devices:
        if device.role == "superspine":
            continue
        unit = unit_of_leaf.get(device.name, 0) if device.role == "leaf" else 0
        key = (device.pod, f"{device.role}_u{unit}" if unit else device.role)
        local[device.name] = key
        members[key].append(device.name)
    for server in plan.servers:
        key = (server.pod, f"servers_u{server.unit}" if server.unit else "servers")
        local[server.name] = key
        members[key].append(server.name)
    pods: dict[int, _Pod] = defaultdict(_Pod)
    for (pod, name), names in members.items():
        pods[pod].nodes[name] = (_label(name, names, rails_of_leaf), name.startswith("servers"))
    role_of = {d.name: d.role for d in plan.devices}
    for link in plan.links:
        lower, upper = local.get(link.a.device), local.get(link.z.device)
        if lower is not None and upper is not None:
            pods[lower[0]].edges[(lower[1], upper[1], link.speed)] += 1
        elif lower is not None and role_of.get(link.z.device) == "superspine":
            pods[lower[0]].up[link.speed] += 1
    return dict(sorted(pods.items()))


def _label(name: str, names: list[str], rails_of_leaf: dict[str, set[int]]) -> str:
    role = name.split("_u")[0]
    unit = f"unit {name.split('_u')[1]}: " if "_u" in name else ""
    if role == "servers":
        return f"{unit}{len(names)} servers"
    rails = sorted({r for n in names for r in rails_of_leaf.get(n, ())})
    return f"{unit}{_plural(role, len(names))}" + (f", rails {_span(rails)}" if rails else "")


def _runs(keyed: dict[int, tuple[object, ...]]) -> list[list[int]]:
    """Consecutive numbers with equal keys: {1: a, 2: a, 3: b} -> [[1, 2], [3]]."""
    runs: list[list[int]] = []
    previous: tuple[object, ...] | None = None
    for number, key in keyed.items():
        if runs and key == previous and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
        previous = key
    return runs


def _grouped(plan: Plan) -> list[str]:
    lines: list[str] = []
    planes: dict[int, int] = Counter(d.plane for d in plan.devices if d.role == "superspine")
    if planes:
        lines.append(f'  subgraph planes["super-spine tier: {len(planes)} planes"]')
        for run in _runs({plane: (count,) for plane, count in sorted(planes.items())}):
            what = "planes" if len(run) > 1 else "plane"
            each = " each" if len(run) > 1 else ""
            lines.append(f'    plane_{run[0]}["{what} {_span(run)}: {_plural("superspine", planes[run[0]])}{each}"]')
        lines.append("  end")
    pods = _pods(plan)
    for run in _runs({number: pod.signature() for number, pod in pods.items()}):
        pod = pods[run[0]]
        group = f"pod_{run[0]}"
        title = f"pods {_span(run)} (each)" if len(run) > 1 else f"pod {run[0]}"
        lines.append(f'  subgraph {group}["{title}"]')
        for name, (label, is_servers) in sorted(pod.nodes.items(), key=lambda item: (_TIER_ORDER.get(item[0].split("_u")[0], 9), item[0])):
            shape = f'(["{label}"])' if is_servers else f'["{label}"]'
            lines.append(f"    {group}_{name}{shape}")
        lines.append("  end")
        for (lower, upper, speed), count in sorted(pod.edges.items()):
            lines.append(f'  {group}_{upper} ---|"{_bundle(count, speed)}"| {group}_{lower}')
        for speed, count in sorted(pod.up.items()):
            lines.append(f'  planes ---|"{_bundle(count, speed)}"| {group}_spine')
    return lines
