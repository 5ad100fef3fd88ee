"""The post-check filters (fabricgen.push.postchecks, each platform's generated from its driver) on `show ... | json` outputs.

The samples follow the JSON shapes EOS eAPI and NX-API return for these commands (EOS: dicts
keyed by peer / interface; NX-OS: TABLE_x / ROW_x with a single row as a dict and several as a
list). They were written from those shapes, not captured from a switch in this repository:
docs/deploy.md asks to confirm them on the first canary. Every check fails closed.
"""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest

from fabricgen.push import postchecks as pc

FILTERS = pc.ansible_filters()

EOS_BGP: dict[str, Any] = {
    "vrfs": {
        "default": {
            "routerId": "10.20.0.11",
            "vrf": "default",
            "asn": "65101",
            "peers": {
                "10.21.0.0": {"peerState": "Established", "asn": "65000", "prefixReceived": 3, "underMaintenance": False},
                "10.21.0.2": {"peerState": "Active", "asn": "65000", "prefixReceived": 0, "underMaintenance": False},
            },
        }
    }
}

NXOS_BGP_ONE_ROW: dict[str, Any] = {
    "TABLE_vrf": {
        "ROW_vrf": {
            "vrf-name-out": "default",
            "vrf-router-id": "10.20.0.21",
            "vrf-local-as": "65101",
            "TABLE_af": {
                "ROW_af": {
                    "af-id": "1",
                    "TABLE_saf": {
                        "ROW_saf": {
                            "safi": "1",
                            "af-name": "IPv4 Unicast",
                            "TABLE_neighbor": {"ROW_neighbor": {"neighborid": "10.21.0.0", "neighboras": "65000", "state": "Established"}},
                        }
                    },
                }
            },
        }
    }
}

NXOS_BGP_ROWS = copy.deepcopy(NXOS_BGP_ONE_ROW)
NXOS_BGP_ROWS["TABLE_vrf"]["ROW_vrf"]["TABLE_af"]["ROW_af"]["TABLE_saf"]["ROW_saf"]["TABLE_neighbor"]["ROW_neighbor"] = [
    {"neighborid": "10.21.0.0", "neighboras": "65000", "state": "Established"},
    {"neighborid": "10.21.0.2", "neighboras": "65000", "state": "Idle"},
]

EOS_STATUS = {
    "interfaceStatuses": {
        "Ethernet1/1": {"linkStatus": "connected", "lineProtocolStatus": "up", "bandwidth": 400000000000},
        "Ethernet2/1": {"linkStatus": "notconnect", "lineProtocolStatus": "down", "bandwidth": 400000000000},
    }
}

NXOS_BRIEF = {
    "TABLE_interface": {
        "ROW_interface": [
            {"interface": "mgmt0", "state": "up", "ip_addr": "192.168.20.21", "speed": "1000", "mtu": 1500},
            {"interface": "Ethernet1/61", "vlan": "--", "type": "eth", "portmode": "routed", "state": "up", "state_rsn_desc": "none"},
            {
                "interface": "Ethernet1/62",
                "vlan": "--",
                "type": "eth",
                "portmode": "routed",
                "state": "down",
                "state_rsn_desc": "Link not connected",
            },
        ]
    }
}

NXOS_PFC_ONE_ROW = {"TABLE_entry": {"ROW_entry": {"intf-name": "Ethernet1/61", "mode": "On", "oper": "On"}}}


def test_nxos_rows_single_dict_and_list() -> None:
    assert [r["neighborid"] for r in FILTERS["fabricgen_nxos_rows"](NXOS_BGP_ONE_ROW, "neighbor")] == ["10.21.0.0"]
    assert [r["neighborid"] for r in FILTERS["fabricgen_nxos_rows"](NXOS_BGP_ROWS, "ROW_neighbor")] == ["10.21.0.0", "10.21.0.2"]
    assert FILTERS["fabricgen_nxos_rows"]({}, "neighbor") == []
    assert FILTERS["fabricgen_nxos_rows"]({"TABLE_neighbor": {"ROW_neighbor": None}}, "neighbor") == []


def test_bgp_established_missing_and_down() -> None:
    planned = [{"address": "10.21.0.0"}, {"address": "10.21.0.2"}, {"address": "10.21.0.4"}]
    assert FILTERS["fabricgen_eos_bgp_problems"](EOS_BGP, planned) == ["10.21.0.2 (Active)", "10.21.0.4 (not configured)"]
    assert FILTERS["fabricgen_nxos_bgp_problems"](NXOS_BGP_ROWS, planned) == ["10.21.0.2 (Idle)", "10.21.0.4 (not configured)"]
    assert FILTERS["fabricgen_nxos_bgp_problems"](NXOS_BGP_ONE_ROW, ["10.21.0.0"]) == []
    assert FILTERS["fabricgen_eos_bgp_problems"]({}, ["10.21.0.0"]) == ["10.21.0.0 (not configured)"]  # fails closed


def test_interfaces_up() -> None:
    assert FILTERS["fabricgen_eos_interface_problems"](EOS_STATUS, ["Ethernet1/1", "Ethernet2/1", "Ethernet3/1"]) == [
        "Ethernet2/1 (notconnect)",
        "Ethernet3/1 (missing)",
    ]
    assert FILTERS["fabricgen_nxos_interface_problems"](NXOS_BRIEF, ["Ethernet1/61", "Ethernet1/62"]) == ["Ethernet1/62 (down)"]
    # NX-OS / EOS abbreviations compare equal to the planned full names
    assert (
        FILTERS["fabricgen_nxos_interface_problems"](
            {"TABLE_interface": {"ROW_interface": {"interface": "Eth1/61", "state": "up"}}}, ["Ethernet1/61"]
        )
        == []
    )


def test_pfc() -> None:
    eos = {"interfaceStatuses": {"Ethernet1/1": {"enabled": True}, "Ethernet2/1": {"enabled": False}}}
    assert FILTERS["fabricgen_eos_pfc_problems"](eos, ["Ethernet1/1", "Ethernet2/1", "Ethernet9/1"]) == [
        "Ethernet2/1 (PFC off)",
        "Ethernet9/1 (missing)",
    ]
    assert FILTERS["fabricgen_nxos_pfc_problems"](NXOS_PFC_ONE_ROW, ["Ethernet1/61"]) == []
    off = {"TABLE_entry": {"ROW_entry": [{"intf-name": "Ethernet1/61", "mode": "On", "oper": "Off"}]}}
    assert FILTERS["fabricgen_nxos_pfc_problems"](off, ["Ethernet1/61"]) == ["Ethernet1/61 (PFC off)"]


def test_combined_problems_prefix_each_check() -> None:
    outputs = {"bgp": EOS_BGP, "interfaces": EOS_STATUS}
    problems = FILTERS["fabricgen_eos_problems"](outputs, ["10.21.0.0", "10.21.0.2"], ["Ethernet1/1"], [])
    assert problems == ["bgp: 10.21.0.2 (Active)"]
    assert FILTERS["fabricgen_eos_problems"]({"bgp": "not json"}, ["10.21.0.0"]) == ["bgp: expected JSON output, got str"]
    assert FILTERS["fabricgen_nxos_problems"]({"bgp": NXOS_BGP_ONE_ROW, "pfc": NXOS_PFC_ONE_ROW}, ["10.21.0.0"], [], ["Ethernet1/61"]) == []
    assert FILTERS["fabricgen_nxos_problems"]({"mtu": {}}) == ["mtu: unknown post-check"]


def test_device_diffs() -> None:
    session = "--- system:/running-config\n+++ session:/fg_CHG1\n@@ -1,3 +1,3 @@\n hostname leaf1\n-username old\n+username new\n"
    assert FILTERS["fabricgen_eos_session_diff_lines"](session) == ["-username old", "+username new"]
    assert FILTERS["fabricgen_eos_session_diff_lines"]("") == []
    assert FILTERS["fabricgen_nxos_patch_lines"]("Collecting Running-Config\n#Generating Rollback Patch\nRollback Patch is Empty\n") == []
    patch = "Collecting Running-Config\n#Generating Rollback Patch\n!!\ninterface Ethernet1/61\n  mtu 9216\n"
    assert FILTERS["fabricgen_nxos_patch_lines"](patch) == ["interface Ethernet1/61", "  mtu 9216"]


def test_config_lines_drop_comments_and_end_keep_indentation() -> None:
    text = "! device: leaf1\nhostname leaf1\n!\ninterface Ethernet1/1\n   mtu 9214\n!\nend\n"
    assert pc.config_lines(text) == ["hostname leaf1", "interface Ethernet1/1", "   mtu 9214"]


@pytest.mark.parametrize(
    ("old", "new", "restart"),
    [
        ("sm_priority 14\nlmc 0\n", "sm_priority 15\nlmc 0\n", False),  # SIGHUP-able option
        ("routing_engine ftree\n", "routing_engine updn\n", True),  # read at start only
        ("lmc 0\n", "lmc 0\n# comment\n", False),  # nothing changed
        ("", "made_up_option 1\n", True),  # unknown options count as restart-only
        ("sweep_interval 10 # trailing comment\n", "sweep_interval 10\n", False),  # OpenSM takes the first token
    ],
)
def test_opensm_restart_needed(old: str, new: str, restart: bool) -> None:
    assert pc.opensm_restart_needed(old, new, ["sm_priority", "sweep_interval"]) is restart


def test_filters_are_exposed_to_ansible() -> None:
    filters = pc.ansible_filters()
    assert {"fabricgen_eos_problems", "fabricgen_nxos_patch_lines", "fabricgen_eos_session_diff_lines", "fabricgen_config_lines"} <= set(
        filters
    )
    assert all(name.startswith("fabricgen_") for name in filters)


def test_checksums_decide_whether_a_backup_is_needed(tmp_path: Path) -> None:
    (tmp_path / "opensm.conf").write_text("lmc 0\n")
    rendered = pc.local_checksums(str(tmp_path), ["opensm.conf"])
    assert rendered == {"opensm.conf": hashlib.sha1(b"lmc 0\n").hexdigest()}
    found = {
        "files": [
            {"path": "/etc/opensm/opensm.conf", "checksum": rendered["opensm.conf"]},
            {"path": "/etc/opensm/partitions.conf", "checksum": "bb"},
        ]
    }
    live = pc.live_checksums(found)
    assert not pc.checksums_differ(rendered, live)
    assert pc.checksums_differ({"partitions.conf": "cc"}, live)
    assert pc.checksums_differ({"qos-policy.conf": "dd"}, live)  # new file on the SM host
