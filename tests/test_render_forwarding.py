"""How the rendered configs spread and classify traffic, read back from the config text
(docs/render.md, "ECMP hash", "Dynamic load balancing", "DCBX", "Section order"):

- the ECMP hash includes the UDP source port (RoCEv2's entropy) on every platform and silicon
  family that has a command for it, and nothing is printed where none is known;
- `roce.load_balancing: flowlet` turns on NX-OS dynamic load balancing on exactly the
  switch-facing ports, and is refused on a model without it;
- `roce.dcbx` puts IEEE DCBX on exactly the RoCE host ports of EOS leaves (warned on NX-OS);
- top-level sections come in the order the switch prints `show running-config`.

Expected commands and orders are written here from the vendor sources docs/render.md cites,
not read from fabricgen's platform data.
"""

from __future__ import annotations

import re
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hier_config import HConfig, Platform, get_hconfig

from fabricgen.cli import main
from fabricgen.core.catalog import platforms
from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from tests.conftest import ROOT
from tests.fabrics import fabric, write
from tests.render_cases import device_configs, inventory_ids, rendered

HIER = {"eos": Platform.ARISTA_EOS, "nxos": Platform.CISCO_NXOS}
ECMP_HASH = {
    ("eos", "trident"): "port-channel load-balance trident fields ip source-ip destination-ip source-port destination-port",
    ("nxos", "trident"): "ip load-sharing address source-destination port source-destination",
}
"""(platform, silicon family) -> the hash command with L4 ports: the Trident/Tomahawk hash fields
(public EOS running configs; the hash is shared by LAG and ECMP), the N9K unicast FIB load
sharing. Jericho (Sand) has none confirmed: nothing may be printed there."""

EOS_ORDER = [
    r"service routing protocols model",
    r"lldp ",
    r"logging ",
    r"hostname ",
    r"ip name-server ",
    r"dns domain ",
    r"qos profile ",
    r"port-channel load-balance ",
    r"clock timezone ",
    r"vlan \d",
    r"vrf instance ",
    r"management api http-commands",
    r"interface Ethernet",
    r"interface Loopback",
    r"interface Management",
    r"interface Vlan",
    r"ip access-list ",
    r"ip routing$",
    r"no ip routing vrf ",
    r"ip prefix-list ",
    r"ip community-list ",
    r"ip route ",
    r"ntp ",
    r"qos map ",
    r"priority-flow-control ",
    r"route-map ",
    r"router bfd",
    r"router bgp ",
    r"maintenance$",
    r"system control-plane$",
    r"end$",
]
"""EOS `show running-config` order of the sections fabricgen prints: AVD eos_cli_config_gen
`eos-intended-config.j2` include order (which mirrors the device; port-channel load-balance sits
after spanning-tree and before system l1/clock there). `ip access-list` after the interfaces and
before `ip routing` (AVD's ip-access-lists before ip-routing); `system control-plane` last is
not confirmed in a source."""

NXOS_ORDER = [
    r"hostname ",
    r"feature ",
    r"bfd interval ",
    r"class-map ",
    r"policy-map ",
    r"system qos",
    r"priority-flow-control ",
    r"ntp server ",
    r"ip load-sharing ",
    r"vlan \d",
    r"ip access-list ",
    r"ip community-list ",
    r"ip prefix-list ",
    r"route-map ",
    r"vrf context ",
    r"hardware profile dlb",
    r"interface breakout ",
    r"interface Vlan",
    r"interface Ethernet",
    r"interface mgmt",
    r"interface loopback",
    r"line vty$",
    r"router bgp ",
    r"logging server ",
]
"""NX-OS `show running-config` order: hostname, features, QoS class/policy maps and `system qos`
before NTP, VLANs before route-maps and `vrf context`, SVIs before Ethernet ports, mgmt0 before
loopback0, routing processes last (public NX-OS 9.2-9.3 `show running-config` outputs,
docs/render.md "What a device config contains"). The global PFC watchdog lines sit after
`system qos`, where fabricgen prints them; their place is not confirmed in a source, nor that of
the vty ACL (`ip access-list` after the VLANs) and `line vty` (after the interfaces, before the
routing processes, as public outputs print `line console` / `line vty` / `boot`)."""


def _top_level(config: str) -> list[str]:
    return [line for line in config.splitlines() if line and not line[0].isspace() and not line.startswith("!")]


def _rank(line: str, order: list[str]) -> int:
    ranks = [i for i, pattern in enumerate(order) if re.match(pattern, line)]
    assert ranks, f"a top-level line no section order knows: {line!r}"
    return ranks[0]


@pytest.mark.parametrize("inventory", inventory_ids())
def test_sections_follow_the_running_config_order(inventory: str) -> None:
    """Every config's top-level lines rank in the switch's own order, so `diff --running` against
    a device backup shows changed lines, not moved blocks."""
    for device, text in device_configs(inventory):
        order = EOS_ORDER if device.platform == "eos" else NXOS_ORDER
        ranks = [_rank(line, order) for line in _top_level(text)]
        moved = [(a, b) for a, b in pairwise(ranks) if b < a]
        assert not moved, f"{device.name}: {[(order[a], order[b]) for a, b in moved][:3]}"


@pytest.mark.parametrize("inventory", inventory_ids())
def test_ecmp_hash_includes_the_udp_source_port(inventory: str) -> None:
    plan, _ = rendered(inventory)
    family = {m.name: m.queue_family for m in plan.models}
    for device, text in device_configs(inventory):
        lines = _top_level(text)
        hashes = [line for line in lines if line.startswith(("port-channel load-balance", "ip load-sharing", "load-balance"))]
        expected = ECMP_HASH.get((device.platform, family[device.model]))
        assert hashes == ([expected] if expected else []), device.name
        if expected:
            assert "source-port" in expected or "port source-destination" in expected


def _variant(tmp_path: Path, platform: str, roce: dict[str, Any], name: str = "fabric.yml") -> Path:
    models = {"eos": ("arista-7060dx5-64s", "arista-7060x6-64pe"), "nxos": ("cisco-n9k-9364d-gx2a", "cisco-n9k-9332d-gx2b")}[platform]
    doc = fabric(
        leaves={"count": 4, "model": models[0], "platform": platform},
        spines={"count": 2, "model": models[1], "platform": platform},
        uplinks={"per_spine": 2, "speed": "400G"},
        roce=roce,
    )
    return write(tmp_path, doc, name)


def _render(path: Path) -> tuple[Plan, dict[str, HConfig]]:
    plan = load_and_plan(path).plan
    files = render_files(plan, RenderContext())
    return plan, {d.name: get_hconfig(HIER[d.platform], files[f"configs/{d.name}.cfg"]) for d in plan.devices}


def _switch_ports(plan: Plan) -> dict[str, set[str]]:
    """Each switch's ends of switch-to-switch cables, from the plan's links (not its interfaces)."""
    switches = {d.name for d in plan.devices}
    ports: dict[str, set[str]] = {name: set() for name in switches}
    for link in plan.links:
        if link.a.device in switches and link.z.device in switches:
            ports[link.a.device].add(link.a.interface)
            ports[link.z.device].add(link.z.interface)
    return ports


def test_flowlet_load_balancing_runs_on_the_switch_facing_ports(tmp_path: Path) -> None:
    """NX-OS `hardware profile dlb` with `mode flowlet` lists every switch-facing port of a
    device (the members of its ECMP groups) and no server port; off by default."""
    plan, configs = _render(_variant(tmp_path, "nxos", {"load_balancing": "flowlet"}))
    expected = _switch_ports(plan)
    for name, config in configs.items():
        dlb = config.get_child(equals="hardware profile dlb")
        assert dlb is not None, name
        lines = [c.text for c in dlb.children]
        assert "mode flowlet" in lines, name
        members = [line.removeprefix("dlb-interface ") for line in lines if line.startswith("dlb-interface ")]
        assert len(members) == 1, name
        assert set(members[0].split(" , ")) == expected[name], name
    _, plain = _render(_variant(tmp_path, "nxos", {}, "plain.yml"))
    assert not any(c.get_child(startswith="hardware profile dlb") for c in plain.values())


def test_flowlet_is_refused_on_a_model_without_it(tmp_path: Path) -> None:
    path = _variant(tmp_path, "eos", {"load_balancing": "flowlet"})
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2, result.output
    assert re.search(r"fabric\.yml:\d+:\d+: roce\.load_balancing: flowlet load balancing is not available on arista-7060", result.stderr)
    assert "hint: use roce.load_balancing: hash" in result.stderr


def test_dcbx_runs_on_the_roce_host_ports_of_eos_leaves(tmp_path: Path) -> None:
    plan, configs = _render(_variant(tmp_path, "eos", {"dcbx": True}))
    switch_ports = _switch_ports(plan)
    host_ports = {(nic.leaf, nic.leaf_interface) for server in plan.servers for nic in server.nics}
    assert host_ports
    for name, config in configs.items():
        for child in config.children:
            if not child.text.startswith("interface Ethernet"):
                continue
            port = child.text.removeprefix("interface ")
            dcbx = "dcbx mode ieee" in [c.text for c in child.children]
            assert dcbx == ((name, port) in host_ports), (name, port)
            assert not (dcbx and port in switch_ports[name])
    _, plain = _render(_variant(tmp_path, "eos", {}, "plain.yml"))
    assert not any("dcbx" in line.text for c in plain.values() for line in c.all_children())


def test_dcbx_on_nxos_is_warned_and_renders_nothing(tmp_path: Path) -> None:
    path = _variant(tmp_path, "nxos", {"dcbx": True})
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert re.search(r"fabric\.yml:\d+:\d+: warning: roce\.dcbx: Cisco NX-OS has no per-port DCBX command", result.stderr)
    _, configs = _render(path)
    assert not any("dcbx" in line.text for c in configs.values() for line in c.all_children())


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_device_template_includes_the_sections_in_platform_order(platform: str) -> None:
    """`device.j2` keeps literal whole-line includes (pasted at load time for speed); they must
    be exactly the platform's `config_sections`, the order the tests above check."""
    text = (ROOT / "templates" / platform / "device.j2").read_text(encoding="utf-8")
    included = re.findall(r'^\{% include "' + platform + r'/([a-z-]+)\.j2" %\}$', text, re.MULTILINE)
    assert included == list(platforms()[platform].config_sections)
