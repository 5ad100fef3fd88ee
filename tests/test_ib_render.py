"""Rendered OpenSM files and the ibsim topology of the InfiniBand example: golden files, and
properties every rendering must have (OpenSM's own parser accepts opensm.conf, our strict
validator accepts partitions.conf, GUID files hold exactly the planned GUIDs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fabricgen.infiniband.ibnet import parse_ibnet
from fabricgen.infiniband.partitions import check_partitions
from fabricgen.render.tidy import leftovers
from tests.conftest import ROOT
from tests.ib_helpers import IB_HDR, OPENSM_REFUSALS, needs_opensm, opensm_dump, plan_and_files

OPENSM_FILES = ("opensm.conf", "root_guids.conf", "cn_guids.conf", "partitions.conf", "qos-policy.conf", "node-name-map")


@pytest.mark.golden_test("goldens/ib/*.yml")
def test_opensm_files_golden(golden: Any) -> None:
    _, files = plan_and_files(ROOT / golden["inventory"])
    for name in OPENSM_FILES:
        assert files[f"opensm/{golden['sm']}/{name}"] == golden.out[name.replace("-", "_").replace(".", "_")]


def test_every_sm_gets_the_same_policy_files() -> None:
    plan, files = plan_and_files(IB_HDR)
    assert plan.infiniband is not None
    hosts = [sm.host for sm in plan.infiniband.subnet_managers]
    assert hosts == ["ib1-sm1", "ib1-sm2"]
    for name in OPENSM_FILES[1:]:
        assert files[f"opensm/{hosts[0]}/{name}"] == files[f"opensm/{hosts[1]}/{name}"]
    assert "sm_priority 15" in files["opensm/ib1-sm1/opensm.conf"]
    assert "sm_priority 14" in files["opensm/ib1-sm2/opensm.conf"]


def test_guid_files_hold_spine_node_and_host_port_guids() -> None:
    plan, files = plan_and_files(IB_HDR)
    roots = files["opensm/ib1-sm1/root_guids.conf"].split()
    cns = files["opensm/ib1-sm1/cn_guids.conf"].split()
    assert roots == [d.guid for d in plan.devices if d.role == "spine"]
    assert cns == [n.port_guid for s in plan.servers for n in s.nics]
    assert not set(cns) & {s.node_guid for s in plan.servers}, "CN file must hold port GUIDs, not node GUIDs"


def test_partitions_resolve_patterns_to_member_port_guids() -> None:
    plan, files = plan_and_files(IB_HDR)
    assert plan.infiniband is not None
    tenant_a = plan.infiniband.partitions[0]
    assert tenant_a.hosts == tuple(s.name for s in plan.servers if s.leaf in ("ib1-leaf01", "ib1-leaf02"))
    text = files["opensm/ib1-sm1/partitions.conf"]
    problems, rules = check_partitions(text)
    assert problems == []
    by_name = {r.name: r for r in rules}
    assert by_name["tenant-a"].pkey == 0x0A01
    assert set(by_name["tenant-a"].members) == {*tenant_a.port_guids, "SELF=full"}
    assert "ib1-gpu" not in text.split("#")[0]


def test_no_unrendered_template_text() -> None:
    _, files = plan_and_files(IB_HDR)
    for path, text in files.items():
        if path.startswith(("opensm/", "ib/")):
            assert leftovers(text) == [], path


@needs_opensm
def test_opensm_parser_accepts_rendered_config(tmp_path: Path) -> None:
    _, files = plan_and_files(IB_HDR)
    conf = tmp_path / "opensm.conf"
    conf.write_text(files["opensm/ib1-sm1/opensm.conf"])
    output = opensm_dump(conf, tmp_path / "dump")
    assert not [marker for marker in OPENSM_REFUSALS if marker in output], output
    dump = (tmp_path / "dump").read_text()
    assert "routing_engine ftree" in dump
    assert "qos_sl2vl 0,1,2,3,4,5,6,7,0,1,2,3,4,5,6,7" in dump


def test_ibsim_topology_matches_the_plan() -> None:
    plan, files = plan_and_files(IB_HDR)
    fabric = parse_ibnet(files["ib/ibsim.net"])
    switches = {n.node_id: n for n in fabric.nodes.values() if n.kind == "switch"}
    assert {name: n.node_guid for name, n in switches.items()} == {d.name: d.guid for d in plan.devices}
    hcas = {n.node_id: n for n in fabric.nodes.values() if n.kind == "ca"}
    # One single-port HCA per server NIC (adapter), node id <server>/mlx5_N.
    assert {n: hca.port_guids() for n, hca in hcas.items() if "/" in n} == {
        f"{s.name}/mlx5_{n.nic - 1}": [n.port_guid] for s in plan.servers for n in s.nics
    }
    assert hcas["ib1-sm1"].ports[1].remote_id == "ib1-leaf01"
    leaf_spine = [lk for lk in plan.links if lk.kind == "leaf-spine"]
    # From the inventory: 8 leaves x 18 HCAs, 8 leaves x 4 spines x 5 uplinks, 2 dedicated SM hosts,
    # each SM host's cable a plan link like the others.
    assert len(fabric.links()) == len(plan.links) == 8 * 18 + 8 * 4 * 5 + 2
    assert (hcas["ib1-sm2"].ports[1].remote_id, hcas["ib1-sm2"].ports[1].remote_port) == ("ib1-leaf08", 20)
    assert len(leaf_spine) == 8 * 4 * 5
    assert "4xHDR" in files["ib/ibsim.net"]


def test_rendering_is_deterministic() -> None:
    assert plan_and_files(IB_HDR)[1] == plan_and_files(IB_HDR)[1]


def test_log_flush_off_in_production_on_in_verify(tmp_path: Path) -> None:
    """force_log_flush is a debug feature (OpenSM's default FALSE); only ib verify's copy flushes."""
    from fabricgen.infiniband.verify import relocate_config

    _, files = plan_and_files(IB_HDR)
    conf = files["opensm/ib1-sm1/opensm.conf"]
    assert [line for line in conf.splitlines() if line.startswith("force_log_flush")] == ["force_log_flush FALSE"]
    relocated = relocate_config(conf, tmp_path, tmp_path)
    assert "force_log_flush FALSE" not in relocated and "force_log_flush TRUE" in relocated


def test_partition_header_carries_the_tenant_sl() -> None:
    """`sl=` on the ipoib partition so its IPoIB multicast runs on the tenant's SL (doc/partition-config.txt)."""
    _, files = plan_and_files(IB_HDR)
    assert "tenant-a=0x0a01, ipoib, mtu=5, rate=17, sl=1, defmember=full :" in files["opensm/ib1-sm1/partitions.conf"]
