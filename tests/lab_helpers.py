"""Shared pieces of the lab tests: who may run a lab, names of this run's own, what a lab leaves
behind, sabotage."""

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


RUN = f"r{os.getpid()}"
"""This test run's mark, in the fabric name of every lab it boots. A lab is named from its
fabric (namespaces `fg-<fabric>-*`, FRR path spaces, `/run/fabricgen-lab/<fabric>/`), and
`Lab.up()` first clears whatever carries its names; with the pytest process's id in the name,
two suites running at once (two worktrees, a developer and CI) never share a namespace and
never tear down each other's lab."""


def run_name(fabric: str) -> str:
    """`fabric` as this run's own fabric name (still a valid inventory name)."""
    return f"{fabric}-{RUN}"


def own_lab(plan: Plan) -> Plan:
    """`plan` under this run's own fabric name: what its lab creates is this run's alone."""
    return dataclasses.replace(plan, name=run_name(plan.name))


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
