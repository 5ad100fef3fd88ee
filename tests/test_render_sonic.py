"""SONiC switches (docs/sonic.md): every rendered config_db.json against the schema written from
SONiC's YANG models and the cross-table references, the port map against SONiC's own platform
files, and every RoCE value traced to the inventory key that asked for it."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen.core.catalog import builtin_models
from fabricgen.core.units import size_bytes
from fabricgen.diffing.inventory import diff_plans
from fabricgen.pipeline import load_and_plan
from fabricgen.platforms.sonic.config_db import problems
from tests.conftest import ROOT
from tests.render_cases import inventory_ids, rendered

POD = "inventories/pod-sonic"


def sonic_switches(inventory: str) -> list[tuple[str, dict[str, Any], str]]:
    """(name, config_db, frr.conf) of every SONiC switch the inventory renders."""
    plan, files = rendered(inventory)
    return [
        (d.name, json.loads(files[f"configs/{d.name}/config_db.json"]), files[f"configs/{d.name}/frr.conf"])
        for d in plan.devices
        if f"configs/{d.name}/config_db.json" in files
    ]


SONIC_INVENTORIES = [i for i in inventory_ids() if sonic_switches(i)]


def test_the_examples_have_sonic_switches() -> None:
    assert POD in SONIC_INVENTORIES


@pytest.mark.parametrize("inventory", SONIC_INVENTORIES)
def test_every_config_db_is_what_sonic_yang_accepts(inventory: str) -> None:
    for name, config_db, _ in sonic_switches(inventory):
        assert problems(config_db) == [], name


def _leaf() -> dict[str, Any]:
    return copy.deepcopy(sonic_switches(POD)[2][1])


@pytest.mark.parametrize(
    ("table", "key", "field", "value", "expected"),
    [
        ("PORT_QOS_MAP", "Ethernet0", "dscp_to_tc_map", "NOPE", "PORT_QOS_MAP|Ethernet0|dscp_to_tc_map: NOPE is not in DSCP_TO_TC_MAP"),
        ("QUEUE", "Ethernet0|3", "scheduler", "SCHEDULER_Q9", "QUEUE|Ethernet0|3|scheduler: SCHEDULER_Q9 is not in SCHEDULER"),
        ("PFC_WD", "Ethernet0", "detection_time", "6000", "PFC_WD|Ethernet0|detection_time: 6000 is outside 100..5000"),
        ("PFC_WD", "GLOBAL", "POLL_INTERVAL", "300", "PFC_WD|Ethernet0|detection_time: 200 is below POLL_INTERVAL 300"),
        ("SCHEDULER", "SCHEDULER_Q1", "weight", "0", "SCHEDULER|SCHEDULER_Q1|weight: 0 is outside 1..100"),
        ("PORT", "Ethernet0", "mtu", "9300", "PORT|Ethernet0|mtu: 9300 is outside 68..9216"),
        (
            "WRED_PROFILE",
            "ROCE_LOSSLESS_ECN",
            "green_max_threshold",
            "1",
            "WRED_PROFILE|ROCE_LOSSLESS_ECN: green_max_threshold 1 is below green_min_threshold 150000",
        ),
        ("PORT_QOS_MAP", "Ethernet0", "pfc_enable", "3,9", "PORT_QOS_MAP|Ethernet0|pfc_enable: '3,9' does not match"),
        (
            "DEVICE_METADATA",
            "localhost",
            "docker_routing_config_mode",
            "mixed",
            "DEVICE_METADATA|localhost|docker_routing_config_mode: 'mixed' is not one of",
        ),
    ],
)
def test_the_checks_refuse_what_sonic_refuses(table: str, key: str, field: str, value: str, expected: str) -> None:
    config_db = _leaf()
    config_db[table][key][field] = value
    assert any(problem.startswith(expected) for problem in problems(config_db)), problems(config_db)


def test_a_row_for_a_port_that_does_not_exist_is_refused() -> None:
    config_db = _leaf()
    del config_db["PORT"]["Ethernet0"]
    found = problems(config_db)
    assert "INTERFACE|Ethernet0: Ethernet0 is not in PORT" in found
    assert "PORT_QOS_MAP|Ethernet0: Ethernet0 is not in PORT" in found
    assert "BREAKOUT_CFG|Ethernet0: Ethernet0 is not in PORT" in found


def test_an_unknown_table_or_field_is_refused() -> None:
    config_db = _leaf()
    config_db["BGP_NEIGHBOR"] = {}
    config_db["PORT"]["Ethernet0"]["sped"] = "400000"
    found = problems(config_db)
    assert any("BGP_NEIGHBOR" in p for p in found) and any("sped" in p for p in found), found


def _port_config(text: str) -> dict[str, tuple[str, str]]:
    """SONiC's port_config.ini: port name -> (lanes, alias)."""
    rows = [line.split() for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return {row[0]: (row[1], row[2]) for row in rows}


ARISTA_PORT_CONFIG = """\
# name          lanes                           alias        index  speed     fec
Ethernet0       17,18,19,20,21,22,23,24         Ethernet1/1  1      400000    rs
Ethernet8       9,10,11,12,13,14,15,16          Ethernet2/1  2      400000    rs
Ethernet16      49,50,51,52,53,54,55,56         Ethernet3/1  3      400000    rs
Ethernet24      33,34,35,36,37,38,39,40         Ethernet4/1  4      400000    rs
"""
"""The first rows of sonic-buildimage device/arista/x86_64-arista_7060dx5_64s/Arista-7060DX5-64S/
port_config.ini (commit 086b03bd70f9e211aaaf5f6aefe0790b508d2a94), copied by hand."""


def test_ports_carry_the_lanes_and_aliases_of_sonics_platform_files() -> None:
    config_db = sonic_switches(POD)[2][1]
    for port, (lanes, alias) in _port_config(ARISTA_PORT_CONFIG).items():
        assert (config_db["PORT"][port]["lanes"], config_db["PORT"][port]["alias"]) == (lanes, alias)


def test_a_broken_out_cage_splits_its_lanes_as_sonic_names_them() -> None:
    """SN5600 spine cages run 2 x 400G: cage 1 (lanes 0-7, etp1) is Ethernet0 (0-3, etp1a) and
    Ethernet4 (4-7, etp1b) in mode 2x400G (its platform.json)."""
    config_db = sonic_switches(POD)[0][1]
    assert config_db["PORT"]["Ethernet0"]["lanes"] == "0,1,2,3" and config_db["PORT"]["Ethernet4"]["lanes"] == "4,5,6,7"
    assert (config_db["PORT"]["Ethernet0"]["alias"], config_db["PORT"]["Ethernet4"]["alias"]) == ("etp1a", "etp1b")
    assert config_db["PORT"]["Ethernet0"]["speed"] == "400000"
    assert config_db["BREAKOUT_CFG"]["Ethernet0"]["brkout_mode"].startswith("2x400G")


def test_every_lane_of_the_model_belongs_to_exactly_one_port() -> None:
    for name, config_db, _ in sonic_switches(POD):
        lanes = [int(lane) for row in config_db["PORT"].values() for lane in row["lanes"].split(",")]
        model = builtin_models()["nvidia-sn5600" if "spine" in name else "arista-7060dx5-64s"]
        assert model.port_map is not None
        assert sorted(lanes) == sorted(lane for cage in model.port_map.lanes for lane in cage), name


def _inventory() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / POD / "fabric.yml").read_text(encoding="utf-8"))
    return data


def test_every_roce_value_comes_from_its_inventory_key() -> None:
    """Expected values read from the inventory file, not from the plan."""
    roce = _inventory()["roce"]
    priority, dscp = roce["no_drop_priority"], roce["dscp"]
    for name, config_db, _ in sonic_switches(POD):
        dscp_map = config_db["DSCP_TO_TC_MAP"]["ROCE"]
        data_tc = dscp_map[str(dscp["data"])]
        assert config_db["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"][data_tc] == str(priority), name
        assert config_db["MAP_PFC_PRIORITY_TO_QUEUE"]["ROCE"][str(priority)] == config_db["TC_TO_QUEUE_MAP"]["ROCE"][data_tc]
        wred = config_db["WRED_PROFILE"]["ROCE_LOSSLESS_ECN"]
        assert wred["green_min_threshold"] == str(size_bytes(roce["ecn"]["min"]))
        assert wred["green_max_threshold"] == str(size_bytes(roce["ecn"]["max"]))
        assert wred["green_drop_probability"] == str(roce["ecn"]["probability"])
        watchdog = roce["pfc_watchdog"]
        assert config_db["PFC_WD"]["GLOBAL"]["POLL_INTERVAL"] == str(watchdog["polling_ms"])
        fabric_ports = {key.split("|")[0] for key in config_db["INTERFACE"] if "|" in key}
        for port in fabric_ports:
            assert config_db["PORT_QOS_MAP"][port]["pfc_enable"] == str(priority), (name, port)
            assert config_db["PORT_QOS_MAP"][port]["pfcwd_sw_enable"] == str(priority)
            assert config_db["PFC_WD"][port]["detection_time"] == str(watchdog["timeout_ms"])
            assert config_db["PFC_WD"][port]["restoration_time"] == str(watchdog["recovery_ms"])
            assert config_db["QUEUE"][f"{port}|{config_db['TC_TO_QUEUE_MAP']['ROCE'][data_tc]}"]["wred_profile"] == "ROCE_LOSSLESS_ECN"


def test_cnp_and_network_control_are_strict_the_rest_share_by_the_plan() -> None:
    roce = _inventory()["roce"]
    config_db = sonic_switches(POD)[0][1]
    dscp_map = config_db["DSCP_TO_TC_MAP"]["ROCE"]
    schedulers = config_db["SCHEDULER"]
    assert schedulers[f"SCHEDULER_Q{dscp_map[str(roce['dscp']['cnp'])]}"] == {"type": "STRICT"}
    assert schedulers[f"SCHEDULER_Q{dscp_map['48']}"] == {"type": "STRICT"}  # CS6, network control
    data_weight = int(schedulers[f"SCHEDULER_Q{dscp_map[str(roce['dscp']['data'])]}"]["weight"])
    default_weight = int(schedulers[f"SCHEDULER_Q{dscp_map['0']}"]["weight"])
    assert data_weight + default_weight == 100 and data_weight == roce.get("bandwidth_percent", 50)


def test_frr_config_is_the_routing_of_the_plan() -> None:
    plan, _ = rendered(POD)
    for device in plan.devices:
        frr = dict((n, f) for n, _, f in sonic_switches(POD))[device.name]
        assert f"router bgp {device.asn}\n bgp router-id {device.router_id}\n" in frr
        for neighbor in device.bgp_neighbors:
            assert f" neighbor {neighbor.address} peer-group {neighbor.peer_group}\n" in frr
        assert "interface " not in frr  # addresses are config_db's
        assert f"  maximum-paths {device.maximum_paths}\n" in frr


def test_no_bgp_table_in_config_db_in_split_unified_mode() -> None:
    for _, config_db, _ in sonic_switches(POD):
        assert config_db["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == "split-unified"
        assert not any(table.startswith("BGP") for table in config_db)


def test_the_schema_cites_a_yang_file_for_every_table() -> None:
    schema = json.loads((Path(problems.__code__.co_filename).parent / "config_db.schema.json").read_text(encoding="utf-8"))
    for table, entry in schema["properties"].items():
        assert ".yang" in entry["$comment"], table


def test_review_artifacts_name_sonic_ports_as_the_configs_do() -> None:
    """NetBox, cabling and BOM read the plan, whatever the platform: SONiC's port names appear
    in the cabling exactly as in config_db's PORT table, and the SN5600 is a NetBox device type."""
    _, files = rendered(POD)
    ports = {name: set(config_db["PORT"]) for name, config_db, _ in sonic_switches(POD)}
    for row in list(csv.DictReader(io.StringIO(files["cabling.csv"])))[:64]:
        for side in ("a", "b"):
            device, port = row[f"side_{side}_device"], row[f"side_{side}_name"]
            assert device not in ports or port in ports[device], (device, port)
    assert "NVIDIA,SN5600,sn5600" in files["netbox-device-types.csv"]
    assert "OSFP-800G-2xDR4" in files["bom.csv"]


def test_diff_shows_each_sonic_file(tmp_path: Path) -> None:
    """`fabricgen diff` between two revisions: a changed leaf ASN shows in its frr.conf and in
    its config_db.json (DEVICE_METADATA bgp_asn), each file named."""
    changed = tmp_path / "pod-sonic"
    changed.mkdir()
    text = (ROOT / POD / "fabric.yml").read_text(encoding="utf-8")
    (changed / "fabric.yml").write_text(text.replace("leaf_asn: 65501", "leaf_asn: 65401"), encoding="utf-8")
    old, _ = rendered(POD)
    diff = diff_plans(old, load_and_plan(changed).plan)
    leaf = diff.config_diffs["pod5-leaf01"]
    assert "+++ b/configs/pod5-leaf01/frr.conf\n" in leaf and "+router bgp 65401\n" in leaf
    assert "+++ b/configs/pod5-leaf01/config_db.json\n" in leaf and '+            "bgp_asn": "65401",\n' in leaf


def test_lossless_buffers_hold_the_plans_headroom_where_the_sku_states_its_pools() -> None:
    """SN5600 spines: priority group 3 of every RoCE port gets a profile whose xoff is the plan's
    headroom of that port and whose xon is ACS-SN5600's pg_profile_lookup.ini figure for 400G
    (19456), size their sum (as the SKU's own rows); the leaves' SKU states no pools: no table."""
    plan, _ = rendered(POD)
    configs = {name: config_db for name, config_db, _ in sonic_switches(POD)}
    priority = _inventory()["roce"]["no_drop_priority"]
    for device in plan.devices:
        config_db = configs[device.name]
        if "leaf" in device.name:
            assert not any(table.startswith("BUFFER") for table in config_db)
            continue
        for interface in (i for i in device.interfaces if i.roce):
            profile = config_db["BUFFER_PROFILE"][config_db["BUFFER_PG"][f"{interface.name}|{priority}"]["profile"]]
            assert profile["xoff"] == str(interface.pfc_headroom_bytes) and interface.pfc_headroom_bytes > 0
            assert (profile["xon"], profile["size"]) == ("19456", str(19456 + interface.pfc_headroom_bytes))
            assert config_db["BUFFER_QUEUE"][f"{interface.name}|{config_db['TC_TO_QUEUE_MAP']['ROCE'][str(priority)]}"] == {
                "profile": "egress_lossless_profile"
            }
        assert config_db["BUFFER_POOL"]["ingress_lossless_pool"]["size"] == "52161690"
