"""Rendered example fabrics, shared by the tests/test_render_*.py modules.

Every RoCE inventory under inventories/ plus the small fixtures in tests/goldens/inventories/
(NX-OS spines, non-default QoS, ECN and watchdog off, subnet server mode, a Jericho model)
is planned and rendered once per test session.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from fabricgen.core.model import Device, Plan
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES, ROOT

FIXTURES = ROOT / "tests" / "goldens" / "inventories"


def inventory_dirs() -> list[Path]:
    """Inventories whose transport is RoCE (they have switch configs to check)."""
    found = [p for base in (EXAMPLES, FIXTURES) for p in sorted(base.iterdir()) if (p / "fabric.yml").is_file()]
    return [p for p in found if rendered(p.relative_to(ROOT).as_posix())[0].transport == "roce"]


def inventory_ids() -> list[str]:
    return [p.relative_to(ROOT).as_posix() for p in inventory_dirs()]


@cache
def rendered(inventory: str) -> tuple[Plan, dict[str, str]]:
    """(plan, files) of an inventory given relative to the repository root."""
    plan = load_and_plan(ROOT / inventory, display_name=f"{inventory}/fabric.yml").plan
    return plan, render_files(plan, RenderContext())


def device_configs(inventory: str) -> list[tuple[Device, str]]:
    """Every switch of the inventory with its rendered config."""
    plan, files = rendered(inventory)
    return [(d, files[f"configs/{d.name}.cfg"]) for d in plan.devices if f"configs/{d.name}.cfg" in files]


def section(config: str, pattern: str) -> str:
    """What `show running-config | section PATTERN` prints: each top-level line matching the
    regex with the lines indented under it (comments and `!` separators dropped)."""
    out: list[str] = []
    keep = False
    for line in config.splitlines():
        if line and not line[0].isspace():
            keep = not line.startswith("!") and re.search(pattern, line) is not None
        if keep and line.strip() and not line.lstrip().startswith("!"):
            out.append(line)
    return "\n".join(out) + "\n"


def blocks(config: str, pattern: str) -> str:
    """`| section PATTERN` for nested lines: every line matching the regex at any depth, with
    the lines indented deeper under it (how NX-OS returns `section 'template'`)."""
    out: list[str] = []
    depth: int | None = None
    for line in config.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        if depth is not None and indent <= depth:
            depth = None
        if depth is None and re.search(pattern, line):
            depth = indent
            out.append(line)
        elif depth is not None:
            out.append(line)
    return "\n".join(out) + "\n"


SAMPLE_ABOVE = 32
"""Inventories with more switches than this are read back on a sample (cluster-3tier: 34 of 256)."""


def sample(devices: list[Device]) -> list[Device]:
    """Every switch of a small inventory; of a larger one, the first and the last switch of each
    role, platform, model and pod. Every switch of a role comes from the same templates with
    data of the same shape, and the first and last of each pod hold its first and last address
    blocks, ASNs and ports: parsing the 222 switches in between (each through four or five
    Ansible modules) repeats those checks (in tests/test_render_parsers.py, three quarters of its time)."""
    if len(devices) <= SAMPLE_ABOVE:
        return devices
    groups: dict[tuple[str, str, str, int], list[Device]] = {}
    for device in devices:
        groups.setdefault((device.role, device.platform, device.model, device.pod), []).append(device)
    return [device for group in groups.values() for device in (group[:1] + group[-1:] if len(group) > 1 else group)]
