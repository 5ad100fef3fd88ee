"""The post-check parsers on show-command JSON in the vendors' real shapes, and the STAND-IN
devices answering in those shapes (tests/data/show/README.md names the source of each shape).

Expected values are read off the fixtures by hand here, not computed by the code under test.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fabricgen import platforms as registry
from fabricgen.push import baseline
from tests.standins.device_api import EosApi, NxosApi, StandinDevice

SHOW = Path(__file__).parent / "data" / "show"


def _load(name: str) -> Any:
    return json.loads((SHOW / name).read_text())


def test_eos_lldp_real_shape() -> None:
    assert registry.driver("eos").lldp_neighbors(_load("eos_show_lldp_neighbors.json")) == {
        "ethernet1/1": ("lab1-leaf01", "ethernet1/1"),  # the domain of the system name is dropped
        "ethernet2/1": ("lab1-leaf02", "ethernet1/1"),
        "management1": ("oob-sw01", "0800.274f.332d"),
    }


def test_nxos_lldp_real_shape_short_local_names_and_a_mac_port() -> None:
    assert registry.driver("nxos").lldp_neighbors(_load("nxos_show_lldp_neighbors.json")) == {
        "ethernet1/1": ("lab1-spine01", "ethernet1/1"),  # l_port_id is Eth1/1: the same port as Ethernet1/1
        "ethernet1/2": ("lab1-spine02", "ethernet1/1"),
        "ethernet1/33": ("gpu-host-a", "5254.0005.1632"),
    }


def test_lldp_of_the_real_shapes_against_a_cabling_plan() -> None:
    plan = [
        {"interface": "Ethernet1/1", "peer": "lab1-spine01", "peer_interface": "Ethernet1/1"},
        {"interface": "Ethernet1/2", "peer": "lab1-spine02", "peer_interface": "Ethernet1/2"},  # miscabled in the fixture
    ]
    problems = baseline.switch_problems({}, {"lldp": _load("nxos_show_lldp_neighbors.json")}, lldp_plan=plan, platform="nxos")
    assert problems == ["lldp: Ethernet1/2 sees lab1-spine02 ethernet1/1, the cabling plan says lab1-spine02 Ethernet1/2"]


def test_eos_bgp_summary_real_shape() -> None:
    sessions = registry.driver("eos").bgp_sessions(_load("eos_show_ip_bgp_summary.json"))
    assert {a: (s.state, s.prefixes) for a, s in sessions.items()} == {"10.21.0.1": ("Established", 3), "10.21.0.3": ("Active", 0)}


def test_nxos_bgp_summary_real_shape_counts_are_strings() -> None:
    sessions = registry.driver("nxos").bgp_sessions(_load("nxos_show_ip_bgp_summary.json"))
    assert {a: (s.state, s.prefixes) for a, s in sessions.items()} == {"10.21.0.0": ("Established", 13), "10.21.0.4": ("Idle", 0)}
    before = {"bgp": _load("nxos_show_ip_bgp_summary.json")}
    neighbors = [{"address": "10.21.0.0", "peer": "lab1-spine01"}, {"address": "10.21.0.4", "peer": "lab1-spine02"}]
    # spine02 is on the new config and its session is Idle: that fails; the Established one with 13 prefixes passes
    assert baseline.switch_problems(before, before, neighbors, ["lab1-spine01", "lab1-spine02"], platform="nxos") == [
        "bgp: 10.21.0.4 (lab1-spine02, already on the new config) is Idle"
    ]


# --- the stand-ins answer in the same shapes -----------------------------------------------------


class _Fixed:
    """Routing state with fixed answers, to read the stand-ins' output shapes."""

    def apply(self, device: StandinDevice) -> None:
        pass

    def bgp(self, device: StandinDevice) -> dict[str, tuple[str, int, str]]:
        return {"10.21.0.0": ("Established", 2, "65000"), "10.21.0.4": ("Active", 0, "65000")}

    def lldp(self, device: StandinDevice) -> list[tuple[str, str, str]]:
        return [("Ethernet1/1", "lab1-spine01", "Ethernet1/1"), ("Ethernet1/2", "lab1-spine02", "Ethernet1/1")]

    def interfaces(self, device: StandinDevice) -> dict[str, str]:
        return {"Ethernet1/1": "up"}


def _device(platform: str) -> StandinDevice:
    return StandinDevice("lab1-x", platform, neighbors=[], fabric_interfaces=[], roce_interfaces=[], routing=_Fixed())


def _rows(data: Any, table: str) -> list[dict[str, Any]]:
    from fabricgen.platforms.nxos.driver import rows

    return rows(data, table)


@pytest.mark.parametrize(
    ("platform", "command", "fixture"),
    [
        ("eos", "show lldp neighbors", "eos_show_lldp_neighbors.json"),
        ("eos", "show ip bgp summary", "eos_show_ip_bgp_summary.json"),
        ("nxos", "show lldp neighbors", "nxos_show_lldp_neighbors.json"),
        ("nxos", "show ip bgp summary", "nxos_show_ip_bgp_summary.json"),
    ],
)
def test_the_standins_answer_in_the_real_shape(platform: str, command: str, fixture: str) -> None:
    device = _device(platform)
    answer = EosApi(device).run([command], "json")[0] if platform == "eos" else NxosApi(device).run(command)
    real = _load(fixture)
    if platform == "eos" and "lldp" in command:
        assert set(answer) == set(real)
        assert {frozenset(e) for e in answer["lldpNeighbors"]} == {frozenset(e) for e in real["lldpNeighbors"]}
    elif platform == "eos":
        mine, theirs = answer["vrfs"]["default"], real["vrfs"]["default"]
        assert set(mine) == set(theirs)
        assert {frozenset(p) for p in mine["peers"].values()} == {frozenset(p) for p in theirs["peers"].values()}
        assert {type(v) for p in mine["peers"].values() for v in p.values()} <= {str, int, float, bool}
    elif "lldp" in command:
        assert set(answer) == set(real)
        assert {frozenset(r) for r in _rows(answer, "nbor")} == {frozenset(r) for r in _rows(real, "nbor")}
        assert [r["l_port_id"] for r in _rows(answer, "nbor")] == ["Eth1/1", "Eth1/2"]  # NX-OS's short local names
    else:
        assert {frozenset(r) for r in _rows(answer, "neighbor")} == {frozenset(r) for r in _rows(real, "neighbor")}
        assert all(isinstance(r["prefixreceived"], str) for r in _rows(answer, "neighbor"))
        for table in ("vrf", "af", "saf"):
            assert set(_rows(answer, table)[0]) <= set(_rows(real, table)[-1]), table
    # and the parser reads the stand-in's answer to the same sessions / neighbors it was given
    if "lldp" in command:
        assert registry.driver(platform).lldp_neighbors(answer) == {
            "ethernet1/1": ("lab1-spine01", "ethernet1/1"),
            "ethernet1/2": ("lab1-spine02", "ethernet1/1"),
        }
    else:
        sessions = registry.driver(platform).bgp_sessions(answer)
        assert {a: (s.state, s.prefixes) for a, s in sessions.items()} == {"10.21.0.0": ("Established", 2), "10.21.0.4": ("Active", 0)}


# --- the NX-OS stand-in refuses a replace file that is not a complete running config ----------


def test_the_nxos_standin_refuses_a_partial_replace_file_before_and_at_the_replace() -> None:
    from tests.standins.device_api import CommandError

    device = StandinDevice("lab1-leaf01", "nxos", neighbors=[], fabric_interfaces=[], roce_interfaces=[])
    api = NxosApi(device)
    full = device.running.replace("hostname lab1-leaf01\n", "hostname lab1-leaf01\ninterface Ethernet1/1\n  mtu 9216\n")
    device.bootflash["full.cfg"] = full
    assert "interface Ethernet1/1" in api.run("configure replace bootflash:full.cfg show-patch")
    # the rendered file alone (no version line, no boot variable): refused, nothing changes
    device.bootflash["partial.cfg"] = "hostname lab1-leaf01\ninterface Ethernet1/1\n  mtu 9216\n"
    for command in ("configure replace bootflash:partial.cfg show-patch", "configure replace bootflash:partial.cfg commit-timeout 600"):
        with pytest.raises(CommandError, match=r"is not a complete running configuration \(no a 'version' line, no 'boot nxos "):
            api.run(command)
    assert device.pending is None and not device.changed
    device.bootflash["noboot.cfg"] = "\n".join(line for line in full.splitlines() if not line.startswith("boot "))
    with pytest.raises(CommandError, match=r"\(no 'boot nxos bootflash:/nxos64-cs.10.4.3.F.bin'\)"):
        api.run("configure replace bootflash:noboot.cfg commit-timeout 600")
    assert api.run("configure replace bootflash:full.cfg commit-timeout 600").startswith("Configure replace completed")
