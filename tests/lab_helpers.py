"""Shared pieces of the lab tests: who may run a lab, what a lab leaves behind, sabotage."""

from __future__ import annotations

import dataclasses
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from fabricgen.core.model import Device, Plan
from fabricgen.lab.kernel import existing_namespaces
from fabricgen.lab.topology import lab_prefix

needs_lab = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("vtysh") is None or shutil.which("lldpd") is None or shutil.which("ping") is None,
    reason="the lab needs root and the Debian packages frr, lldpd, iputils-ping (make debian-packages)",
)


def leftovers(fabric: str) -> list[str]:
    """Anything a lab of `fabric` created that still exists: namespaces, FRR path spaces, work files."""
    prefix = lab_prefix(fabric)
    found = existing_namespaces(prefix)
    frr_run = Path("/var/run/frr")
    if frr_run.is_dir():
        found += [str(p) for p in frr_run.iterdir() if p.name.startswith(prefix)]
    if Path(f"/run/fabricgen-lab/{fabric}").exists():
        found.append(f"/run/fabricgen-lab/{fabric}")
    return found


def with_device(plan: Plan, name: str, **changes: Any) -> Plan:
    """`plan` with one device changed: a deliberately broken plan."""
    devices = tuple(dataclasses.replace(d, **changes) if d.name == name else d for d in plan.devices)
    return dataclasses.replace(plan, devices=devices)


def device(plan: Plan, name: str) -> Device:
    return next(d for d in plan.devices if d.name == name)
