"""The planner's passes, one at a time, on hand-made inputs.

Expected values are worked out here from the rules in each pass's docstring (ports, /31s,
rails), not read back from the code under test. The goldens cover the passes together.
"""

from __future__ import annotations

import dataclasses
import json
import math
from ipaddress import IPv4Address
from pathlib import Path
from typing import Any

import pytest

from fabricgen.core.catalog import models_for, platforms
from fabricgen.core.diagnostics import FabricError
from fabricgen.core.media_rules import table_from
from fabricgen.core.model import Endpoint, Link
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.schema import apply_defaults
from fabricgen.plan.allocate import Layout
from fabricgen.plan.build import build_plan
from fabricgen.plan.guids import hca_guids, switch_guid
from fabricgen.plan.inputs import CableOverride, Inputs, inputs_of
from fabricgen.plan.passes.addressing import asn_of, pools_of
from fabricgen.plan.passes.cabling import apply_overrides
from fabricgen.plan.passes.connect import Stage, connect
from fabricgen.plan.passes.expand import TierNode, expand_tiers
from fabricgen.plan.passes.media import choose_media
from fabricgen.plan.passes.qos import roce_policy
from fabricgen.plan.passes.servers import Attachment, attach_servers
from fabricgen.plan.passes.speeds import link_speeds
from tests.conftest import example_plan

CATALOG = models_for({})
PLATFORMS = platforms()
MODEL = CATALOG["arista-7060dx5-64s"]
EOS = PLATFORMS["eos"]
SOURCE = SourceMap("fabric.yml", {("leaves", "nodes", 0, "asn"): (12, 30), ("uplinks", "speed"): (20, 10)})


def _node(role: str, index: int, **pins: Any) -> TierNode:
    return TierNode(role, index, f"{role}{index}", MODEL, EOS, **pins)


def _doc(**changes: Any) -> Inputs:
    doc: dict[str, Any] = {
        "fabric": {"name": "t", "transport": "roce"},
        "spines": {"count": 2, "model": "arista-7060dx5-64s", "name": "{fabric}-spine{index}"},
        "leaves": {"count": 3, "model": "arista-7060dx5-64s", "name": "{fabric}-leaf{index}", "nodes": [{"index": 2, "asn": 65555}]},
        "addressing": {"loopbacks": "10.0.0.0/24", "fabric": "10.1.0.0/16", "servers": "10.2.0.0/16"},
        "bgp": {"spine_asn": 65000, "leaf_asn": 65101},
        "servers": {"per_leaf": 1, "ports_per_server": 2},
    }
    doc.update(changes)
    return inputs_of(apply_defaults(doc), SOURCE)


def test_expand_applies_pins_and_keeps_their_position() -> None:
    tiers = expand_tiers(_doc(), CATALOG, PLATFORMS)
    assert [n.name for n in tiers.leaves] == ["t-leaf1", "t-leaf2", "t-leaf3"]
    pinned = tiers.leaves[1]
    assert (pinned.asn, pinned.pin) == (65555, ("leaves", "nodes", 0))
    assert tiers.leaves[0].asn == 0 and tiers.leaves[0].pin == ()
    assert not tiers.three_tier and tiers.superspines == ()


def test_expand_reports_an_unknown_model_with_a_hint() -> None:
    doc = _doc(spines={"count": 2, "model": "arista-7060dx5-64", "name": "s{index}"})
    with pytest.raises(FabricError) as info:
        expand_tiers(doc, CATALOG, PLATFORMS)
    (problem,) = info.value.diagnostics
    assert problem.path == "spines.model" and "arista-7060dx5-64s" in problem.hint


def test_speeds_refuse_a_speed_the_model_cannot_run_once() -> None:
    doc = _doc(uplinks={"speed": "800G"})
    tiers = expand_tiers(doc, CATALOG, PLATFORMS)
    with pytest.raises(FabricError) as info:
        link_speeds(doc, tiers, MODEL)
    messages = [d for d in info.value.diagnostics if d.path == "uplinks.speed"]
    assert len(messages) == 2  # leaves' uplinks and spines' downlinks, once each
    assert messages[0].line == 20


def test_asn_pins_win_and_leaves_count_across_pods() -> None:
    bgp = _doc(bgp={"spine_asn": 65000, "leaf_asn": 65101, "superspine_asn": 64900}).bgp
    layout = Layout(spine_slots=4, leaf_slots=8, superspine_slots=2, pod_slots=4)
    assert asn_of(_node("leaf", 1, pod=1), layout, bgp, True) == 65101
    assert asn_of(_node("leaf", 1, pod=3), layout, bgp, True) == 65101 + 2 * 8
    assert asn_of(_node("leaf", 1, asn=4200000000), layout, bgp, True) == 4200000000
    assert asn_of(_node("spine", 2, pod=2), layout, bgp, True) == 65001
    assert asn_of(_node("superspine", 1, pod=0, plane=3), layout, bgp, True) == 64902
    assert asn_of(_node("spine", 1), layout, bgp, False) == 0


def _stage(per_pair: int, spines: int) -> Stage:
    return Stage("leaf-spine", 400, per_pair, 30.0, spines * per_pair, int(IPv4Address("10.1.0.0")), True, True)


def test_connect_wires_every_lower_device_to_every_upper_one() -> None:
    leaves, spines = [_node("leaf", 1), _node("leaf", 2)], [_node("spine", 1), _node("spine", 2)]
    names = [n.name for n in (*leaves, *spines)]
    wiring = connect(
        leaves,
        lambda leaf: spines,
        _stage(2, 2),
        offset=lambda leaf: ((leaf.index - 1) * 2 * 2 * 2, 2 * 2),
        position=lambda leaf: leaf.index,
        asn=dict.fromkeys(names, 65000),
        mtu={"eos": 9214},
    )
    assert len(wiring.links) == 2 * 2 * 2
    leaf2 = wiring.ends["leaf2"].interfaces
    # Uplinks fill the last cages: 4 slots at 1 per cage -> cages 61..64, spine by spine.
    assert [i.port for i in leaf2] == [61, 62, 63, 64]
    assert [i.peer_device for i in leaf2] == ["spine1", "spine1", "spine2", "spine2"]
    # Downlinks fill the first cages: leaf 2's links are slots 3 and 4 of every spine.
    spine2 = [i for i in wiring.ends["spine2"].interfaces if i.peer_device == "leaf2"]
    assert [i.port for i in spine2] == [3, 4]
    for link in wiring.links:
        upper, lower = IPv4Address(link.z_address), IPv4Address(link.a_address)
        assert int(lower) == int(upper) + 1 and int(upper) % 2 == 0
        assert link.subnet == f"{upper}/31"
    assert len({link.subnet for link in wiring.links}) == 8
    assert {n.peer_group for n in wiring.ends["leaf1"].neighbors} == {EOS.names["peer_group_spine"]}
    assert {n.peer_group for n in wiring.ends["spine1"].neighbors} == {EOS.names["peer_group_leaf"]}
    assert wiring.tally.used["fabric"] == 16


def test_connect_skips_devices_with_nothing_above() -> None:
    wiring = connect([_node("spine", 1)], lambda spine: [], _stage(1, 0), offset=lambda n: (0, 2), position=lambda n: 1, asn={}, mtu={})
    assert wiring.links == () and not wiring.ends


def test_rail_attachment_puts_nic_i_on_rail_leaf_i() -> None:
    leaves = [_node("leaf", i) for i in (1, 2, 3, 4)]
    spec = Attachment(
        per_leaf=2,
        ports_per_server=2,
        speed=400,
        name="{leaf}-srv{index}",
        fabric="t",
        rails=2,
        vlan=0,
        length_m=3.0,
        routed=True,
        roce=True,
    )
    addressing = _doc().addressing
    assert addressing is not None
    pools = pools_of(addressing)
    attached = attach_servers(leaves, spec, Layout(spine_slots=2), pools, 9214, lambda name, leaf, index: ())
    # Two units of two rails; each unit's servers are named after its first leaf.
    assert sorted(s.name for s in attached.servers) == ["leaf1-srv1", "leaf1-srv2", "leaf3-srv1", "leaf3-srv2"]
    by_name = {s.name: s for s in attached.servers}
    assert [(n.nic, n.leaf, n.rail) for n in by_name["leaf3-srv2"].nics] == [(1, "leaf3", 1), (2, "leaf4", 2)]
    assert len(attached.links) == 4 * 2
    for server in attached.servers:
        for nic in server.nics:
            assert int(IPv4Address(nic.address)) == int(IPv4Address(nic.gateway)) + 1
    assert attached.leaves["leaf2"].nics_per_server == 1


def test_overrides_set_one_cable_and_refuse_unknown_ends() -> None:
    link = Link("leaf-spine", Endpoint("l1", "e1", 1), Endpoint("s1", "e2", 2), 400, "", "", "", 30.0)
    (changed,) = apply_overrides([link], [CableOverride(("cabling", "overrides", 0), "s1", "e2", "12.5m")], SOURCE)
    assert changed.length_m == 12.5
    with pytest.raises(FabricError) as info:
        apply_overrides([link], [CableOverride(("cabling", "overrides", 0), "s9", "e2", "1m")], SOURCE)
    assert info.value.diagnostics[0].path == "cabling.overrides[0]"


def test_media_pass_sets_every_link_and_reports_each_length_key_once() -> None:
    plan = example_plan("pod-roce-400g")
    short = [Link(lk.kind, lk.a, lk.z, lk.speed, lk.subnet, lk.a_address, lk.z_address, 2.0) for lk in plan.links]
    chosen = choose_media(short, plan.devices, plan.models, {}, SOURCE)
    assert all(lk.media is not None and lk.media.kind == "copper" for lk in chosen)
    far = [Link(lk.kind, lk.a, lk.z, lk.speed, lk.subnet, lk.a_address, lk.z_address, 20000.0) for lk in plan.links]
    with pytest.raises(FabricError) as info:
        choose_media(far, plan.devices, plan.models, {}, SOURCE)
    kinds = {lk.kind for lk in plan.links}
    assert sorted(d.path for d in info.value.diagnostics) == sorted(f"cabling.length.{kind}" for kind in kinds)


def test_media_pass_tells_ends_nothing_joins_from_lengths_nothing_reaches() -> None:
    """With only a passive DAC (3 m at 50G lanes, 2 m at 100G): the 7060DX5 leaf (8 x 50G) and the
    ConnectX-7 (4 x 100G) are joined by nothing at any length; leaf to spine (both 8 x 50G) at
    30 m is a length the DAC does not reach. One error per length key, saying which."""
    plan = example_plan("pod-roce-400g")
    table = table_from(
        {
            "electrical": {"DAC": {"kind": "copper", "netbox_type": "dac-passive", "reach_m": {50: 3, 100: 2}}},
            "fibre": {},
            "part": "{form_factor}-{speed}G-{variant}",
            "cable_part": "{form_factor}-{speed}G-{variant}",
            "breakout_cable_part": "{form_factor}-{cage_speed}G-to-{count}x{far_form_factor}-{speed}G-{variant}",
            "splitter_part": "{fibre}-1x{count}-SPLITTER",
        }
    )
    with pytest.raises(FabricError) as info:
        choose_media(plan.links, plan.devices, plan.models, {}, SOURCE, servers=plan.servers, nics=plan.nics, table=table)
    by_path = {d.path: d.message for d in info.value.diagnostics}
    assert sorted(by_path) == ["cabling.length.leaf-spine", "cabling.length.server-leaf"]
    assert by_path["cabling.length.server-leaf"].startswith(
        "no cable medium in the catalog joins OSFP (100G lanes) and QSFP-DD (50G lanes) at 400G"
    )
    assert by_path["cabling.length.leaf-spine"].startswith(
        "no cable medium in the catalog reaches 30 m at 400G between QSFP-DD (50G lanes)"
    )
    # Both ends 8 x 50G at 2 m: the DAC joins them.
    short = [
        Link(lk.kind, lk.a, lk.z, lk.speed, lk.subnet, lk.a_address, lk.z_address, 2.0) for lk in plan.links if lk.kind == "leaf-spine"
    ]
    assert {lk.media.medium for lk in choose_media(short, plan.devices, plan.models, {}, SOURCE, table=table) if lk.media} == {"DAC"}


def test_qos_shares_add_up_and_only_cnp_and_network_control_are_strict() -> None:
    roce = _doc().roce
    policy = roce_policy(roce, PLATFORMS)
    for profile in policy.profiles.values():
        shares = [q.bandwidth_percent for q in profile.queues if not q.strict]
        assert len(profile.queues) == 8 and sum(shares) == 100
        assert sorted(q.traffic_class for q in profile.queues if q.strict) == sorted({profile.cnp_traffic_class, 7})
        mapped = sorted(d for entry in profile.dscp_map for d in entry.dscps)
        assert mapped == list(range(64)), "every DSCP mapped once"
        assert [q.traffic_class for q in profile.queues if q.no_drop] == [roce.no_drop_priority]
    assert policy.ecn_min_bytes % 1000 == 0 and policy.ecn_min == f"{policy.ecn_min_bytes // 1000} kbytes"


def test_placeholder_guids_are_distinct_across_kinds_and_numbers() -> None:
    prefix = "0x02fab00000000000"
    switches = {switch_guid(prefix, role, n) for role in ("spine", "leaf", "superspine") for n in range(1, 200)}
    hcas = {hca_guids(prefix, leaf_number=leaf, index=i, ports=8)[0] for leaf in range(1, 50) for i in range(1, 9)}
    assert len(switches) == 3 * 199 and len(hcas) == 49 * 8 and not switches & hcas


def test_inputs_take_every_default_from_the_schema() -> None:
    """Defaults in the typed view are the schema's, read here straight from the JSON file."""
    schema = json.loads((Path(__file__).parent.parent / "schemas" / "fabric.schema.json").read_text(encoding="utf-8"))
    props = schema["properties"]
    view = _doc(bgp={})
    assert view.bgp.superspine_asn == props["bgp"]["properties"]["superspine_asn"]["default"]
    assert view.uplinks.per_spine == props["uplinks"]["properties"]["per_spine"]["default"]
    assert view.guid_prefix == props["guid_prefix"]["default"]
    assert view.cabling.length["spine-superspine"] == props["cabling"]["properties"]["length"]["properties"]["spine-superspine"]["default"]
    assert view.opensm.sminfo_polling_timeout == props["opensm"]["properties"]["sminfo_polling_timeout"]["default"]
    assert view.bgp.maximum_paths is None and view.superspines is None and view.addressing is not None


def test_inputs_keep_the_key_path_of_every_pin() -> None:
    view = _doc()
    (pin,) = view.leaves.nodes
    assert (pin.path, pin.index, pin.asn, pin.name) == (("leaves", "nodes", 0), 2, 65555, None)
    found = view.source.diagnostic((*pin.path, "asn"), "x")
    assert (found.path, found.line, found.column) == ("leaves.nodes[0].asn", 12, 30)


def test_inputs_are_frozen() -> None:
    view = _doc()
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.uplinks.per_spine = 2  # type: ignore[misc]


def _headroom_bytes(length_m: float, speed_gbps: int, mtu: int, response_ns: int) -> int:
    """Cisco c11-542809: two maximum frames (+38 bytes each) and a PFC frame (84), the cable's
    round trip at 5.13 ns/m, the peer's response time, at speed/8 bytes per ns."""
    per_ns = speed_gbps / 8
    return math.ceil(2 * (mtu + 38) + 84 + 2 * length_m * 5.13 * per_ns + response_ns * per_ns)


def test_an_override_gives_its_cable_ends_the_headroom_of_their_new_length() -> None:
    """The wiring passes give every port its stage's figure; the lengthened cable's two ends
    (and only those) get the figure of the override's length."""
    moved = {"device": "t-spine1", "interface": "Ethernet1/1", "length": "150m"}
    plan = build_plan(_doc(roce={"no_drop_priority": 3}, cabling={"overrides": [moved]}))
    devices = {d.name: d for d in plan.devices}
    cable = next(link for link in plan.links if (link.z.device, link.z.interface) == ("t-spine1", "Ethernet1/1"))
    assert cable.length_m == 150.0
    response = {d.name: PLATFORMS[d.platform].pfc_response_ns for d in plan.devices}
    ends = {(cable.a.device, cable.a.interface), (cable.z.device, cable.z.interface)}
    for link in plan.links:
        if link.kind != "leaf-spine":
            continue
        for near, far in ((link.a, link.z), (link.z, link.a)):
            port = next(i for i in devices[near.device].interfaces if i.name == near.interface)
            length = 150.0 if (near.device, near.interface) in ends else link.length_m
            assert port.pfc_headroom_bytes == _headroom_bytes(length, link.speed, link.mtu, response[far.device]), port
    assert link.length_m != 150.0


@pytest.mark.parametrize("name", sorted(n for n, p in PLATFORMS.items() if p.transport == "roce"))
def test_each_tier_has_its_own_peer_group_name(name: str) -> None:
    """`connect` decides per stage whether a peer group carries the remote AS: that holds only
    while a device's peers of two tiers never share a group name (platform data)."""
    names = [PLATFORMS[name].names[f"peer_group_{role}"] for role in ("leaf", "spine", "superspine")]
    assert len(set(names)) == 3, names


def test_a_peer_group_carries_the_remote_as_only_of_several_peers_sharing_one() -> None:
    """Leaves see two spines of one ASN (65000): their group carries it. Spines see three leaves
    of three ASNs: each neighbor states its own."""
    plan = build_plan(_doc())
    for device in plan.devices:
        groups = {g.name: g.remote_asn for g in device.peer_groups}
        if device.role == "leaf":
            assert groups == {EOS.names["peer_group_spine"]: 65000}
            assert {(n.remote_asn, n.inherits_remote_as) for n in device.bgp_neighbors} == {(65000, True)}
        else:
            assert groups == {EOS.names["peer_group_leaf"]: 0}
            assert len({n.remote_asn for n in device.bgp_neighbors}) == 3
            assert not any(n.inherits_remote_as for n in device.bgp_neighbors)
