"""What the rendered configs mean on the wire, read back with hier-config (docs/render.md):
EOS queue scheduling, MTU agreement along every path, AS-path multipath relaxation where the
ASN design needs it, PFC headroom per port. Expected values come from vendor facts written
here (EOS default DSCP map, platform MTU maxima) or from an independent calculation.
"""

from __future__ import annotations

import csv
import dataclasses
import io
import ipaddress
import math
import re
from pathlib import Path
from typing import cast

import pytest
import yaml
from hier_config import HConfig, Platform, get_hconfig

from fabricgen.checks.mtu import check_mtu
from fabricgen.core.diagnostics import FabricError
from fabricgen.core.model import Device, Plan
from fabricgen.inventory.loader import load_inventory
from fabricgen.pipeline import load_and_plan
from fabricgen.plan.inputs import Inputs
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from tests.conftest import ROOT
from tests.render_cases import device_configs, inventory_ids, rendered

EOS_BEST_EFFORT_TC = 1
"""EOS default DSCP map: DSCP 0-7 -> traffic class 1 (8-15 -> 0), so unmarked traffic is TC1."""
PLATFORM_MTU_MAX = {"eos": 9214, "nxos": 9216}
_NO_INPUTS = cast(Inputs, None)
"""check_mtu reads the plan only."""
HIER = {"eos": Platform.ARISTA_EOS, "nxos": Platform.CISCO_NXOS}


def _parsed(inventory: str) -> dict[str, tuple[str, HConfig]]:
    return {d.name: (d.platform, get_hconfig(HIER[d.platform], text)) for d, text in device_configs(inventory)}


def _lines(config: HConfig, parent: str) -> list[str]:
    child = config.get_child(equals=parent)
    assert child is not None, parent
    return [c.text for c in child.children]


EOS_CASES = [(i, d.name) for i in inventory_ids() for d, _ in device_configs(i) if d.platform == "eos"][::7]


@pytest.mark.parametrize(("inventory", "name"), EOS_CASES)
def test_eos_queues_are_round_robin_except_cnp(inventory: str, name: str) -> None:
    """All eight queues are listed: RoCE and default traffic share the port round-robin (`no
    priority`: Trident/Tomahawk queues are strict by default), CNP and network control (class 7)
    alone are strict, and the shares add up to 100 (tests/test_render_scheduler.py derives the
    scheduler in effect by the vendor's rule)."""
    plan, _ = rendered(inventory)
    roce = plan.roce
    assert roce is not None
    text = next(t for d, t in device_configs(inventory) if d.name == name)
    config = get_hconfig(Platform.ARISTA_EOS, text)
    profile = config.get_child(startswith="qos profile ")
    assert profile is not None
    queues = {q.text.split()[-1]: [c.text for c in q.children] for q in profile.children if "tx-queue" in q.text}
    assert sorted(queues) == [str(q) for q in range(8)]
    data, strict = str(roce.no_drop_priority), {str(roce.cnp_traffic_class["eos"]), "7"}
    best_effort = str(EOS_BEST_EFFORT_TC)
    shares = {}
    for queue, lines in queues.items():
        if queue in strict:
            assert lines == ["priority strict"], (queue, lines)
            continue
        assert lines[0] == "no priority", (queue, lines)
        assert not any("guaranteed" in line for line in lines)
        shares[queue] = sum(int(line.split()[-1]) for line in lines if line.startswith("bandwidth percent "))
    assert shares[data] == roce.bandwidth_percent
    assert shares[best_effort] == 100 - roce.bandwidth_percent
    assert sum(shares.values()) == 100
    pfc = [c.text for c in profile.children if c.text.startswith("priority-flow-control")]
    assert "priority-flow-control pause watchdog port action drop" not in pfc


def test_eos_queue_keyword_follows_the_silicon() -> None:
    """Tomahawk 4/5 (Trident family: separate unicast queues) print `uc-tx-queue`, Jericho `tx-queue`."""
    catalog = yaml.safe_load((ROOT / "fabricgen" / "data" / "catalog.yml").read_text())["models"]
    seen = set()
    for inventory in inventory_ids():
        family = {m.name: m.queue_family for m in rendered(inventory)[0].models}
        for device, text in device_configs(inventory):
            if device.platform != "eos":
                continue
            description = catalog.get(device.model, {}).get("description", "")
            keyword = "tx-queue" if family[device.model] == "jericho" else "uc-tx-queue"
            assert re.search(rf"^   {keyword} \d+$", text, re.M), device.name
            if "Tomahawk" in description:
                assert keyword == "uc-tx-queue"
            seen.add(keyword)
    assert seen == {"uc-tx-queue", "tx-queue"}


def _interface_mtus(parsed: dict[str, tuple[str, HConfig]]) -> dict[tuple[str, str], int]:
    result = {}
    for name, (_, config) in parsed.items():
        for child in config.children:
            if child.text.startswith("interface "):
                mtu = [int(c.text.split()[1]) for c in child.children if c.text.startswith("mtu ")]
                if mtu:
                    result[(name, child.text.removeprefix("interface "))] = mtu[0]
    return result


@pytest.mark.parametrize("inventory", ["inventories/pod-mixed", "tests/goldens/inventories/tiny-nxos"])
def test_mtu_agrees_along_every_path(inventory: str) -> None:
    """Both ends of every cable print the same MTU, no larger than either platform accepts, and the
    host NIC table (hosts.csv) sets an MTU no larger than the smallest switch-to-switch cable (pod-mixed: EOS
    spines 9214 against NX-OS leaves 9216, so 9214 everywhere)."""
    plan, files = rendered(inventory)
    parsed = _parsed(inventory)
    mtus = _interface_mtus(parsed)
    platform = {d.name: d.platform for d in plan.devices}
    fabric = []
    for link in plan.links:
        ends = [(e.device, e.interface) for e in (link.a, link.z) if e.device in platform]
        values = {mtus[end] for end in ends}
        assert len(values) == 1, (link.a, link.z, values)
        if link.kind != "server-leaf":
            (value,) = values
            assert value <= min(PLATFORM_MTU_MAX[platform[e.device]] for e in (link.a, link.z))
            fabric.append(value)
    host = {int(row["mtu"]) for row in csv.DictReader(io.StringIO(files["hosts.csv"]))}
    assert host and max(host) <= min(fabric)
    if any(p == "eos" for p in platform.values()):
        assert max(host) <= PLATFORM_MTU_MAX["eos"]


def test_check_mtu_refuses_mismatched_ends_and_large_hosts() -> None:
    """The check fails on a plan whose host MTU exceeds a fabric cable or whose cable ends differ."""
    inventory = ROOT / "inventories" / "pod-mixed"
    plan = load_and_plan(inventory).plan
    source = load_inventory(inventory, "fabric.yml").source
    assert list(check_mtu(plan, _NO_INPUTS, source)) == []
    too_big = dataclasses.replace(plan, host_mtu=9216)
    assert any("host MTU 9216" in d.message for d in check_mtu(too_big, _NO_INPUTS, source))
    spine = next(d for d in plan.devices if d.role == "spine")
    changed = dataclasses.replace(spine, interfaces=tuple(dataclasses.replace(i, mtu=9216) for i in spine.interfaces))
    mismatched = dataclasses.replace(plan, devices=tuple(changed if d.name == spine.name else d for d in plan.devices))
    messages = [d.message for d in check_mtu(mismatched, _NO_INPUTS, source)]
    assert any("different MTUs" in m and spine.name in m for m in messages), messages


def test_check_mtu_refuses_equal_ends_above_the_platform_maximum_and_unknown_ports() -> None:
    """Ends that agree are still refused above their platform's maximum (EOS 9214, NX-OS 9216 in
    platforms/<os>/platform.yml), and a cable end naming no port of its switch has no MTU to agree with."""
    inventory = ROOT / "inventories" / "pod-mixed"
    plan = load_and_plan(inventory).plan
    source = load_inventory(inventory, "fabric.yml").source
    link = next(link for link in plan.links if link.kind == "leaf-spine")
    ends = {(link.a.device, link.a.interface), (link.z.device, link.z.interface)}

    def raised(device: Device) -> Device:
        ports = tuple(dataclasses.replace(i, mtu=9300) if (device.name, i.name) in ends else i for i in device.interfaces)
        return dataclasses.replace(device, interfaces=ports)

    above = dataclasses.replace(plan, devices=tuple(raised(d) for d in plan.devices))
    messages = [d.message for d in check_mtu(above, _NO_INPUTS, source)]
    assert any(m.startswith("1 cable(s)") and f"{link.a.device} {link.a.interface} (9300)" in m for m in messages), messages
    moved = dataclasses.replace(link, z=dataclasses.replace(link.z, interface="Ethernet99/9"))
    dangling = dataclasses.replace(plan, links=tuple(moved if item is link else item for item in plan.links))
    messages = [d.message for d in check_mtu(dangling, _NO_INPUTS, source)]
    assert any(m.startswith("1 cable(s)") and "Ethernet99/9 (None)" in m for m in messages), messages


THREE_TIER_NXOS = """
fabric: {name: t3, transport: roce}
pods: {count: 2}
leaves: {count: 2, model: cisco-n9k-9364d-gx2a, platform: nxos, name: "t3-p{pod}-leaf{index}"}
spines: {count: 2, model: cisco-n9k-9332d-gx2b, platform: nxos, name: "t3-p{pod}-spine{index}"}
superspines: {count: 2, model: cisco-n9k-9332d-gx2b, platform: nxos, name: "t3-ss{plane}-{index}", per_spine: 1, speed: 400G}
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 2, ports_per_server: 2, speed: 100G}
addressing: {loopbacks: 10.40.0.0/20, fabric: 10.64.0.0/14, servers: 10.128.0.0/16, management: 192.168.0.0/20}
bgp: {superspine_asn: 65100, spine_asn: 65200, leaf_asn: 65300}
"""


def _three_tier(tmp_path: Path, platform: str) -> tuple[Plan, dict[str, str]]:
    text = THREE_TIER_NXOS
    if platform == "eos":
        text = text.replace("cisco-n9k-9364d-gx2a", "arista-7060dx5-64s").replace("cisco-n9k-9332d-gx2b", "arista-7060dx5-64s")
        text = text.replace("platform: nxos", "platform: eos")
    (tmp_path / "fabric.yml").write_text(text)
    try:
        plan = load_and_plan(tmp_path).plan
    except FabricError as error:  # pragma: no cover - shows the diagnostics when the fixture breaks
        raise AssertionError(str(error)) from error
    return plan, render_files(plan, RenderContext())


def _relax_lines(platform: str, config: HConfig, asn: int) -> list[str]:
    """The AS-path relaxation lines under `router bgp`: EOS `bgp bestpath as-path
    multipath-relax`, NX-OS `bestpath as-path multipath-relax` (vendor syntax, docs/render.md)."""
    expected = {"eos": "bgp bestpath as-path multipath-relax", "nxos": "bestpath as-path multipath-relax"}[platform]
    return [line for line in _lines(config, f"router bgp {asn}") if "multipath-relax" in line and line == expected]


@pytest.mark.parametrize("platform", ["nxos", "eos"])
def test_multipath_relax_where_planes_differ(tmp_path: Path, platform: str) -> None:
    """Super-spine planes with their own ASN give a leaf's remote prefixes one AS_PATH per plane:
    the leaf must multipath across them, so both platforms print the relaxation line (EOS too:
    no reliance on a default). Super-spines and spines (one ASN per tier above) print nothing."""
    plan, files = _three_tier(tmp_path, platform)
    asns_per_plane = {d.asn for d in plan.devices if d.role == "superspine"}
    assert len(asns_per_plane) > 1
    for device in plan.devices:
        config = get_hconfig(HIER[platform], files[f"configs/{device.name}.cfg"])
        assert len(_relax_lines(platform, config, device.asn)) == (device.role == "leaf"), device.name


TWO_TIER_PINNED_SPINE = """
fabric: {name: pin, transport: roce}
leaves: {count: 3, model: MODEL, platform: PLATFORM, name: "pin-leaf{index}"}
spines: {count: 2, model: MODEL, platform: PLATFORM, name: "pin-spine{index}", nodes: [{index: 2, asn: 65010}]}
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 2, ports_per_server: 1, speed: 400G}
addressing: {loopbacks: 10.40.0.0/24, fabric: 10.64.0.0/20, servers: 10.128.0.0/20, management: 192.168.0.0/24}
bgp: {spine_asn: 65000, leaf_asn: 65100}
"""


@pytest.mark.parametrize(("platform", "model"), [("eos", "arista-7060dx5-64s"), ("nxos", "cisco-n9k-9364d-gx2a")])
def test_multipath_relax_where_spines_carry_different_asns(tmp_path: Path, platform: str, model: str) -> None:
    """A two-tier fabric with one spine pinned to another ASN: every leaf reaches the other leaves
    over `65000 <leaf>` and `65010 <leaf>`, two AS_PATHs of one length, so every leaf relaxes; a
    spine reaches each leaf through that leaf alone and does not. Without the pin nothing relaxes."""
    for pinned in (True, False):
        text = TWO_TIER_PINNED_SPINE.replace("MODEL", model).replace("PLATFORM", platform)
        if not pinned:
            text = text.replace(", nodes: [{index: 2, asn: 65010}]", "")
        (tmp_path / "fabric.yml").write_text(text)
        plan = load_and_plan(tmp_path).plan
        files = render_files(plan, RenderContext())
        for device in plan.devices:
            config = get_hconfig(HIER[platform], files[f"configs/{device.name}.cfg"])
            assert len(_relax_lines(platform, config, device.asn)) == (pinned and device.role == "leaf"), (pinned, device.name)


def _expected_headroom(length_m: float, speed_gbps: int, mtu: int) -> int:
    """Independent arithmetic: two frames of MTU + 38 bytes, an 84-byte PFC frame, a round trip
    at 5.13 ns/m and a 1,160 ns peer response, all at speed/8 bytes per ns."""
    wire = 2 * length_m * 5.13 + 1160
    return math.ceil(2 * (mtu + 38) + 84 + wire * speed_gbps / 8)


def test_headroom_in_the_readme_follows_each_cable() -> None:
    """cluster-3tier: the 150 m 800G spine-super-spine ports need more headroom than the 30 m
    400G leaf-spine ports, and each README row equals the calculation from its cable."""
    plan, files = rendered("inventories/cluster-3tier")
    readme, per_switch = files["README.md"].split("### PFC headroom", 1)[1].split("Per switch", 1)
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in readme.splitlines() if line.startswith("| ") and "---" not in line]
    table = {r[0]: r for r in rows[1:]}
    assert set(table) == {"leaf-spine", "server-leaf", "spine-superspine"}
    for kind, speed, length, mtu, headroom, _ in table.values():
        assert int(headroom) == _expected_headroom(float(length), int(speed), int(mtu)), kind
    assert table["spine-superspine"][1:3] == ["800", "150"]
    assert int(table["spine-superspine"][4]) > int(table["leaf-spine"][4])
    ports = sum(1 for d in plan.devices for i in d.interfaces if i.roce)
    assert sum(int(r[5]) for r in table.values()) == ports
    # per switch, the largest need: spines and super-spines hold the 150 m 800G figure, leaves the larger of their cables'
    long_haul = _expected_headroom(150, 800, int(table["spine-superspine"][3]))
    roles = {role: sum(1 for d in plan.devices if d.role == role) for role in ("leaf", "spine", "superspine")}
    leaf_need = max(int(table["leaf-spine"][4]), int(table["server-leaf"][4]))
    assert f"| eos | 3 | {long_haul} | {roles['spine'] + roles['superspine']} |" in per_switch
    assert f"| eos | 3 | {leaf_need} | {roles['leaf']} |" in per_switch
    assert "- eos: not configured by fabricgen" in per_switch


@pytest.mark.parametrize(
    "inventory", ["inventories/pod-mixed", "tests/goldens/inventories/tiny-nxos", "tests/goldens/inventories/tiny-eos"]
)
def test_route_limit_holds_every_fabric_prefix(inventory: str) -> None:
    """Every peer group / template carries a route limit at least the fabric's own prefixes (one
    loopback per switch, one per server NIC in p2p mode or per leaf VLAN in subnet mode)."""
    plan, _ = rendered(inventory)
    subnet_mode = any(i.role == "svi" for d in plan.devices for i in d.interfaces)
    nics = sum(len(s.nics) for s in plan.servers)
    leaves = sum(1 for d in plan.devices if d.role == "leaf")
    routes = len(plan.devices) + (leaves if subnet_mode else nics)
    for name, (platform, config) in _parsed(inventory).items():
        text = "\n".join(c.cisco_style_text() for c in config.all_children())
        pattern = r"neighbor \S+ maximum-routes (\d+)" if platform == "eos" else r"maximum-prefix (\d+)"
        limits = [int(n) for n in re.findall(pattern, text)]
        groups = len(re.findall(r"neighbor \S+ peer group$" if platform == "eos" else r"template peer \S+$", text, re.M))
        assert len(limits) == groups > 0, name
        assert min(limits) >= routes, name


def test_eos_counts_ecn_marks_and_samples_roce_ports_every_two_seconds() -> None:
    """EOS counts ECN marks only with `random-detect ecn count` in the queue, and its RoCE ports get
    `load-interval 2` (the AMD ROCm EOS example) so rate counters show bursts."""
    for device, text in device_configs("inventories/pod-roce-400g"):
        config = get_hconfig(Platform.ARISTA_EOS, text)
        profile = config.get_child(startswith="qos profile ")
        assert profile is not None
        ecn_queues = [q for q in profile.children if any(c.text.startswith("random-detect ecn minimum") for c in q.children)]
        assert ecn_queues and all(q.get_child(equals="random-detect ecn count") for q in ecn_queues), device.name
        for interface in device.interfaces:
            if interface.roce:
                assert "load-interval 2" in _lines(config, f"interface {interface.name}"), interface.name


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_one_aggregate_per_leaf_covers_its_servers(tmp_path: Path, platform: str) -> None:
    """`bgp.aggregate_server_prefixes`: each leaf prints one `aggregate-address … summary-only` under
    its BGP process covering every server address behind it (and no other leaf's); spines none."""
    from tests.fabrics import fabric, write

    models = {"eos": ("arista-7060dx5-64s", "arista-7060dx5-64s"), "nxos": ("cisco-n9k-9364d-gx2a", "cisco-n9k-9332d-gx2b")}[platform]
    doc = fabric(
        leaves={"model": models[0], "platform": platform},
        spines={"model": models[1], "platform": platform},
        bgp={"aggregate_server_prefixes": True},
    )
    plan = load_and_plan(write(tmp_path, doc)).plan
    files = render_files(plan, RenderContext())
    servers_of: dict[str, list[str]] = {}
    for server in plan.servers:
        for nic in server.nics:
            servers_of.setdefault(nic.leaf, []).append(nic.address)
    aggregates = {}
    for device in plan.devices:
        config = get_hconfig(HIER[platform], files[f"configs/{device.name}.cfg"])
        bgp = config.get_child(equals=f"router bgp {device.asn}")
        assert bgp is not None
        found = [
            c.text.split()[1] for c in bgp.all_children() if c.text.startswith("aggregate-address ") and c.text.endswith(" summary-only")
        ]
        if device.role == "leaf":
            assert len(found) == 1, device.name
            block = ipaddress.ip_network(found[0])
            assert all(ipaddress.ip_address(a) in block for a in servers_of[device.name])
            aggregates[device.name] = block
        else:
            assert found == [], device.name
    blocks = list(aggregates.values())
    assert not any(a.overlaps(b) for i, a in enumerate(blocks) for b in blocks[i + 1 :])
    default = load_and_plan(write(tmp_path, fabric(), "plain.yml")).plan
    assert "aggregate-address" not in "".join(render_files(default, RenderContext()).values())


def test_nxos_ecmp_hash_includes_the_udp_ports() -> None:
    """RoCEv2 flows differ only in the UDP source port: the NX-OS ECMP hash must include L4 ports."""
    configs = [(d, get_hconfig(Platform.CISCO_NXOS, t)) for d, t in device_configs("tests/goldens/inventories/tiny-nxos")]
    for device, config in configs:
        assert config.get_child(equals="ip load-sharing address source-destination port source-destination"), device.name
