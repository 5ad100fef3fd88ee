"""The subnet manager an InfiniBand fabric is planned for: `validate` refuses an NDR/XDR fabric
for an SM that cannot run it (upstream OpenSM before 3.3.24, commit bf850acd "Support NDR
devices"; no upstream XDR), the plan carries the minimum, `ib verify` names the OpenSM it ran.
Before, every NDR fabric validated for Debian 12's OpenSM 3.3.23."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import cast

from fabricgen.core.model import Device
from fabricgen.infiniband.verify_report import Report
from fabricgen.infiniband.verify_software import check_opensm_software, parse_opensm_version
from fabricgen.pipeline import load_and_plan
from fabricgen.plan.inputs import OpensmInput
from fabricgen.plan.passes.sm_software import sm_software
from tests.conftest import EXAMPLES
from tests.ib_helpers import cli, ib_fabric, write_inventory

NDR = ib_fabric("n", spines=2, leaves=2, per_spine=15, model="nvidia-qm9700", servers='per_leaf: 30, name: "n-gpu{leaf_index}{index:02d}"')
HDR = ib_fabric("h", spines=2, leaves=2, per_spine=3, servers='per_leaf: 4, name: "h-gpu{leaf_index}{index}"')


def test_ndr_without_a_stated_sm_is_refused_with_file_line_and_hint(tmp_path: Path) -> None:
    path = write_inventory(tmp_path, NDR)
    result = cli("validate", path)
    assert result.exit_code == 2, result.output
    assert f"{path}:1:1: opensm.version: an NDR fabric needs OpenSM 3.3.24 or later, or NVIDIA MLNX OpenSM / UFM" in result.output
    assert "an unstated OpenSM version (Debian 12's is 3.3.23)" in result.output
    assert 'hint: install OpenSM 3.3.24+ on the SM hosts and set opensm.version: "3.3.24"' in result.output
    assert not list(tmp_path.glob("build"))


def test_ndr_for_opensm_3_3_23_is_refused_at_the_version(tmp_path: Path) -> None:
    path = write_inventory(tmp_path, NDR + 'opensm:\n  implementation: opensm\n  version: "3.3.23"\n')
    result = cli("validate", path)
    assert result.exit_code == 2, result.output
    # Line 8 is `version:` (5 lines of ib_fabric, `opensm:`, `implementation:`); numeric order, not text order.
    assert f"{path}:8:12: opensm.version: an NDR fabric needs OpenSM 3.3.24 or later" in result.output
    assert "the inventory plans OpenSM 3.3.23" in result.output


def test_ndr_for_opensm_3_3_24_or_an_nvidia_sm_validates_and_the_plan_carries_the_minimum(tmp_path: Path) -> None:
    for sm in ('{version: "3.3.24"}', '{version: "3.3.100"}', "{implementation: mlnx-opensm}", "{implementation: ufm}"):
        path = write_inventory(tmp_path, NDR + f"opensm: {sm}\n")
        assert cli("validate", path).exit_code == 0, sm
    plan = load_and_plan(write_inventory(tmp_path, NDR + 'opensm: {version: "3.3.24"}\n')).plan
    assert plan.infiniband is not None
    software = plan.infiniband.sm_software
    assert (software.implementation, software.version, software.generation, software.minimum_opensm) == (
        "opensm",
        "3.3.24",
        "NDR",
        "3.3.24",
    )


def test_hdr_runs_on_the_distribution_opensm(tmp_path: Path) -> None:
    checked = load_and_plan(write_inventory(tmp_path, HDR))
    assert checked.plan.infiniband is not None
    software = checked.plan.infiniband.sm_software
    assert (software.generation, software.minimum_opensm, software.version) == ("HDR", "3.3.21", "")


def test_the_ndr_example_names_the_first_upstream_opensm_with_ndr() -> None:
    plan = load_and_plan(EXAMPLES / "ib-ndr").plan
    assert plan.infiniband is not None
    assert (plan.infiniband.sm_software.implementation, plan.infiniband.sm_software.version) == ("opensm", "3.3.24")


def _opensm(implementation: str = "opensm", version: str = "") -> OpensmInput:
    return OpensmInput("/etc/opensm", "/var/log", 3, 10, 10000, 4, False, 0, 0, False, False, "ar_updn", implementation, version)


def test_xdr_switches_need_an_nvidia_sm() -> None:
    """No upstream release has XDR rates: the minimum is empty and only mlnx-opensm / ufm pass."""
    switch = cast(Device, SimpleNamespace(model="xdr-switch"))  # sm_software reads only the model
    software = sm_software(_opensm(version="3.3.24"), [switch], {"xdr-switch": 200})
    assert (software.generation, software.minimum_opensm) == ("XDR", "")


def test_opensm_version_output_is_read_fail_closed() -> None:
    assert parse_opensm_version("-------------------------------------------------\nOpenSM 3.3.24\nCommand Line Arguments:\n") == "3.3.24"
    assert parse_opensm_version("OpenSM version unknown\n") is None
    assert parse_opensm_version("") is None


def test_verify_names_the_opensm_it_ran_and_warns_when_the_plan_needs_a_newer_one(tmp_path: Path) -> None:
    plan = load_and_plan(EXAMPLES / "ib-ndr").plan
    report = Report("ib2", "sm")
    check_opensm_software(report, plan, "/usr/sbin/opensm", "3.3.23", "OpenSM 3.3.23\n")
    (check,) = report.checks
    assert check.ok and check.warn
    assert check.summary == "ran OpenSM 3.3.23 (/usr/sbin/opensm --version) with ibsim's link speeds"
    assert any("NDR port rates are not" in line for line in check.evidence)
    newer = Report("ib2", "sm")
    check_opensm_software(newer, plan, "/usr/sbin/opensm", "3.3.24", "OpenSM 3.3.24\n")
    assert newer.checks[0].ok and not newer.checks[0].warn
    unknown = Report("ib2", "sm")
    check_opensm_software(unknown, plan, "/usr/sbin/opensm", None, "something else\n")
    assert not unknown.checks[0].ok
