"""The parts of `ib verify` that need no simulator: which HCA ports get traced, how LFT dumps
and partition files are read, which P_Keys each port must hold, where SM hosts are cabled."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.core.model import Plan
from fabricgen.infiniband.pkeys import expected_pkeys
from fabricgen.infiniband.verify import _pairs
from fabricgen.infiniband.verify_partitions import file_problems
from fabricgen.infiniband.verify_routing import parse_lfts
from tests.ib_helpers import (
    NDR_SM,
    OPENSM_REFUSALS,
    RAIL_SERVERS,
    RAIL_SM_ON_SERVER,
    cli,
    ib_fabric,
    needs_opensm,
    opensm_dump,
    plan_of,
    render_cli,
    write_inventory,
)

LEAF_ATTACHED_8_NICS = (
    ib_fabric(
        "n8",
        spines=4,
        leaves=8,
        per_spine=8,
        model="nvidia-qm9700",
        servers='per_leaf: 4, ports_per_server: 8, name: "n8-gpu{leaf_index:02d}{index:02d}"',
    )
    + NDR_SM
    + """\
subnet_managers:
  - {host: n8-gpu0101, priority: 15}
"""
)


@pytest.fixture(scope="module")
def rail_plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    """RAIL_SM_ON_SERVER's plan, planned once: the plan is frozen, the tests below only read it."""
    return plan_of(tmp_path_factory.mktemp("rail"), RAIL_SM_ON_SERVER)


def test_traced_pairs_cover_every_nic_not_only_the_first(tmp_path: Path) -> None:
    """With 8 NICs per server on one leaf, tracing only NIC 1 hits one spine (ftree gives the
    n-th port of every leaf the same spine): 'spines used: 1/4' came from that sample."""
    plan = plan_of(tmp_path, LEAF_ATTACHED_8_NICS)
    pairs = _pairs(plan, 64)
    nic_of = {n.port_guid: n.nic for s in plan.servers for n in s.nics}
    assert {nic_of[p[4]] for p in pairs} == set(range(1, 9))
    assert {nic_of[p[1]] for p in pairs} == set(range(1, 9))
    assert all(p[2] != p[5] for p in pairs)


def test_rail_pairs_use_each_nics_own_leaf(rail_plan: Plan) -> None:
    plan = rail_plan
    leaf_of = {n.port_guid: n.leaf for s in plan.servers for n in s.nics}
    pairs = _pairs(plan, 16)
    assert len(pairs) == 16
    assert all(leaf_of[p[1]] == p[2] and leaf_of[p[4]] == p[5] and p[2] != p[5] for p in pairs)


def test_master_sm_port_on_a_server_is_full_member_of_every_partition(rail_plan: Plan) -> None:
    plan = rail_plan
    assert plan.infiniband is not None
    master = plan.infiniband.subnet_managers[0]
    wanted = expected_pkeys(plan, master)
    assert wanted[master.port_guid] == {0xFFFF, 0x8101, 0x8102, 0x8A03}
    other_port = plan.servers[0].nics[1].port_guid  # same server, not the SM's port: as planned (limited in t1, full in t3)
    assert wanted[other_port] == {0x7FFF, 0x0101, 0x8A03}


def test_member_guid_typo_in_partitions_conf_is_named(rail_plan: Plan) -> None:
    plan = rail_plan
    assert plan.infiniband is not None
    real = plan.infiniband.partitions[1].port_guids[0]
    typo = real[:-1] + ("0" if real[-1] != "0" else "1")
    text = f"Default=0x7fff : ALL_CAS=limited, SELF=full ;\nt1=0x0101 : {', '.join(plan.infiniband.partitions[0].port_guids)} ;\n"
    text += f"t2=0x0102, defmember=full : {', '.join([typo, *plan.infiniband.partitions[1].port_guids[1:]])}, SELF=full ;\n"
    fabric = {n.port_guid for s in plan.servers for n in s.nics}
    problems = file_problems(plan, text, fabric)
    assert f"t2: {typo} is in partitions.conf but not a planned member" in problems
    assert f"t2: member {typo} is not an HCA port of the fabric (OpenSM skips it)" in problems
    assert any(p.startswith("t2: planned member ibr-su1-gpu05") and real in p for p in problems)
    assert len([p for p in problems if p.startswith("t2:")]) == 3
    assert "t3: no rule in partitions.conf" in problems  # the text above leaves t3 out


def test_parse_lfts_reads_ca_destinations_per_switch() -> None:
    text = (
        "Unicast lids [0x0-0x8] of switch DR path slid 0; dlid 0; 0,1 guid 0x0000000000000aa1 (leaf1):\n"
        "  Lid  Out   Destination\n"
        "0x0002 021 : (Switch portguid 0x0000000000000bb1: 'spine1')\n"
        "0x0006 001 : (Channel Adapter portguid 0x0000000000000c01: 'h1 HCA-1')\n"
        "0x0007 022 : (Channel Adapter portguid 0x0000000000000c02: 'h2 HCA-1')\n"
        "8 valid lids dumped \n"
    )
    assert parse_lfts(text) == {"0x0000000000000aa1": [(1, "0x0000000000000c01"), (22, "0x0000000000000c02")]}


def test_dedicated_sm_takes_the_highest_free_rail_leaf_port(tmp_path: Path) -> None:
    text = RAIL_SM_ON_SERVER.split("subnet_managers:")[0] + "oversubscription: {max_ratio: 1.2}\n"
    plan = plan_of(tmp_path, text)
    assert plan.infiniband is not None
    sm = plan.infiniband.subnet_managers[0]
    interfaces = plan.device("ibr-leaf01").interfaces
    used = {i.port for i in interfaces if i.role != "sm"}
    assert len(used) == 8 + 8  # 8 servers (one NIC each on this rail leaf) and 8 uplinks, 40 ports
    assert sm.leaf == "ibr-leaf01"
    assert sm.leaf_port == max(set(range(1, 41)) - used)
    assert [(i.port, i.peer_device) for i in interfaces if i.role == "sm"] == [(sm.leaf_port, sm.host)]


def test_full_rail_leaf_hint_leads_to_an_sm_on_a_server(tmp_path: Path) -> None:
    """Before: 'port 257 of ... (64 ports)' and, for an SM on a server, a hint back to a dedicated host."""
    servers = RAIL_SERVERS.replace("per_leaf: 8, ports_per_server: 4, rails: 4", "per_leaf: 32, ports_per_server: 8, rails: 8")
    text = ib_fabric("ibr", spines=4, leaves=8, per_spine=8, model="nvidia-qm9700", servers=servers) + NDR_SM
    result = cli("validate", write_inventory(tmp_path, text))
    assert result.exit_code == 2
    # QM9700: 32 twin-port cages (64 NDR ports); 16 cages of servers and 16 of uplinks fill it.
    assert "subnet manager ibr-sm1: ibr-leaf01 has no free port (32 cages, all used by servers and uplinks)" in result.output
    assert "run the SM on a server's HCA (host: ibr-su1-gpu01; ib verify accepts it)" in result.output
    fixed = write_inventory(tmp_path, text + "subnet_managers:\n  - {host: ibr-su1-gpu01, priority: 15}\n")
    result = cli("validate", fixed)
    assert result.exit_code == 0, result.output
    assert "no leaf has a free port for a dedicated SM host" not in result.output  # no partitions: no isolation warning


def test_hosts_in_no_tenant_with_a_limited_default_are_warned(tmp_path: Path) -> None:
    servers = 'per_leaf: 6, ports_per_server: 1, name: "iso-gpu{leaf_index:02d}{index:02d}"'
    text = ib_fabric("iso", spines=2, leaves=2, per_spine=4, servers=servers)
    text += 'partitions:\n  - {name: t1, pkey: 0x0101, members: ["iso-gpu01*"]}\n'
    result = cli("validate", write_inventory(tmp_path, text))
    assert result.exit_code == 0, result.output
    assert "6 server(s) in no tenant partition and only limited members of Default (iso-gpu0201," in result.output
    full = write_inventory(tmp_path, text + "default_partition: {membership: full}\n")
    assert "in no tenant partition" not in cli("validate", full).output


QOS = (
    ib_fabric("q", spines=2, leaves=2, per_spine=4, servers='per_leaf: 6, ports_per_server: 1, name: "q-gpu{leaf_index:02d}{index:02d}"')
    + """\
default_partition: {membership: full}
partitions:
  - {name: t1, pkey: 0x0101, members: ["q-gpu01*"], sl: 1}
"""
)


def test_default_high_priority_table_is_empty(tmp_path: Path) -> None:
    """OpenSM's own default high table (0:4) would serve VL0 before the tenant's VL1."""
    result, out = render_cli(tmp_path, QOS + "qos: {enabled: true, max_vls: 4}\n")
    assert result.exit_code == 0, result.output
    conf = (out / "opensm" / "q-sm1" / "opensm.conf").read_text()
    assert "qos_vlarb_high 0:0,1:0,2:0,3:0\n" in conf
    assert "qos_vlarb_low 0:64,1:64,2:64,3:64\n" in conf
    assert "VL arbitration" not in result.output and "high-priority table" not in result.output


def test_ineffective_weights_and_vl0_ahead_of_tenants_are_warned(tmp_path: Path) -> None:
    inventory = write_inventory(tmp_path, QOS + "qos: {enabled: true, max_vls: 4, vlarb_high: '0:4', vlarb_low: '0:32,1:64,2:0,3:128'}\n")
    result = cli("validate", inventory)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "qos.vlarb_low: weights VL0:32 are below 64 credits, one 4096-byte packet" in out
    assert "qos.vlarb_high: weights VL0:4 are below 64 credits" in out
    assert "the high-priority table serves VL(s) 0 before the tenant VL(s) 1 of the low table" in out


def test_host_pages_give_each_tenant_its_pkey_index_and_sl(tmp_path: Path) -> None:
    """ibr-su1-gpu02 is in t1 (0x0101, limited) and t3 (0x0a03, full, IPoIB, SL 2): a fresh port
    holds Default at index 0, then 0x0101, then 0x8a03 (ascending, as observed on OpenSM 3.3.23)."""
    result, out = render_cli(tmp_path, RAIL_SM_ON_SERVER)
    assert result.exit_code == 0, result.output
    page = (out / "hosts" / "ibr-su1-gpu02.md").read_text()
    # Each NIC is its own adapter, named as node-name-map names it (NIC n = mlx5_(n-1)).
    assert 'export NCCL_IB_HCA="=mlx5_0:1,mlx5_1:1,mlx5_2:1,mlx5_3:1"' in page and "RDMA" not in page.split("```")[1]
    assert "| nic3 | mlx5_2 | ibr-leaf03 |" in page and "/sys/class/infiniband/mlx5_0/ports/1/pkeys" in page
    t1, t3 = page.split("## Tenant t1: P_Key 0x0101 (limited member), SL 0")[1].split("## Tenant t3: P_Key 0x8a03 (full member), SL 2")
    assert "export NCCL_IB_PKEY=1 " in t1 and "export NCCL_IB_SL=0" in t1
    assert "export NCCL_IB_PKEY=2 " in t3 and "export NCCL_IB_SL=2" in t3 and "export UCX_IB_SL=2" in t3
    assert "echo 0x8a03 > /sys/class/net/${NIC4_NETDEV}/create_child" in t3
    lonely = (out / "hosts" / "ibr-su1-gpu05.md").read_text()
    assert "## Tenant t2: P_Key 0x8102 (full member), SL 0" in lonely and "export NCCL_IB_PKEY=1 " in lonely
    master = (out / "hosts" / "ibr-su1-gpu01.md").read_text()
    assert "The master subnet manager runs on this server" in master
    # t3 (0x8a03): index 3 on the SM's port (0xffff 0x8101 0x8102 0x8a03), index 2 on the others (0x7fff 0x0101 0x8a03)
    assert "NICs differ (indexes 2, 3)" in master
    rows = (out / "ib-hosts.csv").read_text().splitlines()
    # NIC 3 is the server's third adapter: node GUID base + 4, port GUID base + 5 (plan/guids.py).
    assert "ibr-su1-gpu02,nic3,mlx5_2,ibr-leaf03,2,0x02fab00030008045,t3,0x8a03,full,2,2,8a03" in rows


CONGESTION_CONTROL = "opensm: {congestion_control: {enabled: true, threshold: 8, marking_rate: 10}}\n"


def test_congestion_control_renders(tmp_path: Path) -> None:
    result, out = render_cli(tmp_path, QOS + CONGESTION_CONTROL)
    assert result.exit_code == 0, result.output
    text = (out / "opensm" / "q-sm1" / "opensm.conf").read_text()
    assert "congestion_control TRUE\n" in text
    assert "cc_sw_cong_setting_control_map 0x14\n" in text  # bit 2 threshold, bit 4 marking rate
    assert "cc_sw_cong_setting_threshold 0x08\n" in text
    assert "cc_sw_cong_setting_marking_rate 10\n" in text


@needs_opensm
def test_opensm_accepts_the_congestion_control_options(tmp_path: Path) -> None:
    """Upstream OpenSM's own parser (opensm -c) is the judge of the option names and values."""
    result, out = render_cli(tmp_path, QOS + CONGESTION_CONTROL)
    assert result.exit_code == 0, result.output
    output = opensm_dump(out / "opensm" / "q-sm1" / "opensm.conf", tmp_path / "dump.conf")
    assert not [marker for marker in OPENSM_REFUSALS if marker in output], output
    assert "cc_sw_cong_setting_threshold 0x08" in (tmp_path / "dump.conf").read_text()


def test_sharp_and_adaptive_routing_are_warned_not_rendered(tmp_path: Path) -> None:
    extra = "opensm: {sharp: {enabled: true}, adaptive_routing: {enabled: true}, congestion_control: {enabled: true}}\n"
    inventory = write_inventory(tmp_path, QOS + extra)
    result = cli("render", inventory, "-o", tmp_path / "out")  # not -q: the warnings are the point
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())
    assert "SHARP needs NVIDIA MLNX OpenSM (sharp_enabled 2) or UFM" in out
    assert "adaptive routing (ar_updn) needs NVIDIA MLNX OpenSM or UFM" in out
    assert "threshold 0: switches mark no packet" in out
    conf = (tmp_path / "out" / "opensm" / "q-sm1" / "opensm.conf").read_text()
    assert "sharp" not in conf and "ar_updn" not in conf and "routing_engine ftree\n" in conf
