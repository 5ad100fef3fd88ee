"""Pass: the slot layout, and every device's loopback, management address and ASN.

The layout's slot sizes come from the switch models and pinned indices only (see
`allocate.Layout`), so growth never moves an existing address or ASN. Pins win over every
formula here. The cable /31s and the server addresses are allocated by the passes that make
those cables (`connect`, `servers`), from the same layout.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.model import PoolUsage
from fabricgen.core.records import record
from fabricgen.plan import allocate
from fabricgen.plan.allocate import Layout, PoolTally, ipv4
from fabricgen.plan.inputs import AddressingInput, BgpInput
from fabricgen.plan.passes.expand import TierNode, Tiers
from fabricgen.plan.passes.speeds import Speeds

POOLS = ("loopbacks", "fabric", "servers", "management")
"""The `addressing:` pools, in the order the plan (`plan/fabric.json`) lists their usage."""


@record
class Pools:
    """The `addressing:` section as integers: each pool's base address, and the management
    subnet's prefix length and gateway."""

    loopbacks: int
    fabric: int
    servers: int
    has_servers: bool
    management: int
    has_management: bool
    management_length: int
    management_gateway: str
    server_mode: str


@record
class DeviceAddresses:
    """What the addressing pass decides for one device; `number` is its fabric-wide number
    within its role (placeholder GUIDs derive from it)."""

    loopback: str
    management: str
    asn: int
    number: int


def pools_of(addressing: AddressingInput) -> Pools:
    """The pools' bases; the management gateway defaults to the subnet's first address.

    >>> pools = pools_of(AddressingInput("10.0.0.0/24", "10.1.0.0/16", None, "p2p", "192.168.0.0/24", None))
    >>> pools.management_gateway, pools.management_length
    ('192.168.0.1', 24)
    """
    mgmt = addressing.management
    mgmt_base = allocate.prefix_base_size(mgmt)[0] if mgmt else 0
    server_pool = addressing.servers
    return Pools(
        loopbacks=allocate.prefix_base_size(addressing.loopbacks)[0],
        fabric=allocate.prefix_base_size(addressing.fabric)[0],
        servers=allocate.prefix_base_size(server_pool)[0] if server_pool else 0,
        has_servers=bool(server_pool),
        management=mgmt_base,
        has_management=bool(mgmt),
        management_length=int(mgmt.split("/")[1]) if mgmt else 0,
        management_gateway=addressing.management_gateway or (ipv4(mgmt_base + 1) if mgmt else ""),
        server_mode=addressing.server_mode,
    )


def layout_for(tiers: Tiers, speeds: Speeds, per_spine: int, per_superspine: int) -> Layout:
    """Slot sizes: how many uplinks a leaf's model can take, how many leaves and pods a spine's
    and super-spine's models can take, or the highest pinned index when that is larger."""
    spines, leaves, superspines = tiers.spines, tiers.leaves, tiers.superspines
    max_spine_index = max((n.index for n in spines), default=0)
    leaf_logical = max((n.model.ports * n.model.logical_ports(speeds.uplink) for n in leaves), default=2)
    spine_slots = max(leaf_logical // 2 // per_spine, max_spine_index)
    if not tiers.three_tier:
        return Layout(spine_slots=spine_slots, per_spine=per_spine)
    spine_down = max((n.model.ports * n.model.logical_ports(speeds.uplink) for n in spines), default=2)
    spine_up = max((n.model.ports * n.model.logical_ports(speeds.superspine) for n in spines), default=2)
    ss_down = max((n.model.ports * n.model.logical_ports(speeds.superspine) for n in superspines), default=1)
    return Layout(
        spine_slots=spine_slots,
        leaf_slots=max(spine_down // 2 // per_spine, max((n.index for n in leaves), default=0), 1),
        superspine_slots=max(spine_up // 2 // per_superspine, max((n.index for n in superspines), default=0), 1),
        pod_slots=max(ss_down // per_superspine, tiers.pods),
        per_spine=per_spine,
        per_superspine=per_superspine,
    )


def address_devices(
    nodes: Iterable[TierNode], layout: Layout, pools: Pools, bgp: BgpInput, routed: bool
) -> tuple[dict[str, DeviceAddresses], PoolTally]:
    """Loopback, management address, ASN and number of every device, by name."""
    tally = PoolTally()
    result = {}
    for node in nodes:
        loopback = node.loopback
        if not loopback:
            offset = layout.device_offset(node.role, node.index, pod=node.pod, plane=node.plane)
            tally.take("loopbacks", offset)
            loopback = ipv4(pools.loopbacks + offset)
        management = node.management
        if not management and pools.has_management:
            offset = layout.management_offset(node.role, node.index, pod=node.pod, plane=node.plane)
            tally.take("management", offset)
            management = ipv4(pools.management + offset)
        result[node.name] = DeviceAddresses(loopback, management, asn_of(node, layout, bgp, routed), number_of(node, layout))
    return result, tally


def asn_of(node: TierNode, layout: Layout, bgp: BgpInput, routed: bool) -> int:
    """Leaves: one ASN each (RFC 7938), whatever the transport; spines: one per pod;
    super-spines: one per plane; 0 for spines and super-spines without BGP. Pins win.

    >>> from fabricgen.core.model import Model, Platform
    >>> bgp = BgpInput(spine_asn=65000, leaf_asn=65101, superspine_asn=64900, maximum_paths=None, bfd=True, bfd_interval_ms=300, bfd_multiplier=3)
    >>> leaf = TierNode("leaf", 3, "l3", None, None, pod=2)  # type: ignore[arg-type]
    >>> asn_of(leaf, Layout(spine_slots=4, leaf_slots=8), bgp, True)
    65111
    """
    if node.role == "leaf":
        return node.asn or bgp.leaf_asn + layout.leaf_number(node.pod, node.index) - 1
    if not routed:
        return 0
    if node.role == "spine":
        return node.asn or bgp.spine_asn + node.pod - 1
    return node.asn or bgp.superspine_asn + node.plane - 1


def number_of(node: TierNode, layout: Layout) -> int:
    """Fabric-wide number of a device within its role, for placeholder GUIDs."""
    if node.role == "leaf":
        return layout.leaf_number(node.pod, node.index)
    if node.role == "spine":
        return layout.spine_number(node.pod, node.index)
    return layout.superspine_number(node.plane, node.index)


def pool_usage(addressing: AddressingInput, tally: PoolTally, routed: bool) -> tuple[PoolUsage, ...]:
    """How much of each pool the plan uses (checks compare it with the pool's size)."""
    usage = []
    for name in POOLS:
        prefix = addressing.prefix(name)
        if prefix and routed:
            _, size = allocate.prefix_base_size(prefix)
            usage.append(PoolUsage(name, f"addressing.{name}", prefix, tally.used.get(name, 0), tally.needed.get(name, 0), size))
    return tuple(usage)
