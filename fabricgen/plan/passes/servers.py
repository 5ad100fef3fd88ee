"""Pass: attach the GPU servers to the leaves, and address their NICs.

Two attachments. `leaf`: `per_leaf` servers on every leaf, all NICs of a server on that leaf.
`rail`: the leaves of a pod form scalable units of `rails` leaves; NIC i of every server of a
unit goes to the unit's rail leaf (i - 1) mod rails + 1, and the unit's servers are named
after its first leaf. Server ports fill a leaf's first cages, one slot per NIC.

Addresses (routed fabrics with a server pool): `p2p` gives each NIC a /31 with the leaf end as
gateway; `subnet` gives each leaf one subnet (its SVI is the gateway, the ports are access
ports in `servers.vlan`). Each leaf owns a block of the pool sized by its model's ports, so
growth never moves a server address.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from fabricgen.core.catalog import nic_models
from fabricgen.core.diagnostics import FabricError
from fabricgen.core.model import Endpoint, Interface, Link, NicModel, Server, ServerNic
from fabricgen.core.records import builder, record
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan import allocate
from fabricgen.plan.allocate import Layout, PoolTally, ipv4, ipv4_pair
from fabricgen.plan.inputs import ServersInput
from fabricgen.plan.passes.addressing import Pools
from fabricgen.plan.passes.expand import TierNode
from fabricgen.plan.passes.headroom import cable_headroom
from fabricgen.plan.passes.ports import SlotsByKind, port_slots, speed_setting

_ENDPOINT = builder(Endpoint, "device", "interface", "port")
_LINK = builder(Link, "kind", "a", "z", "speed", "length_m", "mtu", "subnet", "a_address", "z_address")
"""A server cable: the fields this pass sets, by name (`media` stays None until the media pass)."""
_NIC = builder(ServerNic, "nic", "leaf", "leaf_interface", "speed", "address", "gateway", "prefix_length", "port_guid", "rail", "node_guid")
_PORT = builder(
    Interface,
    *("speed", "role", "mtu", "roce", "vlan", "speed_setting", "pfc_headroom_bytes"),
    *("name", "port", "sub", "address", "prefix_length", "peer_device", "peer_interface", "description"),
)
"""A leaf's server port: what every port of the leaf shares, then what differs."""

ServerGuids = Callable[[str, int, int], tuple[tuple[str, str], ...]]
"""(server name, number of its first leaf, server index) -> (node GUID, port GUID) of each adapter, NIC order."""


@record
class Attachment:
    """`servers:` as the pass reads it."""

    per_leaf: int
    ports_per_server: int
    speed: int
    name: str
    fabric: str
    rails: int
    """Rail leaves per scalable unit; 0 when servers attach to one leaf."""
    vlan: int
    length_m: float
    routed: bool
    roce: bool
    nic_model: str = ""
    """Catalog NIC model of every server port (`servers.nic`)."""


@dataclass(slots=True)
class LeafSide:
    """What one leaf gets from the servers: its server ports (and SVI), the server prefix it
    announces, and the NICs per server it serves (for oversubscription)."""

    interfaces: list[Interface] = field(default_factory=list)
    advertised: list[str] = field(default_factory=list)
    nics_per_server: int = 0


@record
class Attached:
    servers: tuple[Server, ...]
    links: tuple[Link, ...]
    leaves: Mapping[str, LeafSide]
    tally: PoolTally


@dataclass(slots=True)
class _RailServer:
    pod: int
    unit: int
    index: int
    leaf: str
    nics: list[ServerNic] = field(default_factory=list)


def attachment_of(servers: ServersInput, fabric: str, length_m: float, speed: int, routed: bool, roce: bool) -> Attachment:
    rail_mode = servers.attachment == "rail"
    return Attachment(
        per_leaf=servers.per_leaf,
        ports_per_server=servers.ports_per_server,
        speed=speed,
        name=servers.name,
        fabric=fabric,
        rails=(servers.rails or servers.ports_per_server) if rail_mode else 0,
        vlan=servers.vlan,
        length_m=length_m,
        routed=routed,
        roce=roce,
        nic_model=servers.nic,
    )


def nic_model_of(servers: ServersInput, source: SourceMap, speed: int = 0) -> NicModel:
    """The catalog NIC model the servers' ports use (`servers.nic`); FabricError when unknown, or
    when its cage cannot make the servers' `speed` (a 400G-native NIC asked for 800G would get a
    module no vendor makes), at `servers.speed` (or `servers.nic` when the speed is the leaf's)."""
    known = nic_models()
    name = servers.nic
    if name not in known:
        raise FabricError([source.diagnostic(("servers", "nic"), f"unknown NIC model '{name}'", hint=f"known: {', '.join(sorted(known))}")])
    nic = known[name]
    if speed > nic.speed:
        faster = sorted(n.name for n in known.values() if n.speed >= speed)
        key = ("servers", "speed") if servers.speed is not None else ("servers", "nic")
        raise FabricError(
            [
                source.diagnostic(
                    key,
                    f"NIC model {name} ({nic.form_factor}, {nic.lanes} x {nic.lane_rate}G lanes) runs at most {nic.speed}G "
                    f"({nic_speeds(nic)}), not the {speed}G of the server ports",
                    hint=f"set servers.speed to {nic.speed}G or less"
                    + (f", or name a NIC model that runs {speed}G in servers.nic: {', '.join(faster)}" if faster else ""),
                )
            ]
        )
    return nic


def nic_speeds(nic: NicModel) -> str:
    """The speeds a NIC model's cage makes: its native speed and, halving, on fewer lanes.

    >>> nic_speeds(nic_models()["nvidia-connectx-7-osfp"])
    '400G, 200G, 100G'
    """
    speeds = [nic.speed // 2**i for i in range(max(nic.lanes.bit_length(), 1))]
    return ", ".join(f"{s}G" for s in speeds if s)


def unit_and_rail(index: int, rails: int) -> tuple[int, int]:
    """(scalable unit, rail) of leaf `index` with `rails` leaves per unit; (0, 0) without rails.

    >>> unit_and_rail(1, 8), unit_and_rail(8, 8), unit_and_rail(9, 8), unit_and_rail(3, 0)
    ((1, 1), (1, 8), (2, 1), (0, 0))
    """
    if not rails:
        return 0, 0
    return (index - 1) // rails + 1, (index - 1) % rails + 1


def attach_servers(leaves: Sequence[TierNode], spec: Attachment, layout: Layout, pools: Pools, mtu: int, guids: ServerGuids) -> Attached:
    """Servers, their cables and every leaf's server side."""
    unit_first: dict[tuple[int, int], TierNode] = {}
    for leaf in leaves:
        unit_first.setdefault((leaf.pod, unit_and_rail(leaf.index, spec.rails)[0]), leaf)
    tally = PoolTally()
    servers: list[Server] = []
    rail_servers: dict[str, _RailServer] = {}
    links: list[Link] = []
    sides: dict[str, LeafSide] = {}
    kinds: SlotsByKind = {}
    block = server_block(leaves, spec.speed, pools.server_mode)
    for leaf in leaves:
        unit, rail = unit_and_rail(leaf.index, spec.rails)
        first = unit_first[(leaf.pod, unit)] if rail else leaf
        nics = [nic for nic in range(1, spec.ports_per_server + 1) if not rail or (nic - 1) % spec.rails + 1 == rail]
        side = sides[leaf.name] = LeafSide(nics_per_server=len(nics))
        leaf_servers = _leaf_servers(leaf, first, unit, rail, nics, spec, layout, pools, block, mtu, guids, side, links, tally, kinds)
        for server in leaf_servers:
            if not rail:
                servers.append(server)
                continue
            entry = rail_servers.get(server.name)
            if entry is None:
                entry = rail_servers[server.name] = _RailServer(leaf.pod, unit, server.index, first.name)
            entry.nics.extend(server.nics)
    for name, rs in rail_servers.items():
        servers.append(Server(name, rs.leaf, rs.index, tuple(sorted(rs.nics, key=lambda n: n.nic)), rs.pod, rs.unit, spec.nic_model))
    return Attached(tuple(servers), tuple(links), sides, tally)


def server_block(leaves: Sequence[TierNode], speed: int, mode: str) -> int:
    """Addresses every leaf's slot in the server pool holds: sized for the largest leaf model of
    the tier, so a leaf pinned to a bigger model than the tier's own cannot run into the next
    leaf's block; with one model in the tier it is that model's size, and adding a leaf of a
    model already present moves nothing."""
    largest = max((leaf.model.ports * (leaf.model.logical_ports(speed) or 1) for leaf in leaves), default=1)
    return allocate.server_block_size(largest, mode)


# long: one loop over (server, NIC) on purpose, see the docstring (planning time at 5,000 switches).
def _leaf_servers(
    leaf: TierNode,
    first: TierNode,
    unit: int,
    rail: int,
    nics: list[int],
    spec: Attachment,
    layout: Layout,
    pools: Pools,
    block: int,
    mtu: int,
    guids: ServerGuids,
    side: LeafSide,
    links: list[Link],
    tally: PoolTally,
    kinds: SlotsByKind,
) -> list[Server]:
    """The servers (this leaf's NICs of them) on one leaf; appends the leaf's ports to `side`
    and the cables to `links`. Kept as one loop over (server, NIC): at 5,000 switches it runs
    for every GPU port, and every layer of calls shows in the planning time."""
    per_cage = leaf.model.logical_ports(spec.speed) or 1
    ports = port_slots(kinds, leaf, per_cage, 1)
    leaf_number = layout.leaf_number(leaf.pod, leaf.index)
    mode = pools.server_mode
    leaf_block = pools.servers + (leaf_number - 1) * block
    subnet_len = 32 - (block.bit_length() - 1)
    addressed = pools.has_servers and spec.routed
    if addressed and spec.per_leaf:
        if mode == "subnet":
            tally.take("servers", (leaf_number - 1) * block, block)
            side.advertised.append(f"{ipv4(leaf_block)}/{subnet_len}")
        else:
            side.advertised.append(f"{ipv4(leaf_block)}/{subnet_len} le 31")
    first_number = layout.leaf_number(first.pod, first.index)
    result = []
    slot = 0
    speed, roce, length_m, leaf_name, kind, interfaces = spec.speed, spec.roce, spec.length_m, leaf.name, "server-leaf", side.interfaces
    p2p = mode == "p2p"
    role, vlan = "server" if p2p else "server-l2", spec.vlan if mode == "subnet" else 0
    nic_names = {nic: f"nic{nic}" for nic in nics}
    setting = speed_setting(speed, leaf.platform, leaf.model, per_cage)
    # The far end is a server: the leaf port's headroom covers its own platform's response.
    headroom = cable_headroom(length_m, speed, mtu, leaf.platform.pfc_response_ns) if roce else 0
    port_shared = (speed, role, mtu, roce, vlan, setting, headroom)
    for server_index in range(1, spec.per_leaf + 1):
        name = spec.name.format(fabric=spec.fabric, leaf=first.name, leaf_index=first.index, index=server_index, pod=leaf.pod, unit=unit)
        adapters = guids(name, first_number, server_index)
        server_nics = []
        for nic in nics:
            cage, sub, leaf_if = ports[slot]
            address = gateway = ""
            length = 31
            if addressed and mode == "p2p":
                offset = (leaf_number - 1) * block + slot * 2
                gateway, address = ipv4_pair(pools.servers + offset)
            elif addressed:
                gateway, address, length = ipv4(leaf_block + 1), ipv4(leaf_block + 2 + slot), subnet_len
            node_guid, port_guid = adapters[nic - 1] if adapters else ("", "")
            server_nics.append(_NIC(nic, leaf_name, leaf_if, speed, address, gateway, length, port_guid, rail, node_guid))
            nic_name = nic_names[nic]
            own = gateway if p2p else ""
            interfaces.append(_PORT(*port_shared, leaf_if, cage, sub, own, length, name, nic_name, f"{name} {nic_name}"))
            subnet = f"{gateway}/31" if p2p and gateway else ""
            a, z = _ENDPOINT(name, nic_name, nic), _ENDPOINT(leaf_name, leaf_if, cage)
            links.append(_LINK(kind, a, z, speed, length_m, mtu, subnet, address, gateway))
            slot += 1
        result.append(Server(name, leaf.name, server_index, tuple(server_nics), leaf.pod, nic_model=spec.nic_model))
    if addressed and mode == "p2p" and slot:
        tally.take_many("servers", 2 * slot, (leaf_number - 1) * block + slot * 2)
    if mode == "subnet" and addressed and spec.per_leaf:
        side.interfaces.append(
            Interface(
                name=leaf.platform.svi_interface.format(vlan=spec.vlan),
                port=0,
                sub=spec.vlan,
                speed=spec.speed,
                role="svi",
                address=ipv4(leaf_block + 1),
                prefix_length=subnet_len,
                peer_device="",
                peer_interface="",
                description=f"GPU servers VLAN {spec.vlan}",
                mtu=mtu,
                roce=False,
            )
        )
    return result
