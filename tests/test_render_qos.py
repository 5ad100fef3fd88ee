"""RoCEv2 QoS read back from the rendered configs with hier-config (no vendor parser covers
QoS): DSCP mapping, no-drop priority, ECN thresholds, CNP priority, scheduling and the
attachment to every RoCE port must equal the plan's policy, for EOS and NX-OS, with default
and non-default values (the fixtures move every knob). Expected values are recomputed here
from the raw policy numbers, not copied from the plan's formatted strings."""

from __future__ import annotations

import re

import pytest
from hier_config import HConfig, HConfigChild, Platform, get_hconfig

from fabricgen.core.catalog import platforms
from fabricgen.core.model import Device, Plan, RocePolicy
from tests.render_cases import device_configs, inventory_ids, rendered

CASES = [(inventory, device.name) for inventory in inventory_ids() for device, _ in device_configs(inventory)]


def _threshold(size: int) -> str:
    return f"{size // 1000} kbytes" if size % 1000 == 0 else f"{size} bytes"


def _child(parent: HConfig | HConfigChild, text: str) -> HConfigChild:
    child = parent.get_child(equals=text)
    assert child is not None, f"missing {text!r} under {getattr(parent, 'text', 'top level')!r}"
    return child


def _lines(parent: HConfig | HConfigChild) -> set[str]:
    return {c.text for c in parent.children}


def _named(config: HConfig, prefix: str) -> str:
    matches = [c.text.removeprefix(prefix) for c in config.children if c.text.startswith(prefix)]
    assert len(matches) == 1, (prefix, matches)
    return matches[0]


@pytest.mark.parametrize(("inventory", "name"), CASES)
def test_qos_matches_the_policy(inventory: str, name: str) -> None:
    plan, _ = rendered(inventory)
    device, text = next((d, c) for d, c in device_configs(inventory) if d.name == name)
    assert plan.roce is not None
    if device.platform == "eos":
        _check_eos(plan, plan.roce, device, get_hconfig(Platform.ARISTA_EOS, text))
    else:
        _check_nxos(plan, plan.roce, device, get_hconfig(Platform.CISCO_NXOS, text))


def _eos_seconds(ms: int, step_ms: int) -> str:
    """An asked timer as EOS takes it: seconds with two decimals for timeout and recovery-time
    (10 ms steps), three for polling-interval (AVD `priority_flow_control.watchdog` schema);
    nearest step, halves up (docs/render.md, "PFC watchdog per platform")."""
    return f"{(ms + step_ms // 2) // step_ms * step_ms / 1000:g}"


def _check_eos(plan: Plan, roce: RocePolicy, device: Device, config: HConfig) -> None:
    prio, cnp = roce.no_drop_priority, roce.cnp_traffic_class["eos"]
    top = _lines(config)
    assert f"qos map dscp {roce.dscp_data} to traffic-class {prio}" in top
    assert f"qos map dscp {roce.dscp_cnp} to traffic-class {cnp}" in top
    profile_name = _named(config, "qos profile ")
    profile = _child(config, f"qos profile {profile_name}")
    lines = _lines(profile)
    assert {"qos trust dscp", "priority-flow-control on", f"priority-flow-control priority {prio} no-drop"} <= lines
    assert [line for line in lines if re.match(r"priority-flow-control priority \d+ no-drop", line)] == [
        f"priority-flow-control priority {prio} no-drop"
    ]
    assert ("priority-flow-control pause watchdog" in lines) == roce.pfc_watchdog
    if roce.pfc_watchdog:
        assert f"priority-flow-control pause watchdog default timeout {_eos_seconds(roce.watchdog_timeout_ms, 10)}" in top
        assert f"priority-flow-control pause watchdog default recovery-time {_eos_seconds(roce.watchdog_recovery_ms, 10)}" in top
        assert f"priority-flow-control pause watchdog default polling-interval {_eos_seconds(roce.watchdog_polling_ms, 1)}" in top
    family = next(m.queue_family for m in plan.models if m.name == device.model)
    keyword = {"trident": "uc-tx-queue", "jericho": "tx-queue"}[family]
    data_queue = _lines(_child(profile, f"{keyword} {prio}"))
    ecn = (
        f"random-detect ecn minimum-threshold {_threshold(roce.ecn_min_bytes)} maximum-threshold {_threshold(roce.ecn_max_bytes)} "
        f"max-mark-probability {roce.ecn_probability} weight 0"
    )
    assert (ecn in data_queue) == roce.ecn_enabled
    # Besides the thresholds only the ECN mark counter (tests/test_render_semantics.py).
    assert not any(line.startswith("random-detect") for line in data_queue - {ecn, "random-detect ecn count"})
    assert ("random-detect ecn count" in data_queue) == roce.ecn_enabled
    # RoCE never shares EOS's default-traffic class (DSCP 0 -> TC1): validate refuses that policy
    # (fabricgen/checks/forwarding.py, tests/data/broken/no-drop-on-default-traffic-class.yml).
    assert prio != int(platforms()["eos"].qos.get("best_effort_tc", 0))
    assert f"bandwidth percent {roce.bandwidth_percent}" in data_queue
    assert "priority strict" in _lines(_child(profile, f"{keyword} {cnp}"))
    for interface in device.interfaces:
        lines = _lines(_child(config, f"interface {interface.name}"))
        assert (f"service-profile {profile_name}" in lines) == interface.roce, interface.name
        if interface.roce:
            assert f"mtu {interface.mtu}" in lines and interface.mtu <= roce.mtu["eos"]


def _check_nxos(plan: Plan, roce: RocePolicy, device: Device, config: HConfig) -> None:
    prio, cnp = roce.no_drop_priority, roce.cnp_traffic_class["nxos"]
    mtu = roce.mtu["nxos"]
    classes = {c.text.split()[-1]: _lines(c) for c in config.children if c.text.startswith("class-map type qos match-any ")}
    data_class = next(name for name, lines in classes.items() if lines == {f"match dscp {roce.dscp_data}"})
    cnp_class = next(name for name, lines in classes.items() if lines == {f"match dscp {roce.dscp_cnp}"})
    qos_name = _named(config, "policy-map type qos ")
    qos_policy = _child(config, f"policy-map type qos {qos_name}")
    assert _lines(_child(qos_policy, f"class {data_class}")) == {f"set qos-group {prio}"}
    assert _lines(_child(qos_policy, f"class {cnp_class}")) == {f"set qos-group {cnp}"}

    nq_name = _named(config, "policy-map type network-qos ")
    nq = _child(config, f"policy-map type network-qos {nq_name}")
    assert _lines(_child(nq, f"class type network-qos c-8q-nq{prio}")) == {f"mtu {mtu}", f"pause pfc-cos {prio}"}
    assert sum(1 for c in nq.all_children() if c.text.startswith("pause pfc-cos")) == 1

    out_name = _named(config, "policy-map type queuing ")
    queuing = _child(config, f"policy-map type queuing {out_name}")
    shares = {}
    for cls in queuing.children:
        lines = _lines(cls)
        percent = [int(line.split()[-1]) for line in lines if line.startswith("bandwidth remaining percent ")]
        shares[cls.text.removeprefix("class type queuing ")] = percent[0] if percent else None
    assert len(shares) == 8
    assert sum(v for v in shares.values() if v is not None) == 100
    assert shares[f"c-out-8q-q{prio}"] == roce.bandwidth_percent
    assert _lines(_child(queuing, f"class type queuing c-out-8q-q{cnp}")) == {"priority level 1"}
    ecn = (
        f"random-detect minimum-threshold {_threshold(roce.ecn_min_bytes)} maximum-threshold {_threshold(roce.ecn_max_bytes)} "
        f"drop-probability {roce.ecn_probability} weight 0 ecn"
    )
    data_queue = _lines(_child(queuing, f"class type queuing c-out-8q-q{prio}"))
    assert (ecn in data_queue) == roce.ecn_enabled
    assert sum(1 for c in queuing.all_children() if c.text.startswith("random-detect")) == int(roce.ecn_enabled)

    system = _lines(_child(config, "system qos"))
    assert system == {f"service-policy type network-qos {nq_name}", f"service-policy type queuing output {out_name}"}
    for interface in device.interfaces:
        lines = _lines(_child(config, f"interface {interface.name}"))
        assert (f"service-policy type qos input {qos_name}" in lines) == interface.roce, interface.name
        assert ("priority-flow-control mode on" in lines) == interface.roce
        assert ("priority-flow-control watch-dog-interval on" in lines) == (interface.roce and roce.pfc_watchdog)
        if interface.roce:
            # The cable's MTU: at most this platform's (pod-mixed: 9214 towards EOS spines).
            assert f"mtu {interface.mtu}" in lines and interface.mtu <= mtu


def test_fixtures_move_every_qos_knob() -> None:
    """The QoS checks above see non-default values on both platforms, not only the defaults."""
    policies = {i: rendered(i)[0].roce for i in inventory_ids()}
    nxos = [p for i, p in policies.items() if p and any(d.platform == "nxos" for d in rendered(i)[0].devices)]
    eos = [p for i, p in policies.items() if p and any(d.platform == "eos" for d in rendered(i)[0].devices)]
    for group in (nxos, eos):
        assert len({(p.no_drop_priority, p.dscp_data, p.ecn_min_bytes, p.ecn_probability, p.bandwidth_percent) for p in group}) > 1
    assert any(p.cnp_traffic_class["nxos"] != 7 for p in nxos)
    assert any(p.mtu["eos"] != 9214 for p in eos)
