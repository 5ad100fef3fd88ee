"""The inventory `fabricgen render` writes is what the playbooks target: groups `spines` /
`leaves` / per platform, and per-host post-check data (host_vars) taken from the plan."""

from __future__ import annotations

import yaml

from fabricgen.pipeline import load_and_plan
from fabricgen.render import RenderContext, ansible_host_vars, ansible_inventory
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
    assert yaml.safe_load(files["ansible/host_vars/ib1-sm1.yml"]) == {"fabricgen_opensm_dir": "opensm/ib1-sm1"}


def test_limit_renders_only_the_selected_hosts() -> None:
    plan = load_and_plan(EXAMPLES / "pod-mixed").plan
    files = ansible_host_vars(plan, RenderContext(limit=frozenset({"pod2-leaf01"})))
    assert list(files) == ["ansible/host_vars/pod2-leaf01.yml"]
