"""The host_vars writer (text straight from the plan) writes what yaml_text writes for the same data."""

from __future__ import annotations

import dataclasses

import pytest

from fabricgen.configs.ansible import _host_vars, _host_vars_text, qos_plan
from fabricgen.render.yamlemit import yaml_text
from tests.render_cases import inventory_ids, rendered


@pytest.mark.parametrize("inventory", inventory_ids())
def test_direct_host_vars_equal_the_general_writer(inventory: str) -> None:
    plan, files = rendered(inventory)
    checked = 0
    for device in plan.devices:
        if f"ansible/host_vars/{device.name}.yml" not in files:
            continue
        qos = qos_plan(plan.roce, device.platform) if any(i.roce for i in device.interfaces) else {}
        text = _host_vars_text(device, None, qos)
        assert text is not None, f"{device.name}: plan names need no general writer"
        assert text == yaml_text(_host_vars(device, qos), width=200)
        assert files[f"ansible/host_vars/{device.name}.yml"].endswith(text)
        checked += 1
    assert checked > 0


def test_a_name_with_a_space_takes_the_general_writer() -> None:
    plan, _files = rendered(inventory_ids()[0])
    device = next(d for d in plan.devices if d.bgp_neighbors)
    neighbor = dataclasses.replace(device.bgp_neighbors[0], peer_device="spine 01")
    odd = dataclasses.replace(device, bgp_neighbors=(neighbor, *device.bgp_neighbors[1:]))
    assert _host_vars_text(odd) is None
    assert "peer: spine 01\n" in yaml_text(_host_vars(odd), width=200)
