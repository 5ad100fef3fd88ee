"""Three tiers stay put under growth: adding a pod changes no existing device's config except
the super-spines', which gain the new pod's ports and BGP sessions. Compared on the plan and
on the rendered trees (real EOS templates)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan
from fabricgen.plan.allocate import Layout
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from tests.fabrics import fabric, write


def three_tier(pods: int) -> dict[str, Any]:
    """Pods of 4 leaves and 2 spines (2 x 400G per pair) under 2 planes of 2 super-spines, 1:1."""
    return fabric(
        pods={"count": pods},
        spines={"count": 2, "name": "t1-p{pod}-spine{index:02d}"},
        leaves={"count": 4, "name": "t1-p{pod}-leaf{index:02d}"},
        superspines={"count": 2, "model": "arista-7060dx5-64s", "platform": "eos", "per_spine": 4},
        servers={"per_leaf": 2, "ports_per_server": 2, "speed": "400G"},
        bgp={"superspine_asn": 4200000001, "spine_asn": 4200000101, "leaf_asn": 4200001001},
    )


def plan_for(tmp: Path, doc: dict[str, Any], name: str) -> Plan:
    folder = tmp / name
    folder.mkdir()
    return load_and_plan(write(folder, doc)).plan


def test_adding_a_pod_changes_only_the_new_pod_and_the_superspines(tmp_path: Path) -> None:
    small, big = plan_for(tmp_path, three_tier(2), "small"), plan_for(tmp_path, three_tier(3), "big")
    old = {d.name: d for d in small.devices}
    new = {d.name: d for d in big.devices}
    assert set(old) < set(new)
    assert {new[n].pod for n in set(new) - set(old)} == {3}
    for name, device in old.items():
        if device.role != "superspine":
            assert new[name] == device, name
            continue
        grown = new[name]
        assert set(device.interfaces) < set(grown.interfaces)
        assert {i.peer_device for i in set(grown.interfaces) - set(device.interfaces)} == {f"t1-p3-spine{device.plane:02d}"}
        assert set(device.bgp_neighbors) < set(grown.bgp_neighbors)
        assert (grown.loopback, grown.asn, grown.management) == (device.loopback, device.asn, device.management)
    assert set(small.servers) < set(big.servers)
    assert set(small.links) < set(big.links)

    before = render_files(small, RenderContext())
    after = render_files(big, RenderContext())
    configs = {p for p in before if p.startswith("configs/")}
    changed = {p for p in configs if before[p] != after[p]}
    assert changed == {f"configs/{n}.cfg" for n, d in old.items() if d.role == "superspine"}
    added = {p for p in after if p.startswith("configs/")} - configs
    assert added == {f"configs/{n}.cfg" for n in set(new) - set(old)}


def test_three_tier_sessions_and_asns(tmp_path: Path) -> None:
    plan = plan_for(tmp_path, three_tier(2), "p")
    by_name = {d.name: d for d in plan.devices}
    spine = by_name["t1-p2-spine02"]
    assert (spine.pod, spine.plane, spine.asn) == (2, 2, 4200000102)
    groups = {n.peer_group for n in spine.bgp_neighbors}
    assert groups == {"LEAVES", "SUPERSPINES"}
    for neighbor in spine.bgp_neighbors:
        peer = by_name[neighbor.peer_device]
        assert neighbor.remote_asn == peer.asn
        back = [n for n in peer.bgp_neighbors if n.peer_device == spine.name]
        assert back and {n.remote_asn for n in back} == {spine.asn}
        if peer.role == "superspine":
            assert peer.plane == spine.plane and neighbor.peer_group == "SUPERSPINES" and back[0].peer_group == "SPINES"
    assert {d.asn for d in plan.devices if d.role == "superspine"} == {4200000001, 4200000002}
    leaf = by_name["t1-p2-leaf01"]
    assert leaf.asn == 4200001001 + (2 - 1) * 64 // 2 // 2  # leaf number (pod - 1) x leaf slots + index
    assert all(by_name[n.peer_device].pod == 2 for n in leaf.bgp_neighbors)
    spine_over = [o for o in plan.oversubscription if o.device == spine.name]
    assert spine_over and spine_over[0].ratio == 1.0


def test_pod_name_must_carry_the_pod(tmp_path: Path) -> None:
    import pytest

    from fabricgen.core.diagnostics import FabricError

    doc = three_tier(2)
    doc["leaves"]["name"] = "t1-leaf{index:02d}"
    folder = tmp_path / "bad"
    folder.mkdir()
    with pytest.raises(FabricError) as caught:
        load_and_plan(write(folder, doc))
    assert any("{pod}" in d.message and d.path == "leaves.name" for d in caught.value.diagnostics)
    del doc["superspines"]
    doc["leaves"]["name"] = "t1-p{pod}-leaf{index:02d}"
    with pytest.raises(FabricError) as caught:
        load_and_plan(write(folder, doc))
    assert any("superspines" in d.message for d in caught.value.diagnostics)


def test_oversubscribed_spine_tier_is_flagged(tmp_path: Path) -> None:
    import pytest

    from fabricgen.core.diagnostics import FabricError

    doc = three_tier(2)
    doc["superspines"]["per_spine"] = 2  # spines: 8 x 400G down, 4 x 400G up
    folder = tmp_path / "over"
    folder.mkdir()
    with pytest.raises(FabricError) as caught:
        load_and_plan(write(folder, doc))
    assert any("spine" in d.message and "2:1" in d.message for d in caught.value.diagnostics)


@settings(max_examples=200, deadline=None)
@given(
    spine_slots=st.integers(1, 8),
    leaf_slots=st.integers(1, 8),
    ss_slots=st.integers(1, 4),
    pod_slots=st.integers(1, 6),
    per_spine=st.integers(1, 3),
    per_ss=st.integers(1, 3),
)
def test_layout_never_hands_out_an_address_twice(
    spine_slots: int, leaf_slots: int, ss_slots: int, pod_slots: int, per_spine: int, per_ss: int
) -> None:
    layout = Layout(spine_slots, leaf_slots, ss_slots, pod_slots, per_spine, per_ss)
    pods = range(1, pod_slots + 1)
    devices = [layout.device_offset("superspine", i, plane=p) for p in range(1, spine_slots + 1) for i in range(1, ss_slots + 1)]
    devices += [layout.device_offset("spine", i, pod=p) for p in pods for i in range(1, spine_slots + 1)]
    devices += [layout.device_offset("leaf", i, pod=p) for p in pods for i in range(1, leaf_slots + 1)]
    assert len(set(devices)) == len(devices) and min(devices) >= 1
    links = [
        layout.spine_superspine_offset(plane=j, superspine=s, pod=p, link=k)
        for j in range(1, spine_slots + 1)
        for s in range(1, ss_slots + 1)
        for p in pods
        for k in range(1, per_ss + 1)
    ]
    assert max(links) < layout.superspine_block
    links += [
        layout.leaf_spine_offset(p, leaf, spine, k)
        for p in pods
        for leaf in range(1, leaf_slots + 1)
        for spine in range(1, spine_slots + 1)
        for k in range(1, per_spine + 1)
    ]
    assert len(set(links)) == len(links) and all(o % 2 == 0 for o in links)
    # The wiring reads each device's cables as one run (first, step): the same offsets as above.
    for p in pods:
        for j in range(1, spine_slots + 1):
            first, step = layout.spine_uplinks(p, j)
            assert all(
                first + (s - 1) * step + (k - 1) * 2 == layout.spine_superspine_offset(plane=j, superspine=s, pod=p, link=k)
                for s in range(1, ss_slots + 1)
                for k in range(1, per_ss + 1)
            )
        for leaf in range(1, leaf_slots + 1):
            first, step = layout.leaf_uplinks(p, leaf)
            assert all(
                first + (spine - 1) * step + (k - 1) * 2 == layout.leaf_spine_offset(p, leaf, spine, k)
                for spine in range(1, spine_slots + 1)
                for k in range(1, per_spine + 1)
            )
    # Two tiers are the one-pod case without super-spines: the old formulas.
    two = Layout(spine_slots, per_spine=per_spine)
    assert [two.device_offset("leaf", i) for i in range(1, 4)] == [spine_slots + i for i in range(1, 4)]
    assert two.leaf_spine_offset(1, 2, 1, 1) == spine_slots * per_spine * 2
