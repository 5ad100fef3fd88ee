"""`validate` warns when two servers of one job share no full-member partition: limited members
talk only to full members (opensm(8), PARTITION CONFIGURATION), so NCCL between them fails.
Before, only servers in no tenant at all were warned about, never a job split over tenants."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from fabricgen.cli import main
from tests.ib_helpers import ib_fabric, write_inventory

BASE = (
    ib_fabric("t", spines=2, leaves=2, per_spine=3, servers='per_leaf: 4, name: "t-gpu{leaf_index}{index}"')
    + """\
partitions:
  - {name: a, pkey: 1, members: ["t-gpu1*"]}
  - {name: b, pkey: 2, members: ["t-gpu2*"]}
"""
)
"""Tenant a holds leaf 1's four servers, tenant b leaf 2's; Default is limited (tenants exist)."""


def _validate(tmp_path: Path, text: str) -> str:
    result = CliRunner().invoke(main, ["validate", str(write_inventory(tmp_path, text))])
    assert result.exit_code == 0, result.output
    return str(result.output)


def test_a_job_across_two_tenants_is_warned_once_with_a_pair(tmp_path: Path) -> None:
    # 8 GPUs, 1 per server (one NIC each): the job runs on all 8 servers, t-gpu11 and t-gpu21 in different tenants.
    out = _validate(tmp_path, BASE + "jobs:\n  train: {gpus: 8}\n")
    lines = [line for line in out.splitlines() if "share no partition as full members" in line]
    assert len(lines) == 1, out
    assert "warning: jobs.train: servers t-gpu11 and t-gpu21 of the job share no partition as full members" in lines[0]
    assert "NCCL between them fails" in lines[0]


def test_a_job_inside_one_tenant_is_not_warned(tmp_path: Path) -> None:
    # 4 GPUs: the plan's first 4 servers, all full members of tenant a.
    out = _validate(tmp_path, BASE + "jobs:\n  train: {gpus: 4}\n")
    assert "share no partition as full members" not in out


def test_limited_membership_of_a_shared_partition_does_not_help(tmp_path: Path) -> None:
    text = BASE + '  - {name: c, pkey: 3, members: ["t-gpu*"], membership: limited}\njobs:\n  train: {gpus: 8}\n'
    assert "jobs.train: servers t-gpu11 and t-gpu21" in _validate(tmp_path, text)


def test_a_full_partition_over_both_tenants_or_a_full_default_clears_it(tmp_path: Path) -> None:
    shared = BASE + '  - {name: c, pkey: 3, members: ["t-gpu*"]}\njobs:\n  train: {gpus: 8}\n'
    assert "share no partition as full members" not in _validate(tmp_path, shared)
    (tmp_path / "d").mkdir()
    full_default = BASE + "default_partition: {membership: full}\njobs:\n  train: {gpus: 8}\n"
    assert "share no partition as full members" not in _validate(tmp_path / "d", full_default)


def test_one_warning_per_job(tmp_path: Path) -> None:
    out = _validate(tmp_path, BASE + "jobs:\n  one: {gpus: 8}\n  two: {gpus: 6}\n  three: {gpus: 2}\n")
    assert "jobs.one: servers t-gpu11 and t-gpu21" in out and "jobs.two: servers t-gpu11 and t-gpu21" in out
    assert "jobs.three:" not in out
