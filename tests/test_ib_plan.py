"""The InfiniBand plan and its checks: GUIDs (placeholders, pins, uniqueness), subnet-manager
placement, partition members, 1:1 leaves and spine radix, QoS tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.core.diagnostics import FabricError
from fabricgen.pipeline import load_and_plan
from tests.ib_helpers import IB_HDR, write_inventory

BASE = """\
fabric: {name: t, transport: infiniband}
spines: {count: 2, model: nvidia-qm8790, name: "t-spine{index}"}
leaves: {count: 2, model: nvidia-qm8790, name: "t-leaf{index}"}
uplinks: {per_spine: 3}
servers: {per_leaf: 4, name: "t-gpu{leaf_index}{index}"}
"""


def errors(tmp_path: Path, text: str) -> list[str]:
    with pytest.raises(FabricError) as info:
        load_and_plan(write_inventory(tmp_path, text))
    return [d.format() for d in info.value.diagnostics if d.is_error]


def test_example_plan() -> None:
    checked = load_and_plan(IB_HDR)
    plan = checked.plan
    ib = plan.infiniband
    assert ib is not None
    assert [(sm.host, sm.priority, sm.leaf, sm.leaf_port, sm.server) for sm in ib.subnet_managers] == [
        ("ib1-sm1", 15, "ib1-leaf01", 20, ""),
        ("ib1-sm2", 14, "ib1-leaf08", 20, ""),
    ]
    assert ib.max_op_vls == 4
    assert ib.default_membership == "limited"
    assert [(p.name, p.mtu_code, p.rate_code, p.sl, len(p.port_guids)) for p in ib.partitions] == [
        ("tenant-a", 5, 17, 1, 36),
        ("tenant-b", 5, 0, 0, 36),
        ("tenant-c", 5, 0, 0, 72),
    ]
    warnings = [d.message for d in checked.warnings]
    assert any("GUIDs of 12 switch, 144 server HCA, 2 subnet manager HCA node(s) are placeholders" in w for w in warnings)


def test_placeholder_guids_are_unique_and_stable_under_growth(tmp_path: Path) -> None:
    small = load_and_plan(write_inventory(tmp_path, BASE)).plan
    grown = load_and_plan(write_inventory(tmp_path, BASE.replace("leaves: {count: 2", "leaves: {count: 3"))).plan
    old = {d.name: d.guid for d in small.devices} | {s.name: s.nics[0].port_guid for s in small.servers}
    new = {d.name: d.guid for d in grown.devices} | {s.name: s.nics[0].port_guid for s in grown.servers}
    assert all(new[name] == guid for name, guid in old.items())
    assert len(set(new.values())) == len(new)


def test_multi_port_hcas_do_not_collide(tmp_path: Path) -> None:
    text = BASE.replace("uplinks: {per_spine: 3}", "uplinks: {per_spine: 9}").replace("per_leaf: 4,", "per_leaf: 1, ports_per_server: 16,")
    plan = load_and_plan(write_inventory(tmp_path, text)).plan
    # 2 servers x 16 adapters, each with a node GUID and a port GUID.
    guids = [g for s in plan.servers for n in s.nics for g in (n.node_guid, n.port_guid)]
    assert len(set(guids)) == len(guids) == 64


def test_every_nic_is_its_own_hca(tmp_path: Path) -> None:
    """An HGX server's 8 ConnectX-7s are 8 HCAs: 8 node GUIDs, 8 node-name-map lines "<host> mlx5_N"."""
    text = BASE.replace("per_leaf: 4,", "per_leaf: 1, ports_per_server: 8,").replace("per_spine: 3", "per_spine: 4")
    checked = load_and_plan(write_inventory(tmp_path, text + "subnet_managers: [{host: t-gpu11, guid: '0x02fab00030008027'}]\n"))
    plan, ib = checked.plan, checked.plan.infiniband
    assert ib is not None
    gpu = next(s for s in plan.servers if s.name == "t-gpu11")
    # Placeholder base of leaf 1 server 1: prefix | 3 << 28 | (1 x 1024 + 1) << 5 = 0x02fab00030008020.
    assert [(n.node_guid, n.port_guid) for n in gpu.nics] == [
        (f"0x{0x02FAB00030008020 + 2 * k:016x}", f"0x{0x02FAB00030008021 + 2 * k:016x}") for k in range(8)
    ]
    names = {n.guid: n.name for n in ib.node_names}
    assert [names[n.node_guid] for n in gpu.nics] == [f"t-gpu11 mlx5_{k}" for k in range(8)]
    # The SM on the server's 4th adapter: its node GUID is that adapter's.
    assert (ib.subnet_managers[0].port_guid, ib.subnet_managers[0].node_guid) == ("0x02fab00030008027", "0x02fab00030008026")
    assert any("GUIDs of 4 switch, 16 server HCA node(s) are placeholders" in d.message for d in checked.warnings)


def test_guid_pins_replace_placeholders(tmp_path: Path) -> None:
    text = BASE + (
        "guids:\n"
        '  t-spine1: {node: "0xB8CEF60300000001"}\n'
        '  t-gpu11: {node: "0xb8cef60300001000", ports: ["0xb8cef60300001000"]}\n'
        '  t-sm1: {node: "0xb8cef60300002000"}\n'
        '  t-gpu99: {node: "0xb8cef60300003000"}\n'
    )
    checked = load_and_plan(write_inventory(tmp_path, text))
    assert any("guids.t-gpu99: 't-gpu99' is not a switch, server or SM host of the plan" in d.format() for d in checked.warnings)
    plan = checked.plan
    assert plan.device("t-spine1").guid == "0xb8cef60300000001"
    assert not plan.device("t-spine1").guid_is_placeholder
    gpu = next(s for s in plan.servers if s.name == "t-gpu11")
    assert (gpu.nics[0].node_guid, gpu.nics[0].port_guid) == ("0xb8cef60300001000", "0xb8cef60300001000")
    assert plan.infiniband is not None
    assert "t-gpu11" not in plan.infiniband.placeholder_hosts
    assert "t-gpu12" in plan.infiniband.placeholder_hosts
    assert plan.infiniband is not None
    sm = plan.infiniband.subnet_managers[0]
    assert (sm.host, sm.node_guid, sm.port_guid) == ("t-sm1", "0xb8cef60300002000", "0xb8cef60300002001")
    assert any("GUIDs of 3 switch, 7 server HCA node(s)" in d.message for d in checked.warnings)


def test_sm_on_a_server_uses_its_port_and_warns_about_isolation(tmp_path: Path) -> None:
    text = BASE + "subnet_managers: [{host: t-gpu11}]\npartitions: [{name: a, pkey: 1, members: [t-gpu1*]}]\n"
    checked = load_and_plan(write_inventory(tmp_path, text))
    assert checked.plan.infiniband is not None
    sm = checked.plan.infiniband.subnet_managers[0]
    gpu = next(s for s in checked.plan.servers if s.name == "t-gpu11")
    assert (sm.server, sm.port_guid, sm.leaf_port) == ("t-gpu11", gpu.nics[0].port_guid, 0)
    assert any("full member of every partition" in d.message for d in checked.warnings)


def test_bad_references_are_reported_together(tmp_path: Path) -> None:
    text = BASE + (
        "subnet_managers: [{host: sm-a, leaf: t-leaf9}]\npartitions: [{name: a, pkey: 1, members: [t-gpu1*, nobody*]}, {name: b, pkey: 1, members: [t-gpu2*]}]\n"
    )
    found = errors(tmp_path, text)
    assert any("subnet_managers[0].leaf: unknown leaf 't-leaf9' for subnet manager sm-a" in m for m in found)
    assert any("partitions[0].members[1]: 'nobody*' matches no server of the plan" in m for m in found)


def test_duplicate_pkey_and_guid(tmp_path: Path) -> None:
    text = BASE + (
        'guids:\n  t-spine1: {node: "0x0000000000000001"}\n  t-spine2: {node: "0x0000000000000001"}\n'
        "partitions: [{name: a, pkey: 1, members: [t-gpu1*]}, {name: b, pkey: 1, members: [t-gpu2*]}]\n"
    )
    found = errors(tmp_path, text)
    assert any("GUID 0x0000000000000001 is used by t-spine1, t-spine2" in m for m in found)
    assert any("P_Key 0x0001 of partition 'b' is used by another partition" in m for m in found)


def test_sm_port_taken(tmp_path: Path) -> None:
    text = BASE + "subnet_managers: [{host: sm-a, leaf: t-leaf1, port: 3}]\n"
    found = errors(tmp_path, text)
    assert any("subnet manager sm-a: port 3 of t-leaf1 is taken by a server or an uplink" in m for m in found)


NDR200 = """\
fabric: {name: t, transport: infiniband}
spines: {count: 2, model: nvidia-qm9700, name: "t-spine{index}"}
leaves: {count: 2, model: nvidia-qm9700, name: "t-leaf{index}"}
uplinks: {per_spine: 16}
servers: {per_leaf: 64, speed: 200G, nic: nvidia-connectx-7-osfp, name: "t-gpu{leaf_index}{index:02d}"}
subnet_managers: [{host: t-gpu101}]
"""


def test_ndr200_split_hosts_under_ndr_uplinks_are_one_to_one(tmp_path: Path) -> None:
    """64 x 200G = 12,800 Gb/s down, 32 x 400G = 12,800 Gb/s up: 1:1 by bandwidth, 2 ports per uplink."""
    checked = load_and_plan(write_inventory(tmp_path, NDR200))
    leaf = checked.plan.device("t-leaf1")
    assert sum(i.speed for i in leaf.interfaces if i.role == "server") == 64 * 200
    assert sum(i.speed for i in leaf.interfaces if i.role == "uplink") == 32 * 400
    assert not [d for d in checked.warnings if "per uplink" in d.message]


def test_sm_hosts_do_not_count_toward_one_to_one(tmp_path: Path) -> None:
    """6 servers on 6 uplinks plus a dedicated SM host: the SM is not compute bandwidth."""
    text = BASE.replace("per_leaf: 4,", "per_leaf: 6,") + "subnet_managers: [{host: sm-a, leaf: t-leaf1}]\n"
    checked = load_and_plan(write_inventory(tmp_path, text))
    ib = checked.plan.infiniband
    assert ib is not None
    assert [(sm.leaf, sm.leaf_port) for sm in ib.subnet_managers] == [("t-leaf1", 34)]  # 35-40 are the uplinks
    assert not [d for d in checked.warnings if "per uplink" in d.message]


def test_oversubscribed_by_bandwidth(tmp_path: Path) -> None:
    found = errors(tmp_path, BASE.replace("per_leaf: 4,", "per_leaf: 7,"))
    # 7 x 200G = 1,400G to servers over 2 spines x 3 x 200G = 1,200G up.
    assert any("oversubscribed 1.17:1 (1400G to servers, 1200G to spines)" in m for m in found)
    assert not any("not 1:1" in m for m in found)


def test_non_whole_ports_per_uplink_warned_once(tmp_path: Path) -> None:
    text = BASE.replace("per_leaf: 4,", "per_leaf: 9,") + "oversubscription: {max_ratio: 2}\n"
    checked = load_and_plan(write_inventory(tmp_path, text))
    balance = [d.format() for d in checked.warnings if "per uplink" in d.message]
    assert len(balance) == 1
    assert "2 leaf/leaves carry a non-whole number of compute ports per uplink" in balance[0]
    assert "t-leaf1 (9 compute ports / 6 uplinks = 1.50)" in balance[0]


def test_spine_radix(tmp_path: Path) -> None:
    text = BASE.replace("leaves: {count: 2", "leaves: {count: 21").replace("per_leaf: 4,", "per_leaf: 1,")
    found = errors(tmp_path, text)
    assert any("radix 40) would need 63 leaf-facing ports" in m for m in found)


def test_qos_checks(tmp_path: Path) -> None:
    text = BASE + (
        "qos: {enabled: true, max_vls: 4, sl2vl: [0,1,2,3,4,0,0,0,0,0,0,0,0,0,0,15], vlarb_low: '0:64,5:64'}\n"
        "partitions: [{name: a, pkey: 1, members: [t-gpu1*], sl: 15}]\n"
    )
    found = errors(tmp_path, text)
    assert any("qos.sl2vl: VL(s) 4 are not below qos.max_vls 4" in m for m in found)
    assert any("qos.vlarb_low: 0:64,5:64 names a VL not below qos.max_vls 4" in m for m in found)
    assert any("partition a: SL 15 maps to VL15 (drop)" in m for m in found)


def test_validate_cli_prints_the_placeholder_warning() -> None:
    result = CliRunner().invoke(main, ["validate", str(IB_HDR)])
    assert result.exit_code == 0
    assert "placeholders derived from guid_prefix 0x02fab00000000000" in result.output
    assert "fabricgen ib import-guids" in result.output


def test_example_leaves_no_server_limited_only() -> None:
    """Every ib-hdr server is a full member of a tenant: no 'in no tenant partition' warning."""
    checked = load_and_plan(IB_HDR)
    assert not [d for d in checked.warnings if "in no tenant partition" in d.message]


def test_partition_rate_above_members_links(tmp_path: Path) -> None:
    """rate 200 on HDR100 (100G) members: OpenSM's validate_port_caps refuses the joins."""
    text = BASE.replace("per_leaf: 4,", "per_leaf: 4, speed: 100G,") + (
        "partitions: [{name: a, pkey: 1, members: [t-gpu1*], ipoib: true, rate: 200}, {name: b, pkey: 2, members: [t-gpu2*], rate: 100}]\n"
    )
    found = errors(tmp_path, text)
    assert any("partitions[0].rate: partition a: rate 200G is above the 100G links of 4 member(s)" in m for m in found)
    assert not any("partitions[1]" in m for m in found)
