"""The control-plane ACL: rendered from the plan, effective (applied, owned, kept by the push) and
safe (the pre-flight refuses one that would cut the controller off).

Expected values come from the inventory and the plan's links (every BGP neighbour address is
an address at the far end of a switch-to-switch cable), never from the ACL pass itself; the
rendered ACL is read back with the EOS / NX-OS rule grammar (fabricgen/platforms/acl_text.py).
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from fabricgen.configs.devices import device_configs
from fabricgen.core.diagnostics import Diagnostic, FabricError
from fabricgen.core.model import Plan
from fabricgen.diffing.running import remediate
from fabricgen.pipeline import load_and_plan
from fabricgen.platforms import driver
from fabricgen.platforms.acl_text import verdict
from fabricgen.push.ownership import owned_text
from fabricgen.push.stage import Login, drift, lockout_problems, staged_config
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES
from tests.fabrics import fabric, write

EOS_DEVICE = (
    "username netops privilege 15 role network-admin secret sha512 $6$x\n"
    "management api http-commands\n   no shutdown\n   !\n   vrf MGMT\n      no shutdown\n"
    "system control-plane\n   tcp mss ceiling ipv4 1344\n   ip access-group OLD-CP in\n"
)
NXOS_DEVICE = "username netops password 5 $5$x role network-admin\nfeature nxapi\nline vty\n  session-limit 8\n  exec-timeout 15\n"


def _plan_and_configs(inventory: Path) -> tuple[Plan, dict[str, str]]:
    plan = load_and_plan(inventory).plan
    configs = device_configs(plan, RenderContext())
    return plan, {path.removeprefix("configs/").removesuffix(".cfg"): text for path, text in configs.items() if path.endswith(".cfg")}


def _neighbours(plan: Plan) -> dict[str, set[str]]:
    """Every switch's BGP neighbour addresses, from the cables: the far end's address."""
    found: dict[str, set[str]] = {}
    for link in plan.links:
        if link.to_host or not link.a_address or not link.z_address:
            continue
        found.setdefault(link.a.device, set()).add(link.z_address.split("/")[0])
        found.setdefault(link.z.device, set()).add(link.a_address.split("/")[0])
    return found


def _filter_of(platform: str, config: str, vrf: str = "default") -> tuple[str, ...]:
    """The ACL rules the config applies in `vrf` (or to every VRF), as the device reads them."""
    found = driver(platform).control_plane(config)
    name = found.applied.get(vrf) or found.applied.get("*")
    assert name, f"no control-plane ACL applied in VRF {vrf}"
    return found.acls[name]  # type: ignore[return-value]


@pytest.mark.parametrize("inventory", ["pod-roce-400g", "cluster-3tier"])
def test_eos_acl_permits_bgp_and_bfd_from_every_planned_neighbour(inventory: str) -> None:
    plan, configs = _plan_and_configs(EXAMPLES / inventory)
    neighbours = _neighbours(plan)
    eos = [d for d in plan.devices if d.platform == "eos"]
    assert eos
    for device in eos[:: max(1, len(eos) // 12)]:
        rules = _filter_of("eos", configs[device.name])
        assert neighbours[device.name], device.name
        # every configured neighbour is one of the cables' far ends (none reaches past the ACL)
        assert {n.address for n in device.bgp_neighbors} <= neighbours[device.name], device.name
        for address in sorted(neighbours[device.name]):
            peer = ipaddress.IPv4Address(address)
            assert verdict(rules, peer, "tcp", 179)[0] is True, (device.name, address)
            assert verdict(rules, peer, "udp", 3784)[0] is True, (device.name, address)
            assert verdict(rules, peer, "udp", 4784)[0] is True, (device.name, address)


def test_ssh_and_the_api_only_from_the_management_pool_not_from_gpu_hosts() -> None:
    inventory = EXAMPLES / "pod-roce-400g"
    plan, configs = _plan_and_configs(inventory)
    server_ends = [ipaddress.IPv4Address(link.a_address.split("/")[0]) for link in plan.links if link.to_host and link.a_address]
    assert server_ends
    leaf = next(d.name for d in plan.devices if d.role == "leaf")
    for vrf in ("default", "MGMT"):
        rules = _filter_of("eos", configs[leaf], vrf)
        for port in (22, 443, 6030):
            assert verdict(rules, ipaddress.IPv4Address("192.168.0.77"), "tcp", port)[0] is True, port
            for host in server_ends[:8]:
                assert verdict(rules, host, "tcp", port)[0] is False, (host, port)
        # ICMP is kept (the default ACL's first rule); a GPU host may still ping its leaf
        assert verdict(rules, server_ends[0], "icmp", 0)[0] is True


def test_nxos_vty_acl_allows_ssh_only_from_the_allowed_sources(tmp_path: Path) -> None:
    doc = fabric(leaves={"count": 2, "model": "cisco-n9k-9364d-gx2a", "platform": "nxos"})
    doc["management"] = {"allowed_sources": ["172.20.0.0/24", "192.168.3.0/24"]}
    plan, configs = _plan_and_configs(write(tmp_path, doc))
    leaf = next(d.name for d in plan.devices if d.role == "leaf")
    assert "line vty\n  access-class FABRICGEN-CP in\n" in configs[leaf]
    rules = _filter_of("nxos", configs[leaf])
    assert verdict(rules, ipaddress.IPv4Address("172.20.0.9"), "tcp", 22)[0] is True
    assert verdict(rules, ipaddress.IPv4Address("192.168.0.9"), "tcp", 22)[0] is False  # the pool no longer: the key replaces it
    assert verdict(rules, ipaddress.IPv4Address("10.2.0.9"), "tcp", 22)[0] is False


def test_the_applying_line_is_owned_kept_by_the_push_and_its_removal_is_drift() -> None:
    _, configs = _plan_and_configs(EXAMPLES / "pod-roce-400g")
    rendered = configs["pod1-leaf01"]
    owned = owned_text("eos", rendered)
    assert "system control-plane\n   ip access-group FABRICGEN-CP in\n   ip access-group FABRICGEN-CP vrf MGMT in\n" in owned
    assert "ip access-list FABRICGEN-CP\n" in owned
    staged = staged_config("eos", rendered, EOS_DEVICE)
    section = staged[staged.index("system control-plane") :].split("\n!")[0]
    # the device's other line survives, its own access group is replaced by the plan's
    assert "tcp mss ceiling ipv4 1344" in section and "OLD-CP" not in section
    assert "ip access-group FABRICGEN-CP vrf MGMT in" in section
    removed = staged.replace("   ip access-group FABRICGEN-CP vrf MGMT in\n", "")
    assert drift("eos", removed, staged) == ["- system control-plane / ip access-group FABRICGEN-CP vrf MGMT in"]
    remedy, _ = remediate("eos", removed, rendered)
    assert "ip access-group FABRICGEN-CP vrf MGMT in" in remedy and "tcp mss" not in remedy


def test_nxos_line_vty_keeps_the_device_lines_and_takes_the_access_class() -> None:
    _, configs = _plan_and_configs(EXAMPLES / "pod-mixed")
    rendered = configs["pod2-leaf01"]
    staged = staged_config("nxos", rendered, NXOS_DEVICE)
    assert "line vty\n  session-limit 8\n  exec-timeout 15\n  access-class FABRICGEN-CP in\n" in staged
    assert drift("nxos", staged.replace("  access-class FABRICGEN-CP in\n", ""), staged) == [
        "- line vty",
        "- line vty / access-class FABRICGEN-CP in",
    ]


def test_preflight_refuses_an_acl_that_would_cut_the_controller_naming_switch_and_address() -> None:
    _, configs = _plan_and_configs(EXAMPLES / "pod-roce-400g")
    staged = staged_config("eos", configs["pod1-leaf01"], EOS_DEVICE)
    outside = Login("pod1-leaf01", "netops", "ansible.netcommon.httpapi", "10.99.0.5", "10.99.0.5")
    problems = lockout_problems("eos", staged, EOS_DEVICE, outside)
    assert problems == [
        "pod1-leaf01: control-plane ACL FABRICGEN-CP in the staged config does not permit 10.99.0.5 (the controller) to tcp port 443 "
        "(implicit deny): ansible.netcommon.httpapi would be cut at commit (add it to management.allowed_sources)"
    ]
    inside = Login("pod1-leaf01", "netops", "ansible.netcommon.httpapi", "10.99.0.5", "192.168.0.250")
    assert lockout_problems("eos", staged, EOS_DEVICE, inside) == []
    unknown = Login("pod1-leaf01", "netops", "ansible.netcommon.httpapi", "10.99.0.5", "")
    assert any("the address the controller connects from is unknown" in p for p in lockout_problems("eos", staged, EOS_DEVICE, unknown))


def test_preflight_judges_the_nxos_vty_acl_for_ssh_only() -> None:
    _, configs = _plan_and_configs(EXAMPLES / "pod-mixed")
    staged = staged_config("nxos", configs["pod2-leaf01"], NXOS_DEVICE)
    ssh = Login("pod2-leaf01", "netops", "ansible.netcommon.network_cli", "10.99.0.5", "10.99.0.5")
    assert any("does not permit 10.99.0.5 (the controller) to tcp port 22" in p for p in lockout_problems("nxos", staged, NXOS_DEVICE, ssh))
    # NX-API is not a vty session: the vty ACL does not filter it
    api = Login("pod2-leaf01", "netops", "ansible.netcommon.httpapi", "10.99.0.5", "10.99.0.5")
    assert lockout_problems("nxos", staged, NXOS_DEVICE, api) == []


def test_preflight_fails_closed_on_a_rule_it_cannot_read() -> None:
    staged = EOS_DEVICE.replace("OLD-CP", "HAND") + "ip access-list HAND\n   10 permit tcp any any eq ssh https frobnicate\n"
    login = Login("l1", "netops", "ansible.netcommon.httpapi", "10.99.0.5", "192.168.0.250")
    assert lockout_problems("eos", staged, staged, login) == [
        "l1: control-plane ACL HAND in the staged config has a rule the pre-flight cannot judge "
        "('permit tcp any any eq ssh https frobnicate'): refused rather than guessed"
    ]


def _errors(tmp_path: Path, sources: list[str]) -> list[Diagnostic]:
    doc = fabric()
    doc["management"] = {"allowed_sources": sources}
    try:
        load_and_plan(write(tmp_path, doc))
    except FabricError as exc:
        return exc.diagnostics
    return []


def test_allowed_sources_are_validated_at_their_key(tmp_path: Path) -> None:
    found = _errors(tmp_path, ["192.168.9.0/24", "127.0.0.0/8", "10.2.4.0/24", "172.16.0.1/24", "300.1.1.0/24"])
    by_path = {d.path: d for d in found}
    assert set(by_path) == {
        "management.allowed_sources[1]",
        "management.allowed_sources[2]",
        "management.allowed_sources[3]",
        "management.allowed_sources[4]",
    }
    assert "special-purpose range" in by_path["management.allowed_sources[1]"].message
    assert "loopback" in by_path["management.allowed_sources[1]"].message
    assert "addressing.servers" in by_path["management.allowed_sources[2]"].message
    assert "host bits" in by_path["management.allowed_sources[3]"].message
    assert by_path["management.allowed_sources[4]"].line > 0 and by_path["management.allowed_sources[4]"].column > 0


def test_without_allowed_sources_or_a_management_pool_no_acl_is_rendered(tmp_path: Path) -> None:
    doc = fabric()
    del doc["addressing"]["management"]
    plan, configs = _plan_and_configs(write(tmp_path, doc))
    assert plan.control_plane == ()
    assert not any("access-list FABRICGEN" in text or "system control-plane" in text for text in configs.values())


def test_the_playbook_filter_judges_the_acl_by_ansible_network_os() -> None:
    # deploy.yml hands the filter `ansible_network_os`, not the fabricgen platform name
    from fabricgen.push.filters import _lockout

    _, configs = _plan_and_configs(EXAMPLES / "pod-roce-400g")
    staged = staged_config("eos", configs["pod1-leaf01"], EOS_DEVICE)
    args = (staged, EOS_DEVICE, "arista.eos.eos", "pod1-leaf01", "netops", "ansible.netcommon.httpapi", "127.0.0.1")
    assert any("does not permit 10.99.0.5" in p for p in _lockout(*args, "10.99.0.5"))
    assert _lockout(*args, "192.168.0.250") == []
