"""Cross-check with the vendors' own parsers: every rendered EOS and NX-OS config of the
examples goes through the arista.eos / cisco.nxos resource modules in `state: parsed` (their
real `main()`, in-process, no device), each fed the section its `show running-config` filter
returns. What they read back must equal the plan: interfaces, /31 addresses, MTU, loopback,
management address, BGP ASN, router id, neighbors and their remote-as, ECMP width, and an
advertisement policy that lets out the loopback and server subnets and nothing of the fabric."""

from __future__ import annotations

import contextlib
import importlib
import io
import ipaddress
import json
from typing import Any

import pytest

from fabricgen.core.model import Device
from tests.render_cases import blocks, device_configs, inventory_ids, rendered, sample, section
from tests.standins.parsers import eos_bestpath_as_path

basic = pytest.importorskip("ansible.module_utils.basic", reason="needs the deploy extra (ansible)")
pytest.importorskip("ansible_collections.arista.eos", reason="needs the deploy extra (ansible)")

# What each resource module's facts code asks the device for (`show running-config | section ...`).
INTERFACE_SECTION = r"^interface"
BGP_SECTION = r"^router bgp"


def parsed(collection: str, module: str, running_config: str) -> Any:
    """Run `<collection>.<module>` with state=parsed exactly as Ansible would, return `parsed`."""
    code = importlib.import_module(f"ansible_collections.{collection}.plugins.modules.{module}")
    args = {"ANSIBLE_MODULE_ARGS": {"state": "parsed", "running_config": running_config}}
    saved = basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE
    basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE = json.dumps(args).encode(), "legacy"
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exited:
            code.main()
    finally:
        basic._ANSIBLE_ARGS, basic._ANSIBLE_PROFILE = saved
    result = json.loads(out.getvalue())
    assert exited.value.code == 0, result.get("msg")
    return result["parsed"]


def _expected_l3(device: Device, management_name: str, loopback_name: str) -> dict[str, str]:
    expected = {i.name: f"{i.address}/{i.prefix_length}" for i in device.interfaces if not i.vlan}
    expected[loopback_name] = f"{device.loopback}/32"
    if device.management:
        expected[management_name] = f"{device.management}/{device.management_prefix_length}"
    return expected


CASES = [(inventory, device.name) for inventory in inventory_ids() for device in sample([d for d, _ in device_configs(inventory)])]


def _case(inventory: str, name: str) -> tuple[Device, str]:
    return next((d, c) for d, c in device_configs(inventory) if d.name == name)


@pytest.mark.parametrize(("inventory", "name"), CASES)
def test_vendor_parsers_read_back_the_plan(inventory: str, name: str) -> None:
    device, config = _case(inventory, name)
    if device.platform == "eos":
        _check_eos(device, config)
    else:
        assert device.platform == "nxos"
        _check_nxos(device, config)


ACL_SECTION = {"eos": ("arista.eos", "eos_acls", r"access-list"), "nxos": ("cisco.nxos", "nxos_acls", r"^ip(v6)* access-list")}


@pytest.mark.parametrize(("inventory", "name"), CASES)
def test_vendor_parsers_read_the_control_plane_acl(inventory: str, name: str) -> None:
    """arista.eos `eos_acls` / cisco.nxos `nxos_acls` read each rule of the rendered ACL as the
    plan has it: action, protocol, source, ports, `tracked`."""
    device, config = _case(inventory, name)
    acl = rendered(inventory)[0].control_plane_acl(device.platform)
    collection, module, pattern = ACL_SECTION[device.platform]
    facts = parsed(collection, module, section(config, pattern))
    if acl is None:
        assert not facts
        return
    (found,) = [a for group in facts for a in group["acls"] if a["name"] == acl.name]
    read = [
        (
            ace["sequence"],
            ace["grant"],
            ace["protocol"],
            ace["source"].get("subnet_address") or ace["source"].get("prefix") or ("any" if ace["source"].get("any") else "?"),
            ace["source"].get("port_protocol", {}).get("eq", "").replace("_", "-"),
            ace["destination"].get("port_protocol", {}).get("eq", "").replace("_", "-"),
            bool(ace.get("tracked")),
        )
        for ace in found["aces"]
    ]
    expected = [(e.sequence, e.action, e.protocol, e.source, e.source_port_text, e.port_text, e.tracked) for e in acl.entries]
    assert read == expected


def _check_eos(device: Device, config: str) -> None:
    interfaces = section(config, INTERFACE_SECTION)
    facts = {i["name"]: i for i in parsed("arista.eos", "eos_interfaces", interfaces)}
    for interface in device.interfaces:
        got = facts[interface.name]
        assert got["mtu"] == interface.mtu
        assert got["description"] == interface.description
        assert got["mode"] == ("layer2" if interface.vlan else "layer3") or not interface.port
    assert "Loopback0" in facts and "Management1" in facts
    l3 = {i["name"]: [a["address"] for a in i.get("ipv4", [])] for i in parsed("arista.eos", "eos_l3_interfaces", interfaces)}
    for name, address in _expected_l3(device, "Management1", "Loopback0").items():
        assert l3[name] == [address], name
    for interface in device.interfaces:
        if interface.role in ("uplink", "downlink", "server"):
            assert interface.prefix_length == 31

    router, as_path = eos_bestpath_as_path(section(config, BGP_SECTION))
    assert as_path == (["multipath-relax"] if device.as_path_multipath_relax else [])
    bgp = parsed("arista.eos", "eos_bgp_global", router)
    assert int(bgp["as_number"]) == device.asn
    assert bgp["router_id"] == device.router_id
    assert bgp["maximum_paths"] == {"max_equal_cost_paths": device.maximum_paths, "max_installed_ecmp_paths": device.maximum_paths}
    entries = {n["neighbor_address"]: n for n in bgp["neighbor"]}
    groups = {g.name for g in device.peer_groups}
    assert {a for a in entries if a not in groups} == {n.address for n in device.bgp_neighbors}
    for neighbor in device.bgp_neighbors:
        entry = entries[neighbor.address]
        assert entry["peer_group"] == neighbor.peer_group
        remote_as = entry.get("remote_as") or entries[neighbor.peer_group].get("remote_as")
        assert int(remote_as) == neighbor.remote_asn, neighbor.address
        assert neighbor.remote_asn != device.asn  # eBGP only, no iBGP between spines

    assert len(bgp["redistribute"]) == 1 and bgp["redistribute"][0]["protocol"] == "connected"
    route_map = bgp["redistribute"][0]["route_map"]
    (rm,) = [r for r in parsed("arista.eos", "eos_route_maps", section(config, r"^route-map ")) if r["route_map"] == route_map]
    (entry,) = rm["entries"]
    assert entry["action"] == "permit"
    prefix_list = entry["match"]["ip"]["address"]["prefix_list"]
    (lists,) = parsed("arista.eos", "eos_prefix_lists", section(config, r"prefix-list"))
    (pl,) = [p for p in lists["prefix_lists"] if p["name"] == prefix_list]
    rules = [(e["action"], e["address"], e.get("match", {}).get("masklen")) for e in pl["entries"]]
    _check_advertisement(device, rules)


def _check_advertisement(device: Device, rules: list[tuple[str, str, int | None]]) -> None:
    """The prefix list (as the vendor parser read it) equals the plan's entries, lets out the
    loopback and every server subnet, and keeps every fabric /31 in."""
    assert [f"{address}{f' le {le}' if le else ''}" for _, address, le in rules] == list(device.advertised_prefixes)

    def permitted(prefix: str) -> bool:
        net = ipaddress.ip_network(prefix, strict=False)
        for action, address, le in rules:
            base = ipaddress.ip_network(address)
            if action == "permit" and net.subnet_of(base) and base.prefixlen <= net.prefixlen <= (le or base.prefixlen):
                return True
        return False

    assert permitted(f"{device.loopback}/32")
    for interface in device.interfaces:
        connected = f"{interface.address}/{interface.prefix_length}"
        if interface.role in ("uplink", "downlink"):
            assert not permitted(connected), connected
        elif interface.address:
            assert permitted(connected), connected


def _check_nxos(device: Device, config: str) -> None:
    interfaces = section(config, INTERFACE_SECTION)
    facts = {i["name"]: i for i in parsed("cisco.nxos", "nxos_interfaces", interfaces)}
    for interface in device.interfaces:
        got = facts[interface.name]
        assert int(got["mtu"]) == interface.mtu
        assert got["description"] == interface.description
        if interface.port:
            assert got["mode"] == ("layer2" if interface.vlan else "layer3")
            assert got["enabled"] is True
    assert "loopback0" in facts and "mgmt0" in facts
    l3 = {i["name"]: [a["address"] for a in i.get("ipv4", [])] for i in parsed("cisco.nxos", "nxos_l3_interfaces", interfaces)}
    for name, address in _expected_l3(device, "mgmt0", "loopback0").items():
        assert l3[name] == [address], name

    router = section(config, BGP_SECTION)
    bgp = parsed("cisco.nxos", "nxos_bgp_global", router)
    assert int(bgp["as_number"]) == device.asn
    assert bgp["router_id"] == device.router_id
    assert bgp.get("bestpath", {}).get("as_path", {}).get("multipath_relax", False) == device.as_path_multipath_relax
    # nxos_bgp_templates reads `include 'router bgp'` + `section 'template'`
    template_config = section(config, BGP_SECTION).split("\n")[0] + "\n" + blocks(config, r"^\s+template peer ")
    templates = {t["name"]: t for t in parsed("cisco.nxos", "nxos_bgp_templates", template_config).get("neighbor", [])}
    entries = {n["neighbor_address"]: n for n in bgp["neighbors"]}
    assert set(entries) == {n.address for n in device.bgp_neighbors}
    for neighbor in device.bgp_neighbors:
        entry = entries[neighbor.address]
        assert entry["inherit"]["peer"] == neighbor.peer_group
        remote_as = entry.get("remote_as") or templates[neighbor.peer_group].get("remote_as")
        assert int(remote_as) == neighbor.remote_asn, neighbor.address
        assert neighbor.remote_asn != device.asn
    families = parsed("cisco.nxos", "nxos_bgp_neighbor_address_family", router)
    af = {n["neighbor_address"]: n["address_family"] for n in families["neighbors"]}
    for neighbor in device.bgp_neighbors:
        assert {"afi": "ipv4", "safi": "unicast"} in af[neighbor.address]

    (family,) = parsed("cisco.nxos", "nxos_bgp_address_family", router)["address_family"]
    assert (family["afi"], family["safi"]) == ("ipv4", "unicast")
    assert family["maximum_paths"] == {"parallel_paths": device.maximum_paths}
    (redistribute,) = family["redistribute"]
    assert redistribute["protocol"] == "direct"
    (rm,) = [
        r for r in parsed("cisco.nxos", "nxos_route_maps", section(config, r"^route-map")) if r["route_map"] == redistribute["route_map"]
    ]
    (entry,) = rm["entries"]
    assert entry["action"] == "permit"
    (prefix_list,) = entry["match"]["ip"]["address"]["prefix_lists"]
    (lists,) = parsed("cisco.nxos", "nxos_prefix_lists", section(config, r"ip(.*) prefix-list"))
    (pl,) = [p for p in lists["prefix_lists"] if p["name"] == prefix_list]
    _check_advertisement(device, [(e["action"], e["prefix"], e.get("le")) for e in pl["entries"]])
