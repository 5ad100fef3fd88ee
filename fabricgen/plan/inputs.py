"""Typed inputs: one frozen view of the validated, defaulted inventory for the planner and checks.

Why a view and not the dict: `doc["uplinks"]["per_spnie"]` is a KeyError at run time, while
`inputs.uplinks.per_spnie` is a mypy error at `make check`. The view is built once, in the
pipeline, after `schema.validate_document` and `schema.apply_defaults`; every default comes
from schemas/fabric.schema.json through `apply_defaults`, so this module reads keys that have
a schema default with `section["key"]` and never writes a default literal of its own. Keys
without a schema default are `None` (or 0 / "" / () where the schema's meaning of "absent" is
"none", documented on the field) so the consumer decides what absence means, once.

Source positions stay reachable: every section and every list entry carries its `path`, the
key path into the inventory (`("leaves", "nodes", 0)`), and `Inputs.source` is the SourceMap,
so a diagnostic can point at `leaves.nodes[0].asn` rather than at the tier default:

>>> view = inputs_of(_example(), SourceMap("f.yml", {("leaves", "nodes", 0, "asn"): (9, 27)}))
>>> pin = view.leaves.nodes[0]
>>> pin.asn, view.source.diagnostic((*pin.path, "asn"), "taken").line
(65555, 9)
>>> view.uplinks.per_spine, view.bgp.superspine_asn, view.superspines is None
(1, 64900, True)

Two sections stay mappings on purpose: `models:` (the catalog parses model entries into
`Model`, with the same code as the bundled catalog) and `jobs:` (the analyzer owns its job
model, and each job travels as a `JobInput` with its key positions).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from fabricgen.core.records import record
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.inventory.schema import apply_defaults


@record
class NodePin:
    """One `<tier>.nodes` entry: the values it pins (None: not pinned) and its position."""

    path: PathKey
    index: int
    name: str | None
    model: str | None
    platform: str | None
    management: str | None
    serial: str | None
    guid: str | None
    asn: int | None
    loopback: str | None
    pod: int | None
    plane: int | None


@record
class TierInput:
    """`spines:`, `leaves:` or `superspines:`. `count` 0: only the pinned nodes (schema: no default)."""

    path: PathKey
    count: int
    model: str
    platform: str | None
    name: str
    nodes: tuple[NodePin, ...]
    per_spine: int | None
    """Super-spines only: cables between each spine and super-spine (schema default)."""
    speed: str | None
    """Super-spines only: spine-superspine link speed; None: the spine model's speed."""


@record
class FabricInput:
    name: str
    description: str
    transport: str


@record
class UplinksInput:
    per_spine: int
    speed: str | None
    first_port: int | None


@record
class ServersInput:
    per_leaf: int
    ports_per_server: int
    speed: str | None
    name: str
    vlan: int
    attachment: str
    rails: int | None
    nic: str
    """Catalog NIC model of the servers' ports (schema default)."""


@record
class AddressingInput:
    """`addressing:`; required for RoCE, absent for InfiniBand (`Inputs.addressing` is None)."""

    loopbacks: str
    fabric: str
    servers: str | None
    server_mode: str
    management: str | None
    management_gateway: str | None

    def prefix(self, pool: str) -> str | None:
        """The prefix of pool `pool` ("loopbacks", "fabric", "servers", "management") by name."""
        value: str | None = getattr(self, pool)
        return value


@record
class BgpInput:
    spine_asn: int
    leaf_asn: int
    superspine_asn: int
    maximum_paths: int | None
    bfd: bool
    bfd_interval_ms: int
    bfd_multiplier: int
    aggregate_server_prefixes: bool = False
    graceful_restart: str = "disabled"
    graceful_restart_time_s: int = 120
    graceful_stalepath_time_s: int = 300


@record
class EcnInput:
    enabled: bool
    min: str
    max: str
    probability: int


@record
class WatchdogInput:
    enabled: bool
    timeout_ms: int
    recovery_ms: int
    polling_ms: int


@record
class RoceInput:
    no_drop_priority: int
    dscp_data: int
    dscp_cnp: int
    cnp_traffic_class: int | None
    ecn: EcnInput
    pfc_watchdog: WatchdogInput
    bandwidth_percent: int
    mtu: int | None
    dcbx: bool = False
    load_balancing: str = "hash"


@record
class CableOverride:
    path: PathKey
    device: str
    interface: str
    length: str


@record
class CablingInput:
    length: Mapping[str, str]
    """Default length per cable kind ("leaf-spine", "server-leaf", "spine-superspine")."""
    overrides: tuple[CableOverride, ...]


@record
class SubnetManagerInput:
    path: PathKey
    host: str
    priority: int
    guid: str | None
    management: str | None
    node_guid: str | None
    leaf: str | None
    port: int | None


@record
class RoutingInput:
    engine: str
    lmc: int
    no_fallback: bool


@record
class PartitionInput:
    path: PathKey
    name: str
    pkey: int
    members: tuple[str, ...]
    membership: str
    ipoib: bool
    mtu: int
    rate: int | None
    sl: int | None


@record
class IbQosInput:
    enabled: bool
    max_vls: int
    sl2vl: tuple[int, ...] | None
    vlarb_high: str | None
    vlarb_low: str | None
    high_limit: int


@record
class DefaultPartitionInput:
    membership: str | None
    ipoib: bool


@record
class OpensmInput:
    config_dir: str
    log_dir: str
    log_flags: int
    sweep_interval: int
    sminfo_polling_timeout: int
    polling_retry_number: int
    congestion_control: bool
    cc_threshold: int
    cc_marking_rate: int
    sharp: bool
    adaptive_routing: bool
    adaptive_routing_engine: str
    implementation: str = "opensm"
    version: str = ""
    protection: bool = True
    m_key_protection_level: int = 1
    m_key_lease_period: int = 60


@record
class GuidPin:
    """One `guids:` entry: a node GUID (a switch's, or NIC 1's adapter's), the node GUIDs of a
    server's adapters in NIC order, and the port GUIDs imported so far."""

    node: str
    ports: tuple[str, ...]
    nodes: tuple[str, ...] = ()


@record
class ServicesInput:
    ntp: tuple[str, ...]
    syslog: tuple[str, ...]
    dns: tuple[str, ...]
    domain: str | None
    timezone: str | None


@record
class ManagementInput:
    """`management:`: who may manage the switches. `allowed_sources` is None when absent: the
    control-plane pass (plan/passes/control_plane.py) then allows the management pool."""

    allowed_sources: tuple[str, ...] | None


@record
class DrainInput:
    """One switch to drain; `path` is its `drain[i]` key, empty when it came from `--drain`."""

    name: str
    path: PathKey


@record
class Inputs:
    """The whole inventory, typed. Sections the schema does not fill in are None when absent."""

    source: SourceMap
    fabric: FabricInput
    spines: TierInput
    leaves: TierInput
    superspines: TierInput | None
    pods: int
    """`pods.count`: 0 for a two-tier fabric."""
    uplinks: UplinksInput
    servers: ServersInput
    addressing: AddressingInput | None
    bgp: BgpInput
    roce: RoceInput
    max_oversubscription: float
    cabling: CablingInput
    services: ServicesInput
    subnet_managers: tuple[SubnetManagerInput, ...]
    routing: RoutingInput
    guid_prefix: str
    partitions: tuple[PartitionInput, ...]
    qos: IbQosInput
    default_partition: DefaultPartitionInput
    opensm: OpensmInput
    guids: Mapping[str, GuidPin]
    models: Mapping[str, Any]
    jobs: Mapping[str, Mapping[str, Any]]
    ratio_during_change: bool = False
    """`oversubscription.during_change`: the change window's batches hold `max_ratio` too."""
    drain: tuple[DrainInput, ...] = ()
    """Switches drained in the plan: `drain:` entries, then `--drain` names (docs/drain.md)."""
    drain_max_ratio: float = 1.5
    """`oversubscription.drain_max_ratio`: the downlink:uplink ratio no switch may pass while drained
    switches carry nothing."""
    management: ManagementInput = ManagementInput(None)
    """`management:` (the control-plane ACL's allowed sources)."""

    @property
    def routed(self) -> bool:
        """RoCE: IP-routed, BGP, QoS; InfiniBand: the subnet manager routes."""
        return self.fabric.transport == "roce"


def inputs_of(doc: Mapping[str, Any], source: SourceMap) -> Inputs:
    """The typed view of `doc`, which must be schema-valid with `apply_defaults` applied."""
    fabric, superspines = doc["fabric"], doc.get("superspines")
    return Inputs(
        source=source,
        fabric=FabricInput(fabric["name"], fabric["description"], fabric["transport"]),
        spines=_tier(doc["spines"], "spines"),
        leaves=_tier(doc["leaves"], "leaves"),
        superspines=_tier(superspines, "superspines") if superspines is not None else None,
        pods=doc["pods"]["count"],
        uplinks=_uplinks(doc["uplinks"]),
        servers=_servers(doc["servers"]),
        addressing=_addressing(doc["addressing"]) if "addressing" in doc else None,
        bgp=_bgp(doc["bgp"]),
        roce=_roce(doc["roce"]),
        max_oversubscription=float(doc["oversubscription"]["max_ratio"]),
        ratio_during_change=bool(doc["oversubscription"]["during_change"]),
        cabling=_cabling(doc["cabling"]),
        services=_services(doc["services"]),
        subnet_managers=tuple(_subnet_manager(sm, i) for i, sm in enumerate(doc.get("subnet_managers", []))),
        routing=RoutingInput(doc["routing"]["engine"], doc["routing"]["lmc"], doc["routing"]["no_fallback"]),
        guid_prefix=doc["guid_prefix"],
        partitions=tuple(_partition(p, i) for i, p in enumerate(doc.get("partitions", []))),
        qos=_ib_qos(doc["qos"]),
        default_partition=DefaultPartitionInput(doc["default_partition"].get("membership"), doc["default_partition"]["ipoib"]),
        opensm=_opensm(doc["opensm"]),
        guids={
            name: GuidPin(pin["node"], tuple(pin.get("ports", [])), tuple(pin.get("nodes", [])))
            for name, pin in doc.get("guids", {}).items()
        },
        models=doc.get("models", {}),
        jobs=doc.get("jobs") or {},
        drain=tuple(DrainInput(name, ("drain", i)) for i, name in enumerate(doc.get("drain", []))),
        drain_max_ratio=float(doc["oversubscription"]["drain_max_ratio"]),
        management=_management(doc.get("management") or {}),
    )


def _management(management: Mapping[str, Any]) -> ManagementInput:
    sources = management.get("allowed_sources")
    return ManagementInput(tuple(sources) if sources is not None else None)


def with_drained(inputs: Inputs, names: Sequence[str]) -> Inputs:
    """`inputs` with switches drained from the command line (`--drain`) after the inventory's own,
    each once; their diagnostics name the option, since no inventory key holds them."""
    known = {entry.name for entry in inputs.drain}
    added = tuple(DrainInput(name, ()) for name in dict.fromkeys(names) if name not in known)
    return dataclasses.replace(inputs, drain=inputs.drain + added) if added else inputs


def default_subnet_manager(fabric: str) -> SubnetManagerInput:
    """The one OpenSM host of an InfiniBand fabric without `subnet_managers:`, `<fabric>-sm1`,
    with the schema's defaults (`priority`)."""
    entry = apply_defaults({"subnet_managers": [{"host": f"{fabric}-sm1"}]})["subnet_managers"][0]
    return _subnet_manager(entry, 0)


def _tier(tier: Mapping[str, Any], key: str) -> TierInput:
    return TierInput(
        path=(key,),
        count=tier.get("count") or 0,
        model=tier["model"],
        platform=tier.get("platform"),
        name=tier["name"],
        nodes=tuple(_node(node, (key, "nodes", i)) for i, node in enumerate(tier.get("nodes", []))),
        per_spine=tier.get("per_spine"),
        speed=tier.get("speed"),
    )


def _node(node: Mapping[str, Any], path: PathKey) -> NodePin:
    get = node.get
    return NodePin(
        path,
        node["index"],
        get("name"),
        get("model"),
        get("platform"),
        get("management"),
        get("serial"),
        get("guid"),
        get("asn"),
        get("loopback"),
        get("pod"),
        get("plane"),
    )


def _uplinks(uplinks: Mapping[str, Any]) -> UplinksInput:
    return UplinksInput(uplinks["per_spine"], uplinks.get("speed"), uplinks.get("first_port"))


def _servers(servers: Mapping[str, Any]) -> ServersInput:
    return ServersInput(
        per_leaf=servers["per_leaf"],
        ports_per_server=servers["ports_per_server"],
        speed=servers.get("speed"),
        name=servers["name"],
        vlan=servers["vlan"],
        attachment=servers["attachment"],
        rails=servers.get("rails"),
        nic=servers["nic"],
    )


def _addressing(addressing: Mapping[str, Any]) -> AddressingInput:
    get = addressing.get
    return AddressingInput(
        addressing["loopbacks"],
        addressing["fabric"],
        get("servers"),
        addressing["server_mode"],
        get("management"),
        get("management_gateway"),
    )


def _bgp(bgp: Mapping[str, Any]) -> BgpInput:
    return BgpInput(
        spine_asn=bgp["spine_asn"],
        leaf_asn=bgp["leaf_asn"],
        superspine_asn=bgp["superspine_asn"],
        maximum_paths=bgp.get("maximum_paths"),
        bfd=bool(bgp["bfd"]),
        bfd_interval_ms=bgp["bfd_interval_ms"],
        bfd_multiplier=bgp["bfd_multiplier"],
        aggregate_server_prefixes=bool(bgp.get("aggregate_server_prefixes")),
        graceful_restart=bgp["graceful_restart"]["mode"],
        graceful_restart_time_s=bgp["graceful_restart"]["restart_time"],
        graceful_stalepath_time_s=bgp["graceful_restart"]["stalepath_time"],
    )


def _roce(roce: Mapping[str, Any]) -> RoceInput:
    ecn, dog = roce["ecn"], roce["pfc_watchdog"]
    return RoceInput(
        no_drop_priority=roce["no_drop_priority"],
        dscp_data=roce["dscp"]["data"],
        dscp_cnp=roce["dscp"]["cnp"],
        cnp_traffic_class=roce.get("cnp_traffic_class"),
        ecn=EcnInput(ecn["enabled"], ecn["min"], ecn["max"], ecn["probability"]),
        pfc_watchdog=WatchdogInput(dog["enabled"], dog["timeout_ms"], dog["recovery_ms"], dog["polling_ms"]),
        bandwidth_percent=roce["bandwidth_percent"],
        mtu=roce.get("mtu"),
        dcbx=bool(roce.get("dcbx", False)),
        load_balancing=str(roce.get("load_balancing", "hash")),
    )


def _cabling(cabling: Mapping[str, Any]) -> CablingInput:
    overrides = tuple(
        CableOverride(("cabling", "overrides", i), o["device"], o["interface"], o["length"])
        for i, o in enumerate(cabling.get("overrides", []))
    )
    return CablingInput(dict(cabling["length"]), overrides)


def _services(services: Mapping[str, Any]) -> ServicesInput:
    return ServicesInput(
        tuple(services.get("ntp", [])),
        tuple(services.get("syslog", [])),
        tuple(services.get("dns", [])),
        services.get("domain"),
        services.get("timezone"),
    )


def _subnet_manager(sm: Mapping[str, Any], position: int) -> SubnetManagerInput:
    get = sm.get
    return SubnetManagerInput(
        ("subnet_managers", position),
        sm["host"],
        sm["priority"],
        get("guid"),
        get("management"),
        get("node_guid"),
        get("leaf"),
        get("port"),
    )


def _partition(part: Mapping[str, Any], position: int) -> PartitionInput:
    return PartitionInput(
        path=("partitions", position),
        name=part["name"],
        pkey=part["pkey"],
        members=tuple(part["members"]),
        membership=part["membership"],
        ipoib=part["ipoib"],
        mtu=part["mtu"],
        rate=part.get("rate"),
        sl=part.get("sl"),
    )


def _ib_qos(qos: Mapping[str, Any]) -> IbQosInput:
    sl2vl = qos.get("sl2vl")
    return IbQosInput(
        qos["enabled"], qos["max_vls"], tuple(sl2vl) if sl2vl else None, qos.get("vlarb_high"), qos.get("vlarb_low"), qos["high_limit"]
    )


def _opensm(opensm: Mapping[str, Any]) -> OpensmInput:
    cc, ar = opensm["congestion_control"], opensm["adaptive_routing"]
    return OpensmInput(
        config_dir=opensm["config_dir"],
        log_dir=opensm["log_dir"],
        log_flags=opensm["log_flags"],
        sweep_interval=opensm["sweep_interval"],
        sminfo_polling_timeout=opensm["sminfo_polling_timeout"],
        polling_retry_number=opensm["polling_retry_number"],
        congestion_control=cc["enabled"],
        cc_threshold=cc["threshold"],
        cc_marking_rate=cc["marking_rate"],
        sharp=opensm["sharp"]["enabled"],
        adaptive_routing=ar["enabled"],
        adaptive_routing_engine=ar["engine"],
        implementation=opensm["implementation"],
        version=str(opensm.get("version", "")),
        protection=opensm["protection"]["enabled"],
        m_key_protection_level=opensm["protection"]["m_key_protection_level"],
        m_key_lease_period=opensm["protection"]["m_key_lease_period"],
    )


def _example() -> dict[str, Any]:
    """A small defaulted inventory for the doctests."""
    return apply_defaults(
        {
            "fabric": {"name": "f"},
            "spines": {"count": 2, "model": "arista-7060dx5-64s"},
            "leaves": {"count": 2, "model": "arista-7060dx5-64s", "nodes": [{"index": 1, "asn": 65555}]},
            "addressing": {"loopbacks": "10.0.0.0/24", "fabric": "10.1.0.0/16"},
        }
    )
