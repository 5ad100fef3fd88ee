"""Property test: for any valid RoCE policy, the rendered EOS and NX-OS QoS says exactly what
the policy says (same read-back as tests/test_render_qos.py, on random policies)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hier_config import Platform, get_hconfig
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricgen.pipeline import load_and_plan
from fabricgen.render import RenderContext, leftovers, render_files
from tests.render_cases import FIXTURES
from tests.test_render_qos import _check_eos, _check_nxos


@st.composite
def policies(draw: st.DrawFn) -> dict[str, Any]:
    priority = draw(st.integers(1, 7))
    cnp_class = draw(st.integers(1, 7).filter(lambda tc: tc != priority))
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


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(policy=policies(), fixture=st.sampled_from(["tiny-eos", "tiny-nxos"]))
def test_any_policy_renders_as_stated(policy: dict[str, Any], fixture: str) -> None:
    doc = yaml.safe_load((FIXTURES / fixture / "fabric.yml").read_text(encoding="utf-8"))
    doc["roce"] = policy
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "fabric.yml").write_text(yaml.safe_dump(doc), encoding="utf-8")
        plan = load_and_plan(Path(tmp)).plan
    files = render_files(plan, RenderContext())
    assert plan.roce is not None
    for device in plan.devices:
        text = files[f"configs/{device.name}.cfg"]
        assert leftovers(text) == []
        if device.platform == "eos":
            _check_eos(plan, plan.roce, device, get_hconfig(Platform.ARISTA_EOS, text))
        else:
            _check_nxos(plan, plan.roce, device, get_hconfig(Platform.CISCO_NXOS, text))
