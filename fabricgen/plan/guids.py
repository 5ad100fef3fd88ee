"""Placeholder GUIDs of an InfiniBand fabric, all in one place.

Until real GUIDs are imported (`fabricgen ib import-guids` writes them under `guids:`), every
node gets a deterministic stand-in from `guid_prefix` (schema default `0x02fab00000000000`),
its kind and its fabric-wide number, so it never moves when the fabric grows. Kinds: 1 spine,
2 leaf, 3 server HCA, 4 dedicated subnet-manager host, 5 super-spine.

Two layouts exist, and the rendered OpenSM files depend on both, so they stay as they are:
switches put the number at bit 4 (16 port numbers per node are free below it), servers and SM
hosts at bit 5 (32 numbers). A server's NICs are separate single-port adapters, each an HCA
with its own node GUID: adapter n at server base + 2 (n - 1), its port one above (ibsim's
numbering, node GUID + port number), so NIC 1 keeps the GUIDs a one-NIC server always had.

>>> switch_guid("0x02fab00000000000", "leaf", 3)
'0x02fab00020000030'
>>> hca_guids("0x02fab00000000000", leaf_number=1, index=2, ports=2)
(('0x02fab00030008040', '0x02fab00030008041'), ('0x02fab00030008042', '0x02fab00030008043'))
"""

from __future__ import annotations

from collections.abc import Mapping

from fabricgen.plan.inputs import GuidPin

KIND_SPINE, KIND_LEAF, KIND_HCA, KIND_SM, KIND_SUPERSPINE = 1, 2, 3, 4, 5
SWITCH_KIND = {"spine": KIND_SPINE, "leaf": KIND_LEAF, "superspine": KIND_SUPERSPINE}


def switch_guid(prefix: str, role: str, number: int) -> str:
    """A switch's placeholder node GUID: prefix | kind << 28 | number << 4."""
    return f"0x{int(prefix, 16) | (SWITCH_KIND[role] << 28) | (number << 4):016x}"


def placeholder_guid(prefix: str, kind: int, number: int) -> str:
    """An HCA's or SM host's placeholder node GUID: prefix | kind << 28 | number << 5."""
    return f"0x{int(prefix, 16) | (kind << 28) | (number << 5):016x}"


AdapterGuids = tuple[tuple[str, str], ...]
"""(node GUID, port GUID) of each adapter of a server, NIC 1 first."""


def hca_guids(prefix: str, *, leaf_number: int, index: int, ports: int) -> AdapterGuids:
    """Placeholder (node GUID, port GUID) of each adapter of server `index` of the leaf numbered
    `leaf_number`; at most 16 adapters fit the 32 numbers below the server's base."""
    base = int(placeholder_guid(prefix, KIND_HCA, leaf_number * 1024 + index), 16)
    return tuple((f"0x{base + 2 * n:016x}", f"0x{base + 2 * n + 1:016x}") for n in range(ports))


def server_guids(pins: Mapping[str, GuidPin], prefix: str, name: str, leaf_number: int, index: int, ports: int) -> AdapterGuids:
    """(node GUID, port GUID) of each adapter of a server: pinned in `guids:` (`nodes`, or `node`
    for NIC 1's adapter; `ports`), the rest placeholders (the plan warns while any remain)."""
    placeholders = hca_guids(prefix, leaf_number=leaf_number, index=index, ports=ports)
    pinned = pins.get(name)
    if not pinned:
        return placeholders
    nodes = [g.lower() for g in pinned.nodes] or [pinned.node.lower()]
    given = [g.lower() for g in pinned.ports]
    adapters = []
    for n, (placeholder_node, placeholder_port) in enumerate(placeholders):
        node, port = (nodes[n], f"0x{int(nodes[n], 16) + 1:016x}") if n < len(nodes) else (placeholder_node, placeholder_port)
        # A port GUID not imported yet follows ibsim's convention (node + port number).
        adapters.append((node, given[n] if n < len(given) else port))
    return tuple(adapters)
