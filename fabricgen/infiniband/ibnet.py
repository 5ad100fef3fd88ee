"""Parse ibnetdiscover output (and ibsim net files, the same format) into nodes and links.

Used by `ib verify` (discovered fabric vs plan) and `ib import-guids` (real GUIDs by node
description). Only what both need is read: node type, id, GUIDs, description, LIDs and the
remote end of every connected port.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_GUID_LINE = re.compile(r"^(switchguid|caguid|rtguid)=(0x[0-9A-Fa-f]+)(?:\((0x)?([0-9A-Fa-f]+)\))?")
_HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]+)"\s*(?:#\s*"([^"]*)"(.*))?$')
_PORT = re.compile(
    r'^\[(\d+)\](?:\[ext \d+\])?(?:\((0x)?([0-9A-Fa-f]+)\))?\s+"([^"]+)"\[(\d+)\](?:\[ext \d+\])?(?:\((0x)?([0-9A-Fa-f]+)\))?\s*(?:#(.*))?$'
)
_LID = re.compile(r"\blid (\d+)")
_SPEED = re.compile(r"\b(\d+x[A-Z]+)\s*$")


def norm_guid(value: str) -> str:
    """`0x30101`, `30101` -> `0x0000000000030101`."""
    return f"0x{int(value, 16):016x}"


@dataclass(slots=True)
class IbPort:
    port: int
    remote_id: str
    remote_port: int
    port_guid: str = ""
    """CA ports: the local port GUID (from `[1](guid)`, or node GUID + port for ibsim files)."""
    lid: int = 0
    """CA ports: the local LID from the comment."""
    speed: str = ""
    """Width x speed from the comment (`4xHDR`), empty when absent."""


@dataclass(slots=True)
class IbNode:
    kind: str
    """`switch` or `ca` (routers count as ca)."""
    node_id: str
    ports_total: int
    description: str
    node_guid: str = ""
    switch_port_guid: str = ""
    lid: int = 0
    """Switches: the base LID (port 0)."""
    ports: dict[int, IbPort] = field(default_factory=dict)

    def port_guids(self) -> list[str]:
        if self.kind == "switch":
            return [self.switch_port_guid or self.node_guid]
        return [p.port_guid for p in sorted(self.ports.values(), key=lambda p: p.port) if p.port_guid]


@dataclass(slots=True)
class IbFabric:
    nodes: dict[str, IbNode]

    def by_node_guid(self) -> dict[str, IbNode]:
        return {n.node_guid: n for n in self.nodes.values() if n.node_guid}

    def links(self) -> set[tuple[tuple[str, int], tuple[str, int]]]:
        """Every cable once, as ((node id, port), (node id, port)) with the smaller end first."""
        found = set()
        for node in self.nodes.values():
            for port in node.ports.values():
                ends = sorted(((node.node_id, port.port), (port.remote_id, port.remote_port)))
                found.add((ends[0], ends[1]))
        return found


def parse_ibnet(text: str) -> IbFabric:
    """Nodes of an ibnetdiscover / ibsim net text; unknown lines are skipped."""
    nodes: dict[str, IbNode] = {}
    current: IbNode | None = None
    guid = port_guid = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            current = None
            continue
        match = _GUID_LINE.match(line)
        if match:
            guid = norm_guid(match.group(2))
            port_guid = norm_guid(match.group(4)) if match.group(4) else ""
            continue
        match = _HEADER.match(line)
        if match:
            kind = "switch" if match.group(1) == "Switch" else "ca"
            rest = match.group(5) or ""
            lid = _LID.search(rest)
            current = IbNode(kind, match.group(3), int(match.group(2)), match.group(4) or match.group(3), guid, port_guid)
            current.lid = int(lid.group(1)) if lid and kind == "switch" else 0
            nodes[current.node_id] = current
            guid = port_guid = ""
            continue
        match = _PORT.match(line)
        if match and current is not None:
            number = int(match.group(1))
            local_guid = match.group(3) if current.kind == "ca" else None
            port = IbPort(number, match.group(4), int(match.group(5)))
            if local_guid:
                port.port_guid = norm_guid(local_guid)
            elif current.kind == "ca" and current.node_guid:
                port.port_guid = f"0x{int(current.node_guid, 16) + number:016x}"  # ibsim's numbering
            if current.kind == "ca":
                lid = _LID.search(match.group(8) or "")
                port.lid = int(lid.group(1)) if lid else 0
            speed = _SPEED.search(match.group(8) or "")
            port.speed = speed.group(1) if speed else ""
            current.ports[number] = port
    return IbFabric(nodes)
