"""Cables are plan facts: the planner stores every link's physical view (its ends' hardware,
its media and its items) in `Plan.cables`, so the cabling plan, the BOM and the NetBox export
read the same objects in whichever process renders them, and the render needs no unit that
groups them to share a cache."""

from __future__ import annotations

import json

from fabricgen.producers import PRODUCERS, plan_file, render_units
from fabricgen.render.context import RenderContext
from fabricgen.render.serialize import plan_fragments, plan_json
from tests.conftest import example_plan


def test_every_link_has_its_cable_in_the_plan() -> None:
    plan = example_plan("cluster-3tier")
    assert [cable.link for cable in plan.cables] == list(plan.links)
    assert all(cable.choice == cable.link.media for cable in plan.cables)
    by_name = {d.name: d for d in plan.devices}
    for cable in plan.cables[:: max(1, len(plan.cables) // 50)]:
        assert (cable.a.device, cable.a.interface) == (cable.link.a.device, cable.link.a.interface)
        assert (cable.z.device, cable.z.interface) == (cable.link.z.device, cable.link.z.interface)
        switch = by_name[cable.z.device]
        assert cable.z.form_factor == next(m.form_factor for m in plan.models if m.name == switch.model)


def test_server_cables_take_the_nic_end() -> None:
    plan = example_plan("pod-rail")
    to_servers = [c for c in plan.cables if c.link.to_host]
    assert to_servers and all(c.a.device not in {d.name for d in plan.devices} for c in to_servers)
    nic = plan.nics[0]
    assert {c.a.form_factor for c in to_servers} == {nic.form_factor}


def test_the_cables_are_not_written_to_the_plan_files() -> None:
    plan = example_plan("pod-rail")
    assert "cables" not in json.loads(plan_json(plan))
    assert all('"cables"' not in text for text in plan_fragments(plan).values())


def test_each_producer_is_its_own_unit() -> None:
    """No unit groups the cabling, BOM and NetBox producers: nothing is derived and memoised
    after planning for them to share."""
    plan = example_plan("pod-rail")
    names = [unit.name for unit in render_units(plan, RenderContext(), pieces=2)]
    whole = {p.__name__ for p in PRODUCERS if p is not plan_file and p.__name__ != "device_configs"}
    assert whole <= set(names)
    assert not [name for name in names if "+" in name]
