"""Placeholder GUIDs of an InfiniBand fabric, all in one place.

Until real GUIDs are imported (`fabricgen ib import-guids` writes them under `guids:`), every
node gets a deterministic stand-in from `guid_prefix` (schema default `0x02fab00000000000`),
its kind and its fabric-wide number, so it never moves when the fabric grows. Kinds: 1 spine,
2 leaf, 3 server HCA, 4 dedicated subnet-manager host, 5 super-spine.

Two layouts exist, and the rendered OpenSM files depend on both, so they stay as they are:
switches put the number at bit 4 (16 port numbers per node are free below it), HCAs and SM
hosts at bit 5 (32 port numbers: an HCA's port GUIDs are node GUID + NIC number).

>>> switch_guid("0x02fab00000000000", "leaf", 3)
'0x02fab00020000030'
>>> hca_guids("0x02fab00000000000", leaf_number=1, index=2, ports=2)
('0x02fab00030008040', ('0x02fab00030008041', '0x02fab00030008042'))
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


def hca_guids(prefix: str, *, leaf_number: int, index: int, ports: int) -> tuple[str, tuple[str, ...]]:
    """(node GUID, port GUIDs in NIC order) of server `index` of the leaf numbered `leaf_number`."""
    node = placeholder_guid(prefix, KIND_HCA, leaf_number * 1024 + index)
    return node, tuple(f"0x{int(node, 16) + n:016x}" for n in range(1, ports + 1))


def server_guids(
    pins: Mapping[str, GuidPin], prefix: str, name: str, leaf_number: int, index: int, ports: int
) -> tuple[str, tuple[str, ...]]:
    """(node GUID, port GUIDs in NIC order) of a server's HCA: pinned in `guids:`, else placeholders."""
    pinned = pins.get(name)
    if pinned:
        node = pinned.node.lower()
        given = [g.lower() for g in pinned.ports]
        # Ports not imported yet follow ibsim's convention (node + port number).
        port_guids = tuple(given[n - 1] if n <= len(given) else f"0x{int(node, 16) + n:016x}" for n in range(1, ports + 1))
        return node, port_guids
    return hca_guids(prefix, leaf_number=leaf_number, index=index, ports=ports)
