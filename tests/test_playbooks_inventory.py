"""The inventory `fabricgen render` writes is what the playbooks target: groups `spines` /
`leaves` / per platform, and per-host post-check data (host_vars) taken from the plan."""

from __future__ import annotations

import yaml

from fabricgen.configs.ansible import ansible_host_vars, ansible_inventory
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES


def test_groups_and_host_vars_come_from_the_plan() -> None:
    plan = load_and_plan(EXAMPLES / "pod-mixed").plan
    context = RenderContext()
    groups = yaml.safe_load(ansible_inventory(plan, context)["ansible/hosts.yml"])["all"]["children"]
    assert {"eos", "nxos", "spines", "leaves", "eos_spines", "nxos_leaves"} <= set(groups)
    files = ansible_host_vars(plan, context)
    assert sorted(files) == sorted(f"ansible/host_vars/{d.name}.yml" for d in plan.devices)
    for device in plan.devices:
        data = yaml.safe_load(files[f"ansible/host_vars/{device.name}.yml"])
        assert data["fabricgen_config"] == f"configs/{device.name}.cfg"
        assert [n["address"] for n in data["fabricgen_bgp_neighbors"]] == [n.address for n in device.bgp_neighbors]
        assert data["fabricgen_fabric_interfaces"] == [i.name for i in device.interfaces if i.role in ("uplink", "downlink")]
        assert set(data["fabricgen_roce_interfaces"]) >= set(data["fabricgen_fabric_interfaces"])
        assert not any(word in files[f"ansible/host_vars/{device.name}.yml"].lower() for word in ("password", "secret"))


def test_sm_hosts_point_at_their_rendered_folder() -> None:
    plan = load_and_plan(EXAMPLES / "ib-hdr").plan
    files = ansible_host_vars(plan, RenderContext())
    # ...and what the opensm_deploy role checks before it pushes: the SM software, protection planned.
    assert yaml.safe_load(files["ansible/host_vars/ib1-sm1.yml"]) == {
        "fabricgen_opensm_dir": "opensm/ib1-sm1",
        "opensm_implementation": "opensm",
        "opensm_minimum_version": "3.3.21",
        "opensm_link_generation": "HDR",
        "opensm_protection": True,
    }


def test_limit_renders_only_the_selected_hosts() -> None:
    plan = load_and_plan(EXAMPLES / "pod-mixed").plan
    files = ansible_host_vars(plan, RenderContext(limit=frozenset({"pod2-leaf01"})))
    assert list(files) == ["ansible/host_vars/pod2-leaf01.yml"]


def test_every_tier_of_the_plan_is_under_switches_in_rollout_order() -> None:
    plan = load_and_plan(EXAMPLES / "cluster-3tier").plan
    document = yaml.safe_load(ansible_inventory(plan, RenderContext())["ansible/hosts.yml"])["all"]
    roles = {d.role for d in plan.devices}
    assert roles == {"superspine", "spine", "leaf"}
    assert document["vars"]["fabricgen_tiers"] == ["superspines", "spines", "leaves"]
    assert set(document["children"]["switches"]["children"]) == {"superspines", "spines", "leaves"}
    counted = sum(len(document["children"][tier]["hosts"]) for tier in document["vars"]["fabricgen_tiers"])
    assert counted == len(plan.devices)


def test_lldp_plan_is_the_cabling_of_each_switch() -> None:
    plan = load_and_plan(EXAMPLES / "pod-roce-400g").plan
    files = ansible_host_vars(plan, RenderContext())
    ends = {(link.a.device, link.a.interface): (link.z.device, link.z.interface) for link in plan.links}
    ends |= {z: a for a, z in ends.items()}
    for device in plan.devices:
        data = yaml.safe_load(files[f"ansible/host_vars/{device.name}.yml"])
        for entry in data["fabricgen_lldp_plan"]:
            assert ends[(device.name, entry["interface"])] == (entry["peer"], entry["peer_interface"])
        assert len(data["fabricgen_lldp_plan"]) == len(data["fabricgen_fabric_interfaces"])
