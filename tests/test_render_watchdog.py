"""The PFC watchdog each switch gets, read back from its rendered config by the vendor's rule,
against timers worked out by hand from the vendors' ranges (docs/render.md, "PFC watchdog per
platform"), the plan, the fabric README and `validate`.

NX-OS takes one polling interval (`priority-flow-control watch-dog interval`, 100-1000 ms) and
sets the timeout and the recovery as multiples of it (`watch-dog shutdown-multiplier`,
`auto-restore multiplier`); EOS takes the three timers in seconds. Before, NX-OS got only the
per-port `watch-dog-interval on` and ran its own defaults while the plan promised 50/1000/10 ms.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.push.ownership import owned_text
from fabricgen.render.context import RenderContext
from tests.fabrics import fabric, write
from tests.render_cases import device_configs, inventory_ids, rendered

NXOS = {"model": "cisco-n9k-9364d-gx2a", "platform": "nxos"}
EOS = {"model": "arista-7060dx5-64s", "platform": "eos"}

# asked (timeout, recovery, polling) ms -> what each OS runs, worked out by hand from its ranges:
# NX-OS polls every 100-1000 ms, shutdown and auto-restore multipliers 1-10 (nearest multiple);
# EOS timeout/recovery in 10 ms steps, polling in 1 ms steps.
CASES = [
    ((50, 1000, 10), {"nxos": (100, 1000, 100), "eos": (50, 1000, 10)}),
    ((250, 2500, 20), {"nxos": (300, 1000, 100), "eos": (250, 2500, 20)}),
    ((900, 3000, 300), {"nxos": (900, 3000, 300), "eos": (900, 3000, 300)}),
    ((2000, 60000, 1000), {"nxos": (2000, 10000, 1000), "eos": (2000, 60000, 1000)}),
    ((55, 1004, 25), {"nxos": (100, 1000, 100), "eos": (60, 1000, 25)}),
]


def nxos_watchdog(config: str) -> tuple[int, int, int] | None:
    """(timeout, recovery, polling) ms an NX-OS switch runs by its rule: one interval, the
    queue shut after shutdown-multiplier intervals and restored after auto-restore-multiplier
    intervals. None when the global watchdog is not on; its per-port line must then be absent."""
    top = {line for line in config.splitlines() if line and not line[0].isspace()}
    if "priority-flow-control watch-dog-interval on" not in top:
        assert "priority-flow-control watch-dog-interval on" not in config
        return None

    def number(pattern: str) -> int:
        found = [int(m.group(1)) for line in top if (m := re.fullmatch(pattern, line))]
        assert len(found) == 1, f"expected one global line {pattern!r}"
        return found[0]

    interval = number(r"priority-flow-control watch-dog interval (\d+)")
    shutdown = number(r"priority-flow-control watch-dog shutdown-multiplier (\d+)")
    restore = number(r"priority-flow-control auto-restore multiplier (\d+)")
    assert 100 <= interval <= 1000 and 1 <= shutdown <= 10 and 1 <= restore <= 10, "outside what NX-OS accepts"
    return interval * shutdown, interval * restore, interval


def eos_watchdog(config: str) -> tuple[int, int, int] | None:
    """(timeout, recovery, polling) ms from EOS's global `default` timer lines, in seconds."""
    values = dict(
        re.findall(r"^priority-flow-control pause watchdog default (timeout|recovery-time|polling-interval) ([\d.]+)$", config, re.M)
    )
    if not values:
        return None
    ms = {key: round(float(value) * 1000) for key, value in values.items()}
    return ms["timeout"], ms["recovery-time"], ms["polling-interval"]


READ = {"nxos": nxos_watchdog, "eos": eos_watchdog}


def _timers(plan: Plan, platform: str) -> tuple[int, int, int] | None:
    watchdog = plan.roce.profiles[platform].watchdog if plan.roce else None
    return (watchdog.timeout_ms, watchdog.recovery_ms, watchdog.polling_ms) if watchdog else None


@pytest.mark.parametrize("inventory", inventory_ids())
def test_every_switch_runs_the_timers_the_plan_and_readme_show(inventory: str) -> None:
    plan, files = rendered(inventory)
    for device, config in device_configs(inventory):
        assert READ[device.platform](config) == _timers(plan, device.platform), device.name
    readme = files["README.md"]
    for platform in {d.platform for d in plan.devices}:
        timers = _timers(plan, platform)
        shown = f"{platform}: on, timeout {timers[0]} ms, recovery {timers[1]} ms, polling {timers[2]} ms" if timers else f"{platform}: off"
        assert shown in readme


def test_pod_mixed_nxos_polls_every_100_ms_not_the_10_ms_asked() -> None:
    """The example the issue found: NX-OS cannot poll every 10 ms; its switches say so."""
    plan, _ = rendered("inventories/pod-mixed")
    nxos = [config for device, config in device_configs("inventories/pod-mixed") if device.platform == "nxos"]
    assert nxos and {nxos_watchdog(config) for config in nxos} == {(100, 1000, 100)}
    assert _timers(plan, "eos") == (50, 1000, 10)


def test_the_global_watchdog_lines_are_what_a_push_owns() -> None:
    """Remediation and the drift check compare only owned sections: unowned, the NX-OS global
    watchdog lines would never reach a switch through `diff --running` nor show as drift."""
    for device, config in device_configs("inventories/pod-mixed"):
        kept = owned_text(device.platform, config)
        assert READ[device.platform](kept) == READ[device.platform](config) is not None, device.name


@pytest.mark.parametrize(("asked", "expected"), CASES, ids=[f"{t}-{r}-{p}" for (t, r, p), _ in CASES])
@pytest.mark.parametrize("platform", ["nxos", "eos"])
def test_asked_timers_become_what_the_os_accepts(
    tmp_path: Path, platform: str, asked: tuple[int, int, int], expected: dict[str, tuple[int, int, int]]
) -> None:
    timeout, recovery, polling = asked
    model = NXOS if platform == "nxos" else EOS
    doc = fabric(spines=model, leaves=model, roce={"pfc_watchdog": {"timeout_ms": timeout, "recovery_ms": recovery, "polling_ms": polling}})
    checked = load_and_plan(write(tmp_path, doc))
    files = render_files(checked.plan, RenderContext())
    configs = [text for name, text in files.items() if name.startswith("configs/") and name.endswith(".cfg")]
    assert configs and {READ[platform](text) for text in configs} == {expected[platform]}
    rounded = {d.path.removeprefix("roce.pfc_watchdog.") for d in checked.warnings if d.path.startswith("roce.pfc_watchdog.")}
    names = ("timeout_ms", "recovery_ms", "polling_ms")
    assert rounded == {name for name, want, got in zip(names, asked, expected[platform], strict=True) if want != got}


def test_watchdog_off_renders_no_watchdog_line_on_nxos(tmp_path: Path) -> None:
    doc = fabric(spines=NXOS, leaves=NXOS, roce={"pfc_watchdog": {"enabled": False}})
    plan = load_and_plan(write(tmp_path, doc)).plan
    files = render_files(plan, RenderContext())
    assert all("watch-dog" not in text for name, text in files.items() if name.endswith(".cfg"))
    assert _timers(plan, "nxos") is None
