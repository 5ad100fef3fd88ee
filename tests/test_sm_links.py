"""Dedicated subnet-manager hosts' cables are plan links (kind `sm-leaf`): in the cabling plan,
the BOM, NetBox and the ibsim topology, placed stably under growth, and not GPU bandwidth.

Expected counts come from the inventories (the SM hosts listed under `subnet_managers`, one
HCA port each) and the vendor facts in the example headers, not from the planner."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.analyze.planview import fabric_of
from fabricgen.artifacts.bom import bom
from fabricgen.artifacts.cabling import cabling
from fabricgen.context import RenderContext
from fabricgen.infiniband.verify import _planned_links
from fabricgen.model import SM_LINK, Plan
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES
from tests.fabrics import write

IB_EXAMPLES = ("ib-hdr", "ib-ndr")


def _inventory(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((EXAMPLES / name / "fabric.yml").read_text(encoding="utf-8"))
    return doc


def _sm_hosts(doc: dict[str, Any]) -> list[str]:
    """Hosts of `subnet_managers` (none of the examples' names a server: all dedicated)."""
    return [sm["host"] for sm in doc["subnet_managers"]]


def _bom(plan: Plan) -> dict[str, int]:
    rows = csv.DictReader(io.StringIO(bom(plan, RenderContext())["bom.csv"]))
    return {row["part"]: int(row["count"]) for row in rows}


@pytest.mark.parametrize("name", IB_EXAMPLES)
def test_every_sm_host_has_one_cable_in_the_plan(name: str) -> None:
    doc = _inventory(name)
    plan = load_and_plan(EXAMPLES / name).plan
    sm_links = [link for link in plan.links if link.kind == SM_LINK]
    assert sorted(link.a.device for link in sm_links) == sorted(_sm_hosts(doc))  # one HCA port each
    wanted = {sm["host"]: sm["leaf"] for sm in doc["subnet_managers"]}
    assert {link.a.device: link.z.device for link in sm_links} == wanted
    assert all(link.media is not None for link in sm_links)
    tiers = {t.kind: t.links for t in plan.tier_links}
    assert tiers[SM_LINK] == len(_sm_hosts(doc))


def test_hdr_sm_cables_are_in_cabling_csv_and_the_bom() -> None:
    """ib-hdr: QM8790 leaves, ConnectX-6 QSFP56 HCAs at 3 m (passive DAC reach at 50G lanes is 3 m,
    catalog source): 8 leaves x 18 servers + 2 SM hosts = 146 QSFP56 200G DACs."""
    doc = _inventory("ib-hdr")
    plan = load_and_plan(EXAMPLES / "ib-hdr").plan
    rows = list(csv.DictReader(io.StringIO(cabling(plan, RenderContext())["cabling.csv"])))
    for sm in doc["subnet_managers"]:
        assert [(r["side_b_device"], r["type"]) for r in rows if r["side_a_device"] == sm["host"]] == [(sm["leaf"], "dac-passive")]
    servers = doc["leaves"]["count"] * doc["servers"]["per_leaf"] * doc["servers"]["ports_per_server"]
    assert _bom(plan)["QSFP56-200G-DAC"] == servers + len(_sm_hosts(doc))


def test_ndr_sm_cables_are_splitter_dacs_of_their_own_cage() -> None:
    """ib-ndr: 28 HCAs per leaf on 1:2 splitter DACs (one per twin-port cage): 4 x 14 = 56, and each
    SM host on a cage of its own: one more splitter each."""
    doc = _inventory("ib-ndr")
    plan = load_and_plan(EXAMPLES / "ib-ndr").plan
    per_leaf = doc["servers"]["per_leaf"]
    assert _bom(plan)["OSFP-800G-to-2xOSFP-400G-DAC"] == doc["leaves"]["count"] * per_leaf // 2 + len(_sm_hosts(doc))
    md = cabling(plan, RenderContext())["cabling.md"]
    assert all(f"| {host} | nic1 |" in md for host in _sm_hosts(doc))


def test_sm_port_stays_when_a_server_is_added(tmp_path: Path) -> None:
    """Servers fill a leaf from cage 1 upwards, the SM host's cage is the highest free one: one more
    server per leaf does not move its cable (ib-hdr: 18 servers, cages 21-40 uplinks)."""
    doc = _inventory("ib-hdr")
    before = load_and_plan(write(tmp_path, doc, "a.yml")).plan
    doc["servers"]["per_leaf"] += 1
    doc["oversubscription"] = {"max_ratio": 1.1}
    after = load_and_plan(write(tmp_path, doc, "b.yml")).plan
    old = {(lk.a.device, lk.z.device, lk.z.interface) for lk in before.links if lk.kind == SM_LINK}
    new = {(lk.a.device, lk.z.device, lk.z.interface) for lk in after.links if lk.kind == SM_LINK}
    assert old == new == {("ib1-sm1", "ib1-leaf01", "20"), ("ib1-sm2", "ib1-leaf08", "20")}


def test_sm_ports_never_collide_with_server_or_uplink_ports() -> None:
    for name in IB_EXAMPLES:
        plan = load_and_plan(EXAMPLES / name).plan
        for device in plan.devices:
            cages: dict[int, set[str]] = {}
            for interface in device.interfaces:
                cages.setdefault(interface.port, set()).add(interface.role)
            assert all(roles == {"sm"} for roles in cages.values() if "sm" in roles), device.name


@pytest.mark.parametrize("name", IB_EXAMPLES)
def test_analyze_does_not_count_sm_cables_as_gpu_bandwidth(name: str) -> None:
    doc = _inventory(name)
    plan = load_and_plan(EXAMPLES / name).plan
    fabric = fabric_of(plan)
    servers = doc["leaves"]["count"] * doc["servers"]["per_leaf"]
    assert len(fabric.server_nics) == servers
    speed = {"ib-hdr": 200, "ib-ndr": 400}[name]  # QM8790 HDR / QM9700 NDR port speed (catalog)
    assert float(fabric.server_nic_gbps.sum()) == servers * doc["servers"]["ports_per_server"] * speed
    switch_links = sum(1 for link in plan.links if link.kind in ("leaf-spine", "spine-superspine"))
    assert len(fabric.link_gbps) == 2 * switch_links


@pytest.mark.parametrize(("name", "ib_port"), [("ib-hdr", 20), ("ib-ndr", 33)])
def test_ib_verify_expects_the_sm_hosts_cables(name: str, ib_port: int) -> None:
    """`ib verify` compares ibnetdiscover's links with the planned ones: each SM host's HCA port 1
    to its leaf's InfiniBand port (ib-hdr: QM8790 cage 20 is port 20; ib-ndr: QM9700 twin-port cage
    17 holds ports 33 and 34, the SM host on the first)."""
    doc = _inventory(name)
    plan = load_and_plan(EXAMPLES / name).plan
    name_of, planned = _planned_links(plan)
    for sm in doc["subnet_managers"]:
        assert tuple(sorted(((sm["host"], 1), (sm["leaf"], ib_port)))) in planned
        assert sm["host"] in name_of.values()
    assert len(planned) == len(plan.links)
