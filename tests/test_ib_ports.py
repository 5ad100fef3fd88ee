"""InfiniBand ports, not cages: a dedicated SM host in the free half of a QM9700 twin-port cage
(cabled with the servers' splitter leg or a free optical port of their module, and counted so in
the BOM), NVIDIA's names of split ports, and the switch-side split steps per leaf.

Expected values come from the inventories and NVIDIA's documented numbering (MLNX-OS User
Manual, "InfiniBand Interface": Quantum-2 interfaces are <ASIC>/<cage>/<port>, a split port
<port> becomes <port>/1 and <port>/2), not from the planner.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from fabricgen.core.model import Plan
from tests.ib_helpers import HALF_CAGE_SM, SPLIT_HALF_CAGE_SM, cli, ib_fabric, plan_and_files, plan_of, write_inventory

SERVERS, UPLINKS, CAGES = 31, 32, 32
"""HALF_CAGE_SM per leaf: 31 servers, 2 spines x 16 uplinks, a QM9700 of 32 twin-port cages."""


def _sm_interface(plan: Plan, leaf: str, host: str) -> tuple[int, int, str]:
    found = [(i.port, i.sub, i.name) for i in plan.device(leaf).interfaces if i.peer_device == host]
    assert len(found) == 1, found
    return found[0]


def _bom(files: dict[str, str]) -> dict[str, int]:
    """Part (with `@<length>` for cables and cords) -> count."""
    rows = csv.DictReader(io.StringIO(files["bom.csv"]))
    return {row["part"] + (f"@{row['length_m']}" if row["length_m"] else ""): int(row["count"]) for row in rows}


def test_sm_host_takes_the_free_half_of_the_last_server_cage(tmp_path: Path) -> None:
    """Before: 'ibq-leaf1 has no free port (32 cages, all used by servers and uplinks)'."""
    plan, files = plan_and_files(write_inventory(tmp_path, HALF_CAGE_SM))
    last_cage = math.ceil(SERVERS / 2)  # two NDR ports per cage, servers from cage 1 up
    assert SERVERS % 2 == 1 and last_cage + UPLINKS // 2 == CAGES  # the only free port: <last cage>/2
    for leaf, host in (("ibq-leaf1", "ibq-sm1"), ("ibq-leaf2", "ibq-sm2")):
        assert _sm_interface(plan, leaf, host) == (last_cage, 2, f"{last_cage}/2")
    assert plan.infiniband is not None
    assert [(sm.leaf_port, sm.leaf_sub) for sm in plan.infiniband.subnet_managers] == [(last_cage, 2), (last_cage, 2)]
    rows = [row for row in files["cabling.md"].splitlines() if "ibq-sm1" in row]
    assert rows == ["| ibq-sm1 | nic1 | ibq-leaf1 | 16/2 | 400G | ACC | OSFP-800G-to-2xOSFP-400G-ACC | 3 |"]


def test_sm_host_shares_the_servers_splitter_cable(tmp_path: Path) -> None:
    """At 3 m (the default) one 1:2 splitter ACC serves a twin-port cage: the SM host takes its free leg, so the
    BOM counts one splitter per used cage, the same as without SM hosts."""
    plan, files = plan_and_files(write_inventory(tmp_path, HALF_CAGE_SM))
    sm = next(c for c in plan.cables if c.link.a.device == "ibq-sm1")
    server = next(c for c in plan.cables if c.link.a.device == f"ibq-gpu1{SERVERS:02d}")
    assert sm.items.cables == server.items.cables  # one physical cable, two legs
    assert _bom(files)["OSFP-800G-to-2xOSFP-400G-ACC@3"] == 2 * math.ceil(SERVERS / 2)
    breakout = [c for c in json.loads(files["netbox-breakout-cables.json"])["cables"] if "ibq-sm1" in c["label"]]
    assert [t["name"] for t in breakout[0]["a_terminations"]] == ["nic1", "nic1"]
    assert [t["device"] for t in breakout[0]["a_terminations"]] == [f"ibq-gpu1{SERVERS:02d}", "ibq-sm1"]


def test_sm_host_takes_a_free_optical_port_of_the_servers_module(tmp_path: Path) -> None:
    """At 30 m the cage holds one twin-port 2xSR4 module for both ports: the SM host brings a
    single-port transceiver and a patch cord into the module's free optical port."""
    text = HALF_CAGE_SM + "cabling: {length: {server-leaf: 30m}}\n"
    plan, files = plan_and_files(write_inventory(tmp_path, text))
    sm = next(c for c in plan.cables if c.link.a.device == "ibq-sm1")
    server = next(c for c in plan.cables if c.link.a.device == f"ibq-gpu1{SERVERS:02d}")
    assert sm.items.z == server.items.z  # the same module in the leaf's cage
    assert sm.items.cables != server.items.cables  # a cord of its own
    assert (sm.choice.a_optic, sm.choice.z_optic) == ("OSFP-400G-SR4", "OSFP-800G-2xSR4")
    bom = _bom(files)
    hosts = 2 * SERVERS + 2
    host_cages = 2 * math.ceil(SERVERS / 2)  # one module per used cage; the SM hosts add none
    uplink_cages = 2 * (2 * UPLINKS // 2)  # both ends of 2 x 32 uplinks (default length: 2xSR4 too)
    assert bom["OSFP-800G-2xSR4"] == host_cages + uplink_cages
    assert bom["OSFP-400G-SR4"] == hosts  # one single-port module per server and SM host
    assert bom["MMF-OM4-MPO-12-APC@30"] == hosts + 2 * UPLINKS  # a cord per host and per uplink (also 30 m)


def test_sm_host_in_a_split_cage_takes_its_free_ndr200_port(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, SPLIT_HALF_CAGE_SM)
    # 63 hosts, four NDR200 ports per cage: the 64th port is cage 16, port 2, split half 2.
    assert _sm_interface(plan, "ibs-leaf1", "ibs-sm1") == (16, 4, "16/2/2")
    assert {i.speed for i in plan.device("ibs-leaf1").interfaces if i.port == 16} == {200}


def test_a_free_half_of_an_uplink_cage_is_not_shared(tmp_path: Path) -> None:
    """Both ports of a twin-port module are the same kind: an SM host's 2 m cable cannot share
    the uplinks' 2xDR4 module, so a pinned cage whose free port is an uplink cage's is refused."""
    text = ib_fabric("ibu", spines=1, leaves=2, per_spine=31, model="nvidia-qm9700", servers="per_leaf: 32")
    text += 'opensm: {version: "3.3.24"}\nsubnet_managers: [{host: ibu-sm1, leaf: ibu-leaf01, port: 32}]\n'
    result = cli("validate", write_inventory(tmp_path, text))
    assert result.exit_code == 2
    assert "subnet manager ibu-sm1: port 32 of ibu-leaf01 has a free port an SM host cannot share" in result.output
    unpinned = cli("validate", write_inventory(tmp_path, text.replace(", port: 32", "")))
    assert "ibu-leaf01 has no free port (32 cages, all used by servers and uplinks)" in unpinned.output


def _nvidia_split_name(k: int) -> str:
    """NVIDIA's name (without the ASIC) of the k-th NDR200 port of a QM9700, k from 1: cage
    (k-1)//4 + 1, its port 1 or 2, the split half 1 or 2."""
    return f"{(k - 1) // 4 + 1}/{(k - 1) // 2 % 2 + 1}/{(k - 1) % 2 + 1}"


def test_split_port_names_follow_nvidia_numbering(tmp_path: Path) -> None:
    plan = plan_of(tmp_path, SPLIT_HALF_CAGE_SM)
    servers = [i for i in plan.device("ibs-leaf1").interfaces if i.role.startswith("server")]
    assert [i.name for i in servers] == [_nvidia_split_name(k) for k in range(1, 64)]
    assert [i.peer_device for i in servers] == [f"ibs-gpu1{k:02d}" for k in range(1, 64)]
    assert [_nvidia_split_name(k) for k in (1, 2, 3, 4, 5)] == ["1/1/1", "1/1/2", "1/2/1", "1/2/2", "2/1/1"]


def test_split_steps_per_leaf(tmp_path: Path) -> None:
    """One file per leaf with split ports: the split-ready profile, each port of each split cage
    shut down and split, and the split ports with what is cabled to them."""
    _, files = plan_and_files(write_inventory(tmp_path, SPLIT_HALF_CAGE_SM))
    assert sorted(p for p in files if p.startswith("ib/switches/")) == [
        "ib/switches/ibs-leaf1.split.txt",
        "ib/switches/ibs-leaf2.split.txt",
    ]
    text = files["ib/switches/ibs-leaf1.split.txt"]
    commands = [line for line in text.splitlines() if line and not line.startswith("#")]
    split_cages = range(1, 17)  # 64 NDR200 ports (63 servers + the SM host) in 16 cages; uplinks unsplit
    expected = ["system profile ib split-ready"]
    for cage in split_cages:
        for port in (1, 2):
            expected += [f"interface ib 1/{cage}/{port} shutdown", f"interface ib 1/{cage}/{port} module-type qsfp-split-2"]
    assert commands == expected
    assert "#   1/1/1/1  ibs-gpu101 nic1" in text.splitlines()
    assert "#   1/16/2/2  ibs-sm1 nic1" in text.splitlines()


def test_no_split_steps_without_split_ports(tmp_path: Path) -> None:
    """400G on a twin-port cage is its native two ports, not a split."""
    _, files = plan_and_files(write_inventory(tmp_path, HALF_CAGE_SM))
    assert [p for p in files if p.startswith("ib/switches/")] == []


def test_hdr100_split_on_a_qm8790(tmp_path: Path) -> None:
    """Quantum (QM8790): a split port 1/<port> (MLNX-OS names 1/<port>/1 and 1/<port>/2)."""
    text = ib_fabric("ibh", spines=2, leaves=2, per_spine=10, servers='per_leaf: 40, speed: 100G, name: "ibh-gpu{leaf_index}{index:02d}"')
    text += "oversubscription: {max_ratio: 1}\nsubnet_managers: [{host: ibh-gpu101, priority: 15}]\n"
    _, files = plan_and_files(write_inventory(tmp_path, text))
    lines = files["ib/switches/ibh-leaf01.split.txt"].splitlines()
    assert "interface ib 1/1 module-type qsfp-split-2" in lines
    assert "#   1/1/2  ibh-gpu102 nic1" in lines
    assert "interface ib 1/21 module-type qsfp-split-2" not in lines  # uplink cages stay whole
