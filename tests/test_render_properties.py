"""Property test: for any valid RoCE policy, the rendered EOS and NX-OS QoS says exactly what
the policy says (same read-back as tests/test_render_qos.py, on random policies).

The expected values come from the generated inventory section itself (sizes such as "150KB"
parsed here, independently), not from the plan computed by the code under test."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hier_config import Platform, get_hconfig
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricgen.core.catalog import platforms
from fabricgen.core.model import RocePolicy
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from fabricgen.render.tidy import leftovers
from tests.render_cases import FIXTURES
from tests.test_render_qos import _check_eos, _check_nxos
from tests.test_render_scheduler import Effective, eos_effective, intended, nxos_effective


@st.composite
def policies(draw: st.DrawFn) -> dict[str, Any]:
    # Never a platform's default-traffic class (validate refuses RoCE or CNP there).
    default_classes = {int(p.qos.get("best_effort_tc", 0)) for p in platforms().values() if p.transport == "roce"}
    # Nor RoCE on the strict network-control class 7, nor CNP below a round-robin queue (EOS:
    # the strict queues are the highest-numbered), so CNP is 6 or 7.
    priority = draw(st.integers(1, 6).filter(lambda tc: tc not in default_classes))
    cnp_class = draw(st.integers(6, 7).filter(lambda tc: tc != priority and tc not in default_classes))
    data_dscp = draw(st.integers(0, 63))
    cnp_dscp = draw(st.integers(0, 63).filter(lambda d: d != data_dscp))
    low = draw(st.integers(1, 5000))
    high = draw(st.integers(low + 1, 20000))
    unit = draw(st.sampled_from(["KB", "B"]))
    timeout, recovery = draw(st.integers(10, 2000)), draw(st.integers(10, 5000))
    polling = draw(st.integers(5, min(100, min(timeout, recovery) // 2)))  # EOS: at most half of either
    return {
        "no_drop_priority": priority,
        "dscp": {"data": data_dscp, "cnp": cnp_dscp},
        "cnp_traffic_class": cnp_class,
        "ecn": {"enabled": draw(st.booleans()), "min": f"{low}{unit}", "max": f"{high}{unit}", "probability": draw(st.integers(1, 100))},
        "pfc_watchdog": {
            "enabled": draw(st.booleans()),
            "timeout_ms": timeout,
            "recovery_ms": recovery,
            "polling_ms": polling,
        },
        "bandwidth_percent": draw(st.integers(1, 99)),
    }


def _bytes(text: str) -> int:
    """ "150KB" -> 150000 (1 KB = 1000 bytes, as the switches take it), "1500B" -> 1500."""
    match = re.fullmatch(r"([0-9]+)(KB|B)", text)
    assert match is not None, text
    return int(match.group(1)) * (1000 if match.group(2) == "KB" else 1)


def expected_policy(policy: dict[str, Any]) -> RocePolicy:
    """What the configs must say, straight from the generated `roce:` section (MTU: the
    platform's default from platform.yml, since the section sets none)."""
    ecn, watchdog = policy["ecn"], policy["pfc_watchdog"]
    roce_platforms = [name for name, p in platforms().items() if p.transport == "roce"]
    return RocePolicy(
        no_drop_priority=policy["no_drop_priority"],
        dscp_data=policy["dscp"]["data"],
        dscp_cnp=policy["dscp"]["cnp"],
        cnp_traffic_class=dict.fromkeys(roce_platforms, policy["cnp_traffic_class"]),
        ecn_enabled=ecn["enabled"],
        ecn_min_bytes=_bytes(ecn["min"]),
        ecn_max_bytes=_bytes(ecn["max"]),
        ecn_probability=ecn["probability"],
        pfc_watchdog=watchdog["enabled"],
        watchdog_timeout_ms=watchdog["timeout_ms"],
        watchdog_recovery_ms=watchdog["recovery_ms"],
        watchdog_polling_ms=watchdog["polling_ms"],
        bandwidth_percent=policy["bandwidth_percent"],
        mtu={name: platforms()[name].mtu_default for name in roce_platforms},
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), fixture=st.sampled_from(["tiny-eos", "tiny-nxos"]))
def test_any_policy_renders_as_stated(policy: dict[str, Any], fixture: str) -> None:
    doc = yaml.safe_load((FIXTURES / fixture / "fabric.yml").read_text(encoding="utf-8"))
    doc["roce"] = policy
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "fabric.yml").write_text(yaml.safe_dump(doc), encoding="utf-8")
        plan = load_and_plan(Path(tmp)).plan
    files = render_files(plan, RenderContext())
    expected = expected_policy(policy)
    for device in plan.devices:
        text = files[f"configs/{device.name}.cfg"]
        assert leftovers(text) == []
        if device.platform == "eos":
            _check_eos(plan, expected, device, get_hconfig(Platform.ARISTA_EOS, text))
        else:
            _check_nxos(plan, expected, device, get_hconfig(Platform.CISCO_NXOS, text))
        in_effect: dict[int, Effective] = (eos_effective if device.platform == "eos" else nxos_effective)(text)
        assert in_effect == intended(expected, device.platform)
