"""The lab's view of the plan: the one place that reads `fabricgen.core.model.Plan`.

Everything the lab builds (namespaces, veths, FRR and lldpd configs) and everything `lab
verify` expects comes from the `LabTopology` made here, so a change in the plan's layout is
one edit in this module. Names: one namespace per switch and server, `<prefix><device>`
with the per-fabric prefix `fg-<fabric>-`; inside a namespace a planned port gets a kernel
name within the 15-character limit (`swp<cage>` or `swp<cage>s<sub>` for a broken-out
cage, `nic<n>` on servers). Interfaces only ever exist inside the lab's own namespaces.
"""

from __future__ import annotations

from dataclasses import dataclass

from fabricgen.core.catalog import platforms
from fabricgen.core.model import Device, Interface, Plan
from fabricgen.lab.native import NativeConfig, NativeConfigError, native_config

IFNAMSIZ = 15
"""Longest Linux interface name (IFNAMSIZ - 1)."""


class LabUnsupported(ValueError):
    """The plan asks for something the namespace lab cannot build (reported as bad input)."""


@dataclass(frozen=True, slots=True)
class LabPort:
    """One end of a cable inside a node's namespace."""

    kernel: str
    planned: str
    address: str
    prefix_length: int
    mtu: int
    peer_node: str
    peer_planned: str
    role: str
    description: str


@dataclass(frozen=True, slots=True)
class LabNeighbor:
    address: str
    remote_asn: int
    peer_group: str
    description: str
    inherits_remote_as: bool
    peer_node: str
    peer_planned: str


@dataclass(frozen=True, slots=True)
class LabPeerGroup:
    name: str
    remote_asn: int


@dataclass(frozen=True, slots=True)
class LabSwitch:
    name: str
    namespace: str
    role: str
    pod: int
    asn: int
    router_id: str
    loopback: str
    ports: tuple[LabPort, ...]
    neighbors: tuple[LabNeighbor, ...]
    peer_groups: tuple[LabPeerGroup, ...]
    maximum_paths: int
    advertised_prefixes: tuple[str, ...]
    as_path_multipath_relax: bool
    prefix_list: str
    route_map: str
    drained: bool = False
    """The plan drains it (`Device.drained`): FRR's drain lines (platforms/frr/platform.yml `drain:`)."""
    native: NativeConfig | None = None
    """Its platform runs FRR itself (SONiC, `lab:` in its platform.yml): the lab runs the switch's
    own rendered FRR config unmodified, its ports named as planned (`lab/native.py`)."""

    @property
    def port_pattern(self) -> str:
        """The glob of its ports' kernel names (lldpd runs on these)."""
        return self.native.port_pattern if self.native else "swp*"


@dataclass(frozen=True, slots=True)
class LabNic:
    kernel: str
    planned: str
    address: str
    prefix_length: int
    gateway: str
    mtu: int
    leaf: str
    leaf_planned: str
    table: int


@dataclass(frozen=True, slots=True)
class LabServer:
    name: str
    namespace: str
    nics: tuple[LabNic, ...]


@dataclass(frozen=True, slots=True)
class LabCable:
    """One veth pair: a planned cable. `a` is the lower tier (server or leaf)."""

    kind: str
    a_node: str
    a_kernel: str
    a_planned: str
    z_node: str
    z_kernel: str
    z_planned: str
    subnet: str


@dataclass(frozen=True, slots=True)
class LabTimers:
    """The lab's own BGP and LLDP timers (not planned values): fast convergence on a small lab,
    slower on a big one (`fabricgen/lab/timers.py`, rows in platforms/frr/platform.yml)."""

    keepalive: int = 1
    hold: int = 3
    connect_retry: int = 2
    lldp_tx_interval: int = 1


@dataclass(frozen=True, slots=True)
class LabTopology:
    fabric: str
    prefix: str
    switches: tuple[LabSwitch, ...]
    servers: tuple[LabServer, ...]
    cables: tuple[LabCable, ...]
    servers_prefix: str
    bfd: bool
    bfd_interval_ms: int
    """BFD interval the lab runs: the planned one, or slower on a big lab (`bfd_planned_ms`)."""
    bfd_multiplier: int
    timers: LabTimers = LabTimers()
    bfd_planned_ms: int = 0
    """The planned BFD interval when the lab runs a slower one for its size; 0: it runs the plan's."""

    def namespace(self, node: str) -> str:
        return f"{self.prefix}{node}"

    def switch(self, name: str) -> LabSwitch:
        for switch in self.switches:
            if switch.name == name:
                return switch
        raise KeyError(name)

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(s.namespace for s in self.switches) + tuple(s.namespace for s in self.servers)


def lab_prefix(fabric: str) -> str:
    """Namespace prefix of one fabric's lab: two fabrics never share a namespace."""
    return f"fg-{fabric}-"


def kernel_port_name(interface: Interface) -> str:
    """`swp<cage>` or `swp<cage>s<sub>`: short, stable, unique per switch.

    >>> kernel_port_name(Interface("Ethernet1/61/2", 61, 2, 400, "uplink", "", 31, "", "", "", 9216, True))
    'swp61s2'
    """
    return f"swp{interface.port}" if interface.sub <= 1 else f"swp{interface.port}s{interface.sub}"


def _breakout_ports(device: Device) -> frozenset[int]:
    return frozenset(b.port for b in device.breakouts)


def _port_names(device: Device, native: bool = False) -> dict[str, str]:
    """Planned port -> kernel name: `swp...`, or the planned name itself on a switch that runs
    its own config (SONiC's `Ethernet0`: its FRR config and config_db name the ports so)."""
    broken = _breakout_ports(device)
    names = {}
    for interface in device.interfaces:
        if interface.port and native:
            names[interface.name] = interface.name
        elif interface.port:
            name = kernel_port_name(interface)
            if interface.port in broken and interface.sub <= 1:
                name = f"swp{interface.port}s1"
            names[interface.name] = name
    return names


def _switch(device: Device, prefix: str, names: dict[str, str], native: NativeConfig | None) -> LabSwitch:
    platform = platforms()[device.platform]
    ports = tuple(
        LabPort(names[i.name], i.name, i.address, i.prefix_length, i.mtu, i.peer_device, i.peer_interface, i.role, i.description)
        for i in device.interfaces
        if i.port
    )
    neighbors = tuple(
        LabNeighbor(n.address, n.remote_asn, n.peer_group, n.description, n.inherits_remote_as, n.peer_device, n.peer_interface)
        for n in device.bgp_neighbors
    )
    return LabSwitch(
        name=device.name,
        namespace=f"{prefix}{device.name}",
        role=device.role,
        pod=device.pod,
        asn=device.asn,
        router_id=device.router_id,
        loopback=device.loopback,
        ports=ports,
        neighbors=neighbors,
        peer_groups=tuple(LabPeerGroup(g.name, g.remote_asn) for g in device.peer_groups),
        maximum_paths=device.maximum_paths,
        advertised_prefixes=device.advertised_prefixes,
        as_path_multipath_relax=device.as_path_multipath_relax,
        prefix_list=platform.names.get("prefix_list", "PL-ADVERTISE"),
        route_map=platform.names.get("route_map", "RM-ADVERTISE"),
        drained=device.drained,
        native=native,
    )


def lab_topology(plan: Plan, table_base: int = 100) -> LabTopology:
    """The lab of `plan`. Raises LabUnsupported for plans the lab cannot build (InfiniBand,
    server VLANs instead of routed /31s). `table_base`: the hosts' per-NIC routing tables."""
    if plan.transport != "roce":
        raise LabUnsupported(f"fabric {plan.name} is not an Ethernet (RoCE) fabric; use `fabricgen ib verify`")
    prefix = lab_prefix(plan.name)
    names: dict[tuple[str, str], str] = {}
    switches = []
    for device in plan.devices:
        if any(i.role in ("server-l2", "svi") for i in device.interfaces):
            raise LabUnsupported(
                f"{device.name}: servers in a VLAN (addressing.server_mode: subnet) are not emulated; the lab needs routed /31s"
            )
        try:
            native = native_config(plan, device)
        except NativeConfigError as exc:
            raise LabUnsupported(str(exc)) from exc
        port_names = _port_names(device, native is not None)
        names.update({(device.name, planned): kernel for planned, kernel in port_names.items()})
        switches.append(_switch(device, prefix, port_names, native))
    leaf_mtu = {(d.name, i.name): i.mtu for d in plan.devices for i in d.interfaces}
    servers = []
    for server in plan.servers:
        nics = tuple(
            LabNic(
                f"nic{n.nic}",
                f"nic{n.nic}",
                n.address,
                n.prefix_length,
                n.gateway,
                leaf_mtu[(n.leaf, n.leaf_interface)],
                n.leaf,
                n.leaf_interface,
                table_base + n.nic,
            )
            for n in server.nics
        )
        names.update({(server.name, nic.planned): nic.kernel for nic in nics})
        servers.append(LabServer(server.name, f"{prefix}{server.name}", nics))
    cables = tuple(
        LabCable(
            link.kind,
            link.a.device,
            names[(link.a.device, link.a.interface)],
            link.a.interface,
            link.z.device,
            names[(link.z.device, link.z.interface)],
            link.z.interface,
            link.subnet,
        )
        for link in plan.links
    )
    servers_prefix = next((p.prefix for p in plan.pools if p.name == "servers"), "")
    return LabTopology(
        plan.name, prefix, tuple(switches), tuple(servers), cables, servers_prefix, plan.bfd, plan.bfd_interval_ms, plan.bfd_multiplier
    )
