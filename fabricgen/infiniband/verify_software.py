"""Which OpenSM `ib verify` ran, against the subnet manager the plan is for.

The verification runs the OpenSM binary found on PATH (Debian 12: 3.3.23) on ibsim, whose
links run the speeds ibsim 0.10 knows (NDR and XDR links are simulated as HDR). So the report
names the binary's own version (`opensm --version`) and says when the plan needs a newer SM
for its link generation: the files are verified, the NDR/XDR port rates are not.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from fabricgen.checks.ib_sm import version_tuple
from fabricgen.core.model import Plan
from fabricgen.infiniband.verify_report import Check, Report

VERSION_LINE = re.compile(r"^OpenSM (\d+(?:\.\d+)*)\s*$", re.MULTILINE)


def parse_opensm_version(output: str) -> str | None:
    """The version in `opensm --version` output; None for any other shape (fail closed).

    >>> parse_opensm_version("-------------------------------------------------\\nOpenSM 3.3.23\\nCommand Line Arguments:\\n")
    '3.3.23'
    >>> parse_opensm_version("opensm: unknown option") is None
    True
    """
    found = VERSION_LINE.search(output)
    return found.group(1) if found else None


def opensm_version() -> tuple[str, str | None, str]:
    """(path of the `opensm` binary verify starts, its version or None, what it printed)."""
    path = os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
    binary = shutil.which("opensm", path=path) or "opensm"
    try:
        done = subprocess.run(
            [binary, "--version"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
            stdin=subprocess.DEVNULL,
            env={"PATH": path, "LANG": "C"},
        )
        output = done.stdout + done.stderr
    except (OSError, subprocess.TimeoutExpired) as error:
        output = str(error)
    return binary, parse_opensm_version(output), output


def check_opensm_software(report: Report, plan: Plan, binary: str, version: str | None, output: str) -> None:
    """One check: the OpenSM that ran and ibsim's link speeds; WARN when the plan needs a newer SM."""
    ib = plan.infiniband
    assert ib is not None
    if version is None:
        lines = [line.strip() for line in output.splitlines() if line.strip()][:3]
        report.add(Check("OpenSM version", False, f"`{binary} --version` printed no 'OpenSM <version>' line", lines))
        return
    sm = ib.sm_software
    planned = f"{sm.implementation} {sm.version}" if sm.version else f"{sm.implementation} (version not stated)"
    evidence = [f"planned subnet manager: {planned}"]
    if sm.generation:
        need = f"OpenSM {sm.minimum_opensm}+" if sm.minimum_opensm else "NVIDIA MLNX OpenSM / UFM"
        evidence.append(f"{sm.generation} links need {need} (data/subnet_managers.yml)")
    behind = sm.generation in ("NDR", "XDR") and (not sm.minimum_opensm or version_tuple(version) < version_tuple(sm.minimum_opensm))
    if behind:
        evidence.append(
            f"verified with ibsim's link speeds ({sm.generation} links simulated as HDR) on OpenSM {version}: the files, routing and "
            f"partitions are verified, {sm.generation} port rates are not"
        )
    report.add(Check("OpenSM version", True, f"ran OpenSM {version} ({binary} --version) with ibsim's link speeds", evidence, warn=behind))
