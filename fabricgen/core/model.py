"""The plan: one typed, frozen, vendor-neutral model of a fabric.

Built once by the planner; renderers, checks and templates only read it. Every value a
template prints is here already computed (names, addresses, ASNs, descriptions): templates
format, they do not decide.
"""

from __future__ import annotations

from dataclasses import field
from typing import Any, NamedTuple, TypeVar

from fabricgen.core.records import record

_Cls = TypeVar("_Cls", bound=type)


@record
class PortMap:
    """How a network OS built from per-platform files (SONiC's `port_config.ini` and
    `platform.json` of a hardware SKU) names and wires a model's cages: the ASIC lanes of each
    cage, the alias of a port, the breakout mode names. Hardware facts, copied from the vendor's
    platform files (`source`), never computed: the lanes of cage 1 need not be 0-7."""

    hwsku: str
    """The hardware SKU whose files these are (DEVICE_METADATA `hwsku`)."""
    lanes: tuple[tuple[int, ...], ...]
    """ASIC lanes of every cage, cage 1 first."""
    alias: str
    """Alias of an unbroken cage's port ({port} cage, {lane} first lane, {letter} a, b, ...)."""
    breakout_alias: str
    """Alias of a logical port of a broken-out cage (same fields)."""
    breakout_modes: dict[int, str]
    """Logical ports per cage -> the breakout mode name the platform files give it."""
    fec: str = "rs"
    """FEC of the cages' ports (the SKU's `port_config.ini` column)."""
    source: str = ""
    buffers: dict[str, Any] = field(default_factory=dict)
    """The SKU's buffer pools and base profiles, the lossless pool and dynamic threshold, and
    the xon per port speed (its buffers_defaults_t1.j2 and pg_profile_lookup.ini); empty: the
    SKU's files state none, and fabricgen writes no buffer table (docs/sonic.md)."""

    def port_lanes(self, port: int, sub: int, per_cage: int) -> tuple[int, ...]:
        """ASIC lanes of logical port `sub` (1-based) of cage `port` broken into `per_cage`.

        >>> PortMap("X", ((17, 18, 19, 20, 21, 22, 23, 24),), "", "", {}).port_lanes(1, 2, 2)
        (21, 22, 23, 24)
        """
        cage = self.lanes[port - 1]
        width = len(cage) // per_cage
        return cage[(sub - 1) * width : sub * width]

    def port_alias(self, port: int, sub: int, per_cage: int) -> str:
        """Alias of logical port `sub` of cage `port` broken into `per_cage`.

        >>> PortMap("X", ((0,) * 8,), "etp{port}", "etp{port}{letter}", {}).port_alias(1, 2, 4)
        'etp1b'
        """
        lane = (sub - 1) * (len(self.lanes[port - 1]) // per_cage) + 1
        pattern = self.alias if per_cage == 1 else self.breakout_alias
        return pattern.format(port=port, lane=lane, letter="abcdefgh"[sub - 1])


@record
class Model:
    """One hardware catalog entry."""

    name: str
    vendor: str
    description: str
    ports: int
    speed: int
    lanes: int
    form_factor: str
    breakouts: dict[int, int]
    platforms: tuple[str, ...]
    queue_family: str = "trident"
    dynamic_load_balancing: bool = False
    """The model does dynamic (flowlet) ECMP load balancing with a command fabricgen renders."""
    lane_rate: int = 0
    """Gb/s per electrical lane at the native speed (0: speed / lanes)."""
    twin_port: bool = False
    """Every cage holds two ports (NVIDIA twin-port OSFP): one module or cable serves both."""
    pfc_headroom_bytes: int = 0
    """Ingress buffer a port of this model holds for its no-drop priority after sending PAUSE
    (PFC headroom) when its buffers are left at their defaults, as a public source states it;
    0: no such figure, nothing to compare (docs/render.md, "PFC headroom")."""
    pfc_headroom_cable_m: float = 0
    """Longest cable whose PFC headroom the model's default no-drop buffers cover, where the
    vendor states the default as a cable length rather than bytes (Cisco: a pause buffer must
    be configured beyond 100 m); 0: no such figure (docs/render.md, "PFC headroom")."""
    pfc_headroom_source: str = ""
    """Where `pfc_headroom_bytes` or `pfc_headroom_cable_m` comes from (a vendor page, a datasheet)."""
    netbox: dict[str, str] = field(default_factory=dict)
    """NetBox manufacturer and device type model."""
    netbox_interface_types: dict[int, str] = field(default_factory=dict)
    """NetBox interface type of a port per speed."""
    port_map: PortMap | None = None
    """ASIC lanes and port aliases of every cage as the OS's platform files give them; None
    where no platform the model runs needs them."""

    @property
    def cage_lane_rate(self) -> int:
        return self.lane_rate or self.speed // max(self.lanes, 1)

    @property
    def cage_speed(self) -> int:
        """Speed of a whole cage (its module's speed): lanes x lane rate (800 on a twin-port OSFP)."""
        return self.lanes * self.cage_lane_rate

    def logical_ports(self, speed: int) -> int:
        """Logical ports per cage when run at `speed` (0 when the model cannot)."""
        return self.breakouts.get(speed, 0)


@record
class NicModel:
    """A server NIC / HCA model from the catalog (`nics:`): the cage it puts at the server end."""

    name: str
    vendor: str
    description: str
    form_factor: str
    speed: int
    lanes: int
    lane_rate: int
    netbox_interface_types: dict[str, str] = field(default_factory=dict)
    """NetBox interface type of its ports per transport (roce, infiniband)."""


@record
class Platform:
    """Facts about one operating system (from platforms/<os>/platform.yml)."""

    name: str
    title: str
    transport: str
    ansible_network_os: str
    mtu_default: int
    mtu_max: int
    interface_name: str
    breakout_interface_name: str
    management_interface: str
    management_vrf: str
    loopback_interface: str
    svi_interface: str
    cnp_traffic_class_default: int
    queue_keywords: dict[str, str]
    names: dict[str, str] = field(default_factory=dict)
    """Names of config objects the templates print (QoS policies, prefix list, route map)."""
    qos: dict[str, Any] = field(default_factory=dict)
    """Queue naming and listing conventions of the platform's QoS configuration."""
    speed_format: str = ""
    """`speed` value of every routed port ({speed} G, {mbps}, {lanes}); empty: no speed line."""
    breakout_speed_format: str = ""
    """`speed` value of a logical port of a broken-out cage; empty: no speed line."""
    split_interface_name: str = ""
    """Name of a logical port of a twin-port cage whose two ports are each split in two
    ({port} cage, {half} its port, {split} the half of that port: NVIDIA Quantum-2 1/3/1/2);
    empty: `breakout_interface_name` for every breakout."""
    pfc_response_ns: int = 0
    """Time this OS's ports take to stop sending after a PFC PAUSE arrives (sizes the peer's headroom)."""
    pfc_headroom_buffer: str = ""
    """What the OS's ports get of their planned PFC headroom from fabricgen's config, and why:
    the fabric README prints it per platform so it never promises a buffer a switch does not get
    (docs/render.md, "PFC headroom")."""
    ecmp_hash: dict[str, str] = field(default_factory=dict)
    """ECMP hash command that includes the L4 ports (RoCEv2 entropy is the UDP source port), per
    silicon family (catalog `queue_family`, `default` for every model); none: not rendered."""
    dcbx_command: str = ""
    """Per-port DCBX command of RoCE host ports when `roce.dcbx` is on; empty: the OS has none."""
    dlb_modes: dict[str, str] = field(default_factory=dict)
    """Dynamic load balancing mode keyword per `roce.load_balancing` value the OS supports."""
    pfc_watchdog: dict[str, Any] = field(default_factory=dict)
    """PFC watchdog timers the OS accepts: `timers` (`independent` or `interval-multiples`) and
    the range and step of each (plan/passes/watchdog.py)."""
    drain: dict[str, Any] = field(default_factory=dict)
    """How the OS drains a switch and honours a drained neighbour (`drain:` in platform.yml):
    the GSHUT community, the receiver's community list and route map, the drained switch's lines."""
    port_map_required: bool = False
    """The OS writes each port's ASIC lanes (SONiC's PORT table): a model it runs on needs a
    `port_map` that covers every port and breakout (plan/passes/port_map.py)."""
    control_plane: dict[str, Any] = field(default_factory=dict)
    """What the OS's control-plane (or management) ACL filters and how it prints it
    (`control_plane:` in platform.yml; plan/passes/control_plane.py); empty: none rendered."""
    config_sections: tuple[str, ...] = ()
    """Top-level config sections (templates `<platform>/<section>.j2`) in the order the OS prints
    `show running-config`, so a diff against a device shows no reordering."""

    def port_name(self, port: int, sub: int, per_cage: int, lanes: int) -> str:
        """Interface name of logical port `sub` (1-based) of cage `port` broken into `per_cage`."""
        lane = (sub - 1) * max(lanes // per_cage, 1) + 1
        if per_cage > 2 and self.split_interface_name:
            per_half = per_cage // 2
            return self.split_interface_name.format(port=port, half=(sub - 1) // per_half + 1, split=(sub - 1) % per_half + 1)
        pattern = self.interface_name if per_cage == 1 else self.breakout_interface_name
        return pattern.format(port=port, sub=sub, lane=lane, index=(port - 1) * lanes + lane - 1)


@record
class Interface:
    """A configured port of a device. `role`: uplink, downlink (to a lower tier), server (routed
    /31), server-l2 (access port in the leaf's server VLAN), svi (the server VLAN's gateway), sm
    (an InfiniBand leaf's port to a dedicated subnet-manager host)."""

    name: str
    port: int
    sub: int
    speed: int
    role: str
    address: str
    prefix_length: int
    peer_device: str
    peer_interface: str
    description: str
    mtu: int
    roce: bool
    vlan: int = 0
    """Access VLAN of a `server-l2` port."""
    speed_setting: str = ""
    """What follows `speed` on this platform, or empty when the port runs its default."""
    pfc_headroom_bytes: int = 0
    """PFC headroom this RoCE port needs for its no-drop priority, from its cable's length, speed and
    MTU and the peer's response time (plan/passes/headroom.py); 0 on other ports."""
    dcbx: bool = False
    """A RoCE host port that runs IEEE DCBX (`roce.dcbx`, where the platform has a per-port command)."""


@record
class ClassHeadroom:
    """The PFC headroom one no-drop traffic class needs on a switch: the largest need of its
    ports (`port`, the first port with that need). Intent: where a platform takes the buffer per
    class for every port it is this figure; where fabricgen renders no buffer line the fabric
    README says so per platform (docs/render.md, "PFC headroom")."""

    traffic_class: int
    headroom_bytes: int
    port: str


@record
class Breakout:
    """A cage run as several logical ports: `count` x `speed` G."""

    port: int
    count: int
    speed: int


@record
class BgpNeighbor:
    address: str
    remote_asn: int
    peer_device: str
    peer_interface: str
    peer_group: str
    description: str
    inherits_remote_as: bool = False
    """True when the peer group carries this neighbor's remote-as (a tier sharing one ASN)."""


@record
class PeerGroup:
    """A BGP peer group (EOS) or peer template (NX-OS); `remote_asn` 0 when set per neighbor."""

    name: str
    remote_asn: int


@record
class Device:
    name: str
    role: str
    index: int
    pod: int
    platform: str
    model: str
    loopback: str
    asn: int
    router_id: str
    management: str
    management_prefix_length: int
    management_gateway: str
    serial: str
    guid: str
    guid_is_placeholder: bool
    mtu: int
    maximum_paths: int
    interfaces: tuple[Interface, ...]
    breakouts: tuple[Breakout, ...]
    bgp_neighbors: tuple[BgpNeighbor, ...]
    advertised_prefixes: tuple[str, ...]
    """Prefix-list entries of what this device announces: its loopback, its server block."""
    ports_total: int
    ports_used: int
    peer_groups: tuple[PeerGroup, ...] = ()
    vlans: tuple[int, ...] = ()
    queue_keyword: str = ""
    """EOS egress queue keyword of the model's queue family (uc-tx-queue / tx-queue)."""
    as_path_multipath_relax: bool = False
    """The ASN design makes this device learn equal-length paths whose AS_PATHs differ (a leaf of a
    three-tier fabric reaches another pod through super-spine planes with different ASNs): BGP must
    multipath across them or the planned ECMP width collapses to one path. Decided by the planner."""
    aggregates: tuple[str, ...] = ()
    """Prefixes advertised as one summary-only aggregate (a leaf's server block with
    `bgp.aggregate_server_prefixes`); their more-specific routes are suppressed."""
    maximum_routes: int = 0
    """Routes each BGP neighbor may send: the most the fabric can originate within its pools (a /32
    per loopback address, a /31 per two server addresses), so growth fits and a leak still trips
    it. EOS's default (12,000) is below what a large fabric's /31s need. 0 on InfiniBand."""
    plane: int = 0
    """Super-spine plane: a super-spine's own plane, a spine's plane (its index) in a three-tier
    fabric, 0 otherwise. `pod` is 1 in a two-tier fabric and 0 for super-spines."""
    ecmp_hash: str = ""
    """The ECMP hash command line (with L4 ports) for this model's silicon; empty: default hash."""
    dlb_mode: str = ""
    """Dynamic load balancing mode keyword (NX-OS `flowlet`); empty: hash-based ECMP only."""
    dlb_interfaces: tuple[str, ...] = ()
    """Switch-facing interfaces (the ECMP members) dynamic load balancing runs on."""
    pfc_headroom: tuple[ClassHeadroom, ...] = ()
    """PFC headroom per no-drop traffic class of this switch (RoCE fabrics), decided by the
    forwarding pass from its ports' figures."""
    drained: bool = False
    """Under `drain:` or `--drain`: the switch announces every route with the RFC 8326
    GRACEFUL_SHUTDOWN community (its platform's mechanism, `drain:` in platform.yml), so its
    neighbours prefer other paths and it carries no transit traffic (docs/drain.md)."""


@record
class Endpoint:
    device: str
    interface: str
    port: int


@record
class Choice:
    """The media of one cable (chosen by `plan/media.py`). `cable_part` is the copper/AOC cable
    or the fibre patch cord (a 1:N splitter cord when several links share one optical port);
    `a_optic`/`z_optic` the transceivers (empty for cables with built-in ends), `a_ports`/
    `z_ports` their optical ports (2 on a twin-port module: two patch cords). Links with the
    same hardware, length and speed share one instance."""

    medium: str
    variant: str
    kind: str
    netbox_type: str
    cable_part: str
    a_optic: str
    z_optic: str
    a_ports: int = 0
    z_ports: int = 0


SERVER_LINK = "server-leaf"
"""Kind of a GPU server's cable to its leaf."""
SM_LINK = "sm-leaf"
"""Kind of a dedicated subnet-manager host's cable to its leaf (InfiniBand): a host cable, but no
GPU bandwidth, so analyze and the server counts leave it out."""
HOST_LINK_KINDS = frozenset({SERVER_LINK, SM_LINK})
SM_ROLE = "sm"
"""Role of the leaf interface a dedicated SM host is cabled to."""
"""Cables whose A end is a host (a server or an SM host), not a switch."""


@record
class Link:
    """One cable. A end is the lower tier (server, SM host or leaf), Z end the upper. `media` is
    set by the media pass (None only while the planner is still wiring)."""

    kind: str
    a: Endpoint
    z: Endpoint
    speed: int
    subnet: str
    a_address: str
    z_address: str
    length_m: float
    media: Choice | None = None
    mtu: int = 0
    """IP MTU of both ends: the largest both platforms support (the host MTU on server cables)."""

    @property
    def to_host(self) -> bool:
        """The A end is a host (server or SM host): its port is a NIC, not a switch interface."""
        return self.kind in HOST_LINK_KINDS


class CableEnd(NamedTuple):
    """The hardware at one end of a cable: the cage's form factor, the speed of the module (or
    cable end) in it, how many links share that cage, and the lane rate of this link there.

    A tuple, like Identities and Cable: two are built per link (400,000 at 5,000 switches), and
    a tuple is built in C, where a frozen dataclass's `__init__` sets each field through
    `object.__setattr__` (ten times the cost)."""

    device: str
    port: int
    interface: str
    form_factor: str
    cage_speed: int
    shared: int
    lane_rate: int = 0
    sub: int = 1


class Identities(NamedTuple):
    """What one cable's parts are, as physical items to count: a shared cage holds one module
    (or one breakout cable) for all its links, a twin-port module's two optical ports take two
    cords, links sharing one optical port share one splitter cord."""

    cables: tuple[tuple[str, ...], ...]
    a: tuple[str, ...]
    z: tuple[str, ...]

    @property
    def cable(self) -> tuple[str, ...]:
        return self.cables[0]


class Cable(NamedTuple):
    """A link of a finished plan with its ends' hardware, its media and its physical items."""

    link: Link
    a: CableEnd
    z: CableEnd
    choice: Choice
    items: Identities

    @property
    def breakout(self) -> bool:
        """One physical cable serving several links (a breakout or splitter cable with built-in
        ends): NetBox's CSV cable import cannot hold it."""
        return self.choice.kind != "fibre" and (self.a.shared > 1 or self.z.shared > 1)


@record
class ServerNic:
    nic: int
    leaf: str
    leaf_interface: str
    speed: int
    address: str
    gateway: str
    prefix_length: int
    port_guid: str
    rail: int = 0
    """Rail (1-based position of `leaf` in its scalable unit) with rail attachment; 0 otherwise."""
    node_guid: str = ""
    """InfiniBand: node GUID of this NIC's adapter. A GPU server's HCAs are separate PCIe
    devices (`ibnetdiscover` shows one `Ca` per adapter, "<host> mlx5_N"), each with its own
    node GUID; the catalog's HCA models are single-port adapters, so NIC = adapter."""

    @property
    def device(self) -> str:
        """The adapter's RDMA device name as the host and its node description show it."""
        return f"mlx5_{self.nic - 1}"


@record
class Server:
    name: str
    leaf: str
    index: int
    nics: tuple[ServerNic, ...]
    pod: int = 1
    unit: int = 0
    """Scalable unit within the pod with rail attachment (its leaves are the unit's rails); 0 otherwise."""
    nic_model: str = ""
    """Catalog NIC model of its ports (`servers.nic`); names an entry of Plan.nics."""

    @property
    def node_guid(self) -> str:
        """Node GUID of NIC 1's adapter (every NIC is its own HCA: see `ServerNic.node_guid`)."""
        return self.nics[0].node_guid if self.nics else ""


@record
class QosQueue:
    """One egress queue (traffic class) of a platform's RoCE profile, as its config names it."""

    traffic_class: int
    name: str
    """Queue or class name: NX-OS `c-out-8q-q3` / `c-8q-nq3`, EOS the queue number."""
    bandwidth_percent: int
    """Round-robin share; the non-strict queues of a platform's list sum to 100."""
    strict: bool
    """Strict priority (CNP and network control only); every other queue is round-robin by its share."""
    ecn: bool
    no_drop: bool


@record
class DscpClass:
    """DSCP values that one purpose sends to one traffic class (one `qos map dscp` line on EOS)."""

    purpose: str
    """`roce`, `cnp`, `network-control` or `default` (every DSCP not named by the others)."""
    dscps: tuple[int, ...]
    traffic_class: int


@record
class WatchdogTimers:
    """The PFC watchdog one platform runs: the planned timers as its OS takes them (platform data
    `pfc_watchdog`), so nothing shows a timer a switch does not get."""

    timeout_ms: int
    """A no-drop queue paused this long with nothing sent is declared stuck and drained."""
    recovery_ms: int
    """The stuck queue is restored after this long."""
    polling_ms: int
    timeout_multiplier: int = 0
    """Where the OS sets the timeout as a multiple of the polling interval (NX-OS
    `shutdown-multiplier`): that multiple; 0 where it takes the timeout itself."""
    recovery_multiplier: int = 0
    """Likewise for the recovery time (NX-OS `auto-restore multiplier`)."""


@record
class QosClass:
    """One named classifier class of a platform that classifies by class-map (NX-OS
    `class-map type qos`): the DSCPs it matches and the qos-group it sets, in config order."""

    name: str
    dscps: tuple[int, ...]
    traffic_class: int


@record
class QosProfile:
    """The RoCE policy resolved for one platform: names, classes and queue lists to print."""

    platform: str
    names: dict[str, str]
    data_traffic_class: int
    cnp_traffic_class: int
    mtu: int
    queues: tuple[QosQueue, ...]
    """Egress queues the platform's queuing config lists, in its running-config order."""
    pause_queues: tuple[QosQueue, ...]
    """Classes of the network-qos (pause/MTU) policy: the no-drop class and the default."""
    queues_default_strict: bool = False
    """The platform's transmit queues are strict priority until told otherwise (EOS Trident and
    Tomahawk): a round-robin queue needs an explicit `no priority`."""
    best_effort_traffic_class: int = 0
    """Traffic class of DSCP 0 (unmarked, default traffic) in the platform's default map."""
    ecn_counters: bool = False
    """The platform counts ECN marks of a queue only when told (EOS `random-detect ecn count`)."""
    load_interval: int = 0
    """Rate-counter interval (s) of RoCE ports where the default is too coarse; 0 keeps the default."""
    network_control_traffic_class: int = 7
    """Strict class of network control (DSCP CS6/CS7 other than CNP's), platform data."""
    dscp_map: tuple[DscpClass, ...] = ()
    """Every DSCP 0-63 to its traffic class, by purpose (RoCE, CNP, network control, the rest),
    so no switch default decides which queue a marked packet reaches."""
    watchdog: WatchdogTimers | None = None
    """The PFC watchdog timers this platform runs (`None`: the watchdog is off)."""
    classifier: tuple[QosClass, ...] = ()
    """The named classes of a class-map classifier (NX-OS): RoCE, CNP and network control
    when it has DSCPs of its own; empty on platforms that classify by DSCP map (EOS)."""


@record
class RocePolicy:
    no_drop_priority: int
    dscp_data: int
    dscp_cnp: int
    cnp_traffic_class: dict[str, int]
    ecn_enabled: bool
    ecn_min_bytes: int
    ecn_max_bytes: int
    ecn_probability: int
    pfc_watchdog: bool
    watchdog_timeout_ms: int
    watchdog_recovery_ms: int
    watchdog_polling_ms: int
    bandwidth_percent: int
    mtu: dict[str, int]
    ecn_min: str = ""
    """ECN thresholds as the switches take them: `150 kbytes` (1 KB = 1000 bytes) or `N bytes`."""
    ecn_max: str = ""
    profiles: dict[str, QosProfile] = field(default_factory=dict)
    dcbx: bool = False
    """RoCE host ports run IEEE DCBX (`roce.dcbx`), advertising PFC/ETS to the NICs."""
    load_balancing: str = "hash"
    """ECMP across the fabric: `hash` (5-tuple, UDP source port included) or `flowlet` (dynamic)."""

    @property
    def host_tos(self) -> int:
        """ToS byte a host sets for RoCE data: DSCP << 2 with ECT(0)."""
        return (self.dscp_data << 2) | 2


@record
class PoolUsage:
    """How much of an address pool the plan uses. `needed` is one past the highest offset
    allocated (slots reserved for growth count), `used` the addresses actually assigned."""

    name: str
    key: str
    prefix: str
    used: int
    needed: int
    capacity: int


@record
class Oversubscription:
    device: str
    downlink_gbps: int
    uplink_gbps: int

    @property
    def ratio(self) -> float:
        return self.downlink_gbps / self.uplink_gbps if self.uplink_gbps else float("inf")


@record
class SubnetManager:
    """One OpenSM instance. It runs on a planned server's HCA (`server` set) or on a dedicated
    host cabled to `leaf` port `leaf_port`. `port_guid` is what OpenSM binds to (`guid`)."""

    host: str
    priority: int
    port_guid: str
    node_guid: str
    guid_is_placeholder: bool
    server: str
    leaf: str
    leaf_port: int
    nic_model: str = ""
    """Catalog NIC model of a dedicated host's HCA (the servers' `servers.nic`); its cable is a
    plan link of kind `sm-leaf` whose media the same rule chooses."""
    leaf_sub: int = 1
    """Logical port of cage `leaf_port` the host is cabled to (2: the second port of a twin-port
    cage, 1-4 in a cage split into NDR200 ports); 0 when that cage has no port it can use."""


@record
class Partition:
    """A tenant partition. `members` are the inventory's patterns; `hosts` and `port_guids`
    what they resolved to (sorted), so templates print GUIDs and never match names."""

    name: str
    pkey: int
    membership: str
    ipoib: bool
    mtu: int
    rate: int
    sl: int
    members: tuple[str, ...]
    hosts: tuple[str, ...] = ()
    port_guids: tuple[str, ...] = ()
    mtu_code: int = 0
    """IBTA MTU code of the IPoIB group (4 = 2048, 5 = 4096)."""
    rate_code: int = 0
    """IBTA rate code of the IPoIB group (17 = 200G); 0 = OpenSM's default."""
    traffic_sl: int = 0
    """The SL the tenant's traffic runs on: `sl` with QoS enabled, else 0 (no QoS policy maps it).
    Printed as `sl=` in an IPoIB partition's header (its multicast group) when not 0, and as
    NCCL_IB_SL / UCX_IB_SL on the host pages."""

    @property
    def pkey_hex(self) -> str:
        return f"0x{self.pkey:04x}"


@record
class NodeName:
    guid: str
    name: str


@record
class SmSoftware:
    """The subnet manager the fabric is planned for, and what its links need
    (data/subnet_managers.yml): `implementation` opensm | mlnx-opensm | ufm, `version` as stated
    ("" = not stated: the distribution's OpenSM), the switches' link `generation` (HDR, NDR, XDR),
    and the first upstream OpenSM that runs it (`minimum_opensm`, "" when none does)."""

    implementation: str = "opensm"
    version: str = ""
    generation: str = ""
    minimum_opensm: str = ""


@record
class SmProtection:
    """M_Key protection of the subnet (opensm(8) MKEY CONFIGURATION). With `enabled` the SM hosts
    need `m_key`, `sm_key` and `sa_key`: secrets the opensm_deploy role adds at push time, never
    part of the plan or the rendered files."""

    enabled: bool = False
    m_key_protection_level: int = 0
    m_key_lease_period: int = 0


@record
class SplitLeg:
    """One split port of a switch and what is cabled to it (`peer`, empty when nothing is)."""

    name: str
    peer: str


@record
class SwitchSplit:
    """A switch with ports split into narrower ports (HDR100 on a QM8790 cage, NDR200 on a port of
    a QM9700 twin-port cage), which its OS must be told: NVIDIA switches do not sense split
    cables. `ports` are the ports to split (as named before the split), `legs` the ports that
    result, in port order."""

    switch: str
    model: str
    ports: tuple[str, ...]
    legs: tuple[SplitLeg, ...]


@record
class InfinibandPlan:
    """Everything OpenSM needs, computed: the templates in templates/opensm/ only print it."""

    subnet_managers: tuple[SubnetManager, ...]
    routing_engine: str
    lmc: int
    partitions: tuple[Partition, ...]
    qos_enabled: bool
    qos_max_vls: int
    qos_sl2vl: tuple[int, ...]
    qos_vlarb_high: str
    qos_vlarb_low: str
    guid_prefix: str
    no_fallback: bool = False
    qos_high_limit: int = 0
    max_op_vls: int = 5
    """OpenSM's encoding of the operational VLs (4 = VL0-7), derived from qos_max_vls."""
    default_membership: str = "full"
    default_ipoib: bool = True
    default_mtu_code: int = 0
    """IBTA MTU code of Default's IPoIB group: the fabric's MTU (5 = 4096); 0 = OpenSM's default,
    4 (2048). OpenSM refuses a join from a port whose MTU is below the group's."""
    root_guids: tuple[str, ...] = ()
    """Spine node GUIDs: the top rank for ftree and updn."""
    cn_guids: tuple[str, ...] = ()
    """HCA port GUIDs of the compute nodes (servers), not of dedicated SM hosts."""
    node_names: tuple[NodeName, ...] = ()
    placeholder_hosts: tuple[str, ...] = ()
    """Servers and dedicated SM hosts whose HCA GUIDs are still placeholders."""
    sm_software: SmSoftware = field(default_factory=SmSoftware)
    protection: SmProtection = field(default_factory=SmProtection)
    config_dir: str = "/etc/opensm"
    log_dir: str = "/var/log"
    log_flags: int = 3
    sweep_interval: int = 10
    sminfo_polling_timeout: int = 10000
    polling_retry_number: int = 4
    congestion_control: bool = False
    """Upstream OpenSM congestion control (`congestion_control TRUE`)."""
    cc_threshold: int = 0
    cc_marking_rate: int = 0
    sharp_enabled: bool = False
    """Intent only: SHARP needs NVIDIA MLNX OpenSM / UFM, nothing is rendered for upstream OpenSM."""
    adaptive_routing_engine: str = ""
    """Intent only (`ar_updn`, ...): MLNX OpenSM / UFM engines, not rendered for upstream OpenSM."""
    switch_splits: tuple[SwitchSplit, ...] = ()
    """Switches whose ports must be split before cabling, in device order (plan/passes/ib_split.py)."""

    @property
    def cc_control_map(self) -> int:
        """cc_sw_cong_setting_control_map: bit 2 threshold + packet size valid, bit 4 marking rate valid."""
        return 0x04 | (0x10 if self.cc_marking_rate else 0)

    @property
    def engine_setting(self) -> str:
        return f"{self.routing_engine},no_fallback" if self.no_fallback else self.routing_engine


@record
class Services:
    ntp: tuple[str, ...]
    syslog: tuple[str, ...]
    dns: tuple[str, ...]
    domain: str
    timezone: str


@record
class AclEntry:
    """One rule of a control-plane ACL, platform-neutral: what the switch's CPU accepts.
    `ports` are destination ports (empty: any), `source_ports` the sender's (BGP replies to a
    session the switch opened); `tracked`: only packets of sessions the switch itself opened
    (EOS `tracked`). `port_text` / `source_port_text` are the ports as the OS prints them."""

    sequence: int
    action: str
    protocol: str
    source: str
    purpose: str
    ports: tuple[int, ...] = ()
    source_ports: tuple[int, ...] = ()
    tracked: bool = False
    port_text: str = ""
    source_port_text: str = ""


@record
class ControlPlaneAcl:
    """The ACL that decides who reaches a platform's switches (plan/passes/control_plane.py):
    `vrfs` it is applied in (empty: the applying point covers every VRF, NX-OS `line vty`);
    `allowed_sources` may manage the switches; `filters` what the applying point filters
    (`everything` to the CPU on EOS, `sessions` to the vty on NX-OS)."""

    platform: str
    name: str
    entries: tuple[AclEntry, ...]
    vrfs: tuple[str, ...]
    allowed_sources: tuple[str, ...]
    filters: str


@record
class GracefulRestart:
    """The fabric's BGP graceful-restart stance (RFC 4724), printed on every platform because their
    defaults differ (NX-OS restarts gracefully and helps unless told not to, EOS only helps).
    `mode`: `disabled` (no restart, no helper: a peer's routes go with its session), `helper`
    (keep a restarting peer's routes as stale, never announce restart oneself) or `enabled` (both).
    The times apply to `enabled`: how long peers wait for this switch, how long stale routes live."""

    mode: str
    restart_time_s: int
    stalepath_time_s: int


@record
class TierLinks:
    """How one kind of cable was laid: `leaf-spine`, `spine-superspine` (`per_pair` cables
    between each lower and upper device of a group), `server-leaf` (`per_pair` NICs per server)
    or `sm-leaf` (one HCA port per dedicated subnet-manager host)."""

    kind: str
    speed: int
    per_pair: int
    links: int


@record
class Pin:
    """A value the inventory pins on one device (`key` under its `nodes:` entry), and where:
    checks point at the pin, not at the tier's default."""

    device: str
    key: str
    path: str
    line: int
    column: int


@record
class JobInput:
    """One `jobs:` entry for `fabricgen analyze`, as written (the analyzer applies its schema
    defaults), with the positions of its keys (dotted, relative to the job; "" is the job)."""

    name: str
    settings: dict[str, Any]
    positions: dict[str, tuple[int, int]]


@record
class Plan:
    name: str
    description: str
    transport: str
    source: str
    devices: tuple[Device, ...]
    links: tuple[Link, ...]
    servers: tuple[Server, ...]
    roce: RocePolicy | None
    infiniband: InfinibandPlan | None
    services: Services
    bfd: bool
    bfd_interval_ms: int
    bfd_multiplier: int
    graceful_restart: GracefulRestart
    """BGP graceful restart on every switch (`bgp.graceful_restart`); docs/render.md says why the
    default is `disabled`."""
    pools: tuple[PoolUsage, ...]
    oversubscription: tuple[Oversubscription, ...]
    max_oversubscription: float
    models: tuple[Model, ...]
    platforms: tuple[Platform, ...]
    warnings: tuple[str, ...] = field(default=())
    pods: int = 0
    """Pods of a three-tier fabric; 0 for two tiers."""
    rails: int = 0
    """Rail leaves per scalable unit with rail attachment; 0 when servers attach to one leaf."""
    tier_links: tuple[TierLinks, ...] = ()
    """Per kind of cable: speed, cables per pair, number of cables (consumers need not count links)."""
    pins: tuple[Pin, ...] = ()
    jobs: tuple[JobInput, ...] = ()
    nics: tuple[NicModel, ...] = ()
    """The NIC models the servers use (from the catalog's `nics:`)."""
    host_mtu: int = 0
    """IP MTU of every server NIC: at most the smallest MTU of any switch-to-switch cable, since
    a server's traffic may cross any of them (0 on InfiniBand)."""
    during_change: float | None = None
    """`oversubscription.during_change`: the downlink:uplink ratio a change window holds (the
    deploy playbook's batches, drain.yml, `drain:`), None when the inventory says `false`."""
    control_plane: tuple[ControlPlaneAcl, ...] = ()
    """One control-plane ACL per platform that has one (none without allowed sources)."""
    cables: tuple[Cable, ...] = field(default=(), repr=False, compare=False)
    """Every link with its ends' hardware and physical items, in link order (the media pass's
    physical view of `links`, for the cabling plan, BOM and NetBox export): derived from
    `links`, so not compared and not written to the plan files."""

    def control_plane_acl(self, platform: str) -> ControlPlaneAcl | None:
        """The control-plane ACL of a platform's switches, or None."""
        return next((acl for acl in self.control_plane if acl.platform == platform), None)

    def device(self, name: str) -> Device:
        for device in self.devices:
            if device.name == name:
                return device
        raise KeyError(name)
