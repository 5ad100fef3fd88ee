"""`fabricgen ib import-guids`: real GUIDs from `ibnetdiscover` output into the inventory.

Discovered nodes are matched to planned names by node description: a switch's description is
its name (or NVIDIA's `MF0;<name>:<model>/U1`), an HCA's is `<host> <device>` (`gpu0101
mlx5_0`, `gpu0101 HCA-1`). A GPU server's adapters are separate HCAs, each with its own node
GUID, all described `<host> mlx5_N`: each HCA port is matched to the planned NIC by the leaf port
it is cabled to (falling back to port order), and the NIC takes that port's GUID and its
adapter's node GUID (`nodes:`). GUIDs go into the `guids:` section of the inventory,
edited with ruamel.yaml's round-trip mode so the user's comments and layout stay; the result
is validated before it replaces the file.
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from fabricgen.core.model import SM_LINK, Plan
from fabricgen.infiniband.ibnet import IbFabric, IbNode
from fabricgen.infiniband.topology import ib_port_numbers

_MF0 = re.compile(r"^MF0;([^:;\s]+)")


@dataclass(slots=True)
class ImportResult:
    guids: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)
    """Planned name -> (node GUID, port GUIDs in NIC order, adapter node GUIDs in NIC order when a
    host has several adapters); both tuples empty for switches."""
    unmatched_discovered: list[str] = field(default_factory=list)
    not_discovered: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    changed: int = 0


def candidates(description: str) -> list[str]:
    """Names a node description may stand for, most specific first."""
    found = [description.strip()]
    words = description.split()
    if words:
        found.append(words[0])
    match = _MF0.match(description.strip())
    if match:
        found.append(match.group(1))
    return found


def match_guids(plan: Plan, fabric: IbFabric) -> ImportResult:
    result = ImportResult()
    switches = {d.name: d for d in plan.devices}
    # Leaf ends by InfiniBand port number, as ibnetdiscover reports them (a twin-port cage holds two).
    _, port_number = ib_port_numbers(plan)
    hcas: dict[str, list[tuple[int, str, int]]] = {}
    for server in plan.servers:
        hcas[server.name] = [(nic.nic, nic.leaf, port_number.get((nic.leaf, nic.leaf_interface), 0)) for nic in server.nics]
    # Dedicated SM hosts: their cable is a plan link (kind sm-leaf), ended like a server's NIC.
    for link in plan.links:
        if link.kind == SM_LINK:
            hcas[link.a.device] = [(1, link.z.device, port_number.get((link.z.device, link.z.interface), 0))]
    node_of: dict[str, str] = {}
    ca_nodes: dict[str, list[IbNode]] = {}
    for node in sorted(fabric.nodes.values(), key=lambda n: (n.kind, n.description, n.node_guid)):
        pool = switches if node.kind == "switch" else hcas
        name = next((c for c in candidates(node.description) if c in pool), None)
        if name is None:
            result.unmatched_discovered.append(f"{node.kind} {node.description!r} {node.node_guid}")
            continue
        node_of[node.node_id] = name
        if node.kind == "switch":
            if name in result.guids:
                result.conflicts.append(f"{name}: two switches describe themselves as {name} ({result.guids[name][0]}, {node.node_guid})")
                continue
            result.guids[name] = (node.node_guid, (), ())
        else:
            ca_nodes.setdefault(name, []).append(node)
    for name, nodes in ca_nodes.items():
        adapters, problem = _match_ports(nodes, sorted(hcas[name]), node_of)
        if problem:
            result.conflicts.append(f"{name}: {problem}")
        ports = tuple(port for port, _node in adapters)
        node_guids = tuple(node for _port, node in adapters)
        result.guids[name] = (node_guids[0] if node_guids else nodes[0].node_guid, ports, node_guids if len(node_guids) > 1 else ())
    result.not_discovered = sorted((set(switches) | set(hcas)) - set(result.guids))
    return result


def _match_ports(nodes: list[IbNode], wanted: list[tuple[int, str, int]], node_of: dict[str, str]) -> tuple[list[tuple[str, str]], str]:
    """(port GUID, adapter node GUID) of each planned NIC of one host (`wanted`: NIC, leaf, leaf
    port), found among the host's discovered HCAs by the leaf port each is cabled to, else in
    port order; those found before the first NIC that is not, and a message naming it."""
    by_cable: dict[tuple[str, int], tuple[str, str]] = {}
    in_order: list[tuple[str, str]] = []
    for node in nodes:
        for port in sorted(node.ports.values(), key=lambda p: p.port):
            in_order.append((port.port_guid, node.node_guid))
            by_cable[(node_of.get(port.remote_id, ""), port.remote_port)] = (port.port_guid, node.node_guid)
    found: list[tuple[str, str]] = []
    for position, (_nic, leaf, leaf_port) in enumerate(wanted):
        pair = by_cable.get((leaf, leaf_port)) or (in_order[position] if position < len(in_order) else None)
        if pair is None or not pair[0]:
            return found, f"NIC {position + 1} not discovered"
        found.append(pair)
    return found, ""


def overridden(plan: Plan, result: ImportResult) -> list[str]:
    """Imported GUIDs the plan does not use because a pin elsewhere wins (nodes[].guid, subnet_managers[].guid)."""
    used = {d.name: d.guid for d in plan.devices}
    used.update({s.name: s.node_guid for s in plan.servers})
    if plan.infiniband:
        used.update({sm.host: sm.node_guid for sm in plan.infiniband.subnet_managers if not sm.server})
    return [
        f"{name}: the plan keeps {used[name]} (pinned in its nodes: or subnet_managers: entry), discovered {node}; remove that pin"
        for name, (node, _ports, _nodes) in result.guids.items()
        if name in used and used[name] != node
    ]


def update_inventory(text: str, result: ImportResult) -> tuple[str, int]:
    """The inventory text with `guids:` holding the matched GUIDs; comments and order kept."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 200
    yaml.indent(mapping=2, sequence=4, offset=2)
    doc: Any = yaml.load(text)
    section = doc.get("guids")
    if section is None:
        section = CommentedMap()
        doc["guids"] = section
        doc.yaml_set_comment_before_after_key(
            "guids", before="\nReal GUIDs, written by fabricgen ib import-guids from ibnetdiscover output."
        )
    changed = 0
    for name, (node, ports, nodes) in result.guids.items():
        entry = CommentedMap()
        entry["node"] = DoubleQuotedScalarString(node)
        if nodes:
            adapters = CommentedSeq(DoubleQuotedScalarString(n) for n in nodes)
            adapters.fa.set_flow_style()
            entry["nodes"] = adapters
        if ports:
            seq = CommentedSeq(DoubleQuotedScalarString(p) for p in ports)
            seq.fa.set_flow_style()
            entry["ports"] = seq
        entry.fa.set_flow_style()
        old = section.get(name)
        if old is None or old.get("node") != node or list(old.get("ports", [])) != list(ports) or list(old.get("nodes", [])) != list(nodes):
            changed += 1
            section[name] = entry
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue(), changed


def write_atomically(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
