"""`validate` refuses a `jobs:` entry that cannot be placed, as `analyze` does, with the job's
key and the same words (one rule: fabricgen/checks/jobs.py). Before, only `analyze` refused it
and `validate` passed the inventory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from fabricgen.checks.jobs import placement_problems
from fabricgen.cli import main
from tests.fabrics import fabric, write

SERVERS = 16
"""tests/fabrics.py BASE: 4 leaves x 4 servers, 1 port each."""


def _validate(tmp_path: Path, jobs: dict[str, Any]) -> Any:
    path = write(tmp_path, fabric(jobs=jobs))
    return CliRunner().invoke(main, ["validate", str(path)]), path


def test_a_job_with_more_gpus_than_the_fabric_is_an_error_at_validate(tmp_path: Path) -> None:
    result, path = _validate(tmp_path, {"train": {"gpus": 17}})
    assert result.exit_code == 2, result.output
    assert f"{path}:" in result.stderr and "jobs.train.gpus: the job needs 17 servers of 1 GPU; the plan has 16 (16 GPUs)" in result.stderr


def test_a_job_with_more_gpus_per_server_than_servers_can_take_is_an_error(tmp_path: Path) -> None:
    result, _ = _validate(tmp_path, {"wide": {"gpus_per_server": 4, "gpus": 68}})
    assert result.exit_code == 2, result.output
    assert "jobs.wide.gpus: the job needs 17 servers of 4 GPUs; the plan has 16 (64 GPUs)" in result.stderr


def test_a_job_that_fits_exactly_is_valid(tmp_path: Path) -> None:
    result, _ = _validate(tmp_path, {"train": {"gpus": SERVERS}})
    assert result.exit_code == 0, result.output
    assert "jobs." not in result.stderr


def test_gpus_sharing_nics_is_a_warning_with_the_key(tmp_path: Path) -> None:
    result, _path = _validate(tmp_path, {"shared": {"gpus_per_server": 8, "gpus": 64}})
    assert result.exit_code == 0, result.output
    assert (
        "warning: jobs.shared.gpus_per_server: 8 GPUs per server share 1 NIC port: each GPU gets 1/8 of a NIC port's bandwidth"
        in result.stderr
    )


def test_analyze_says_the_same_for_a_flag_as_validate_for_the_key(tmp_path: Path) -> None:
    """One cause, one message: the flag override goes through the same rule."""
    path = write(tmp_path, fabric())
    result = CliRunner().invoke(main, ["analyze", str(path), "--gpus", "17", "--no-simulate"])
    assert result.exit_code == 2, result.output
    assert "--gpus: the job needs 17 servers of 1 GPU; the plan has 16 (16 GPUs)" in result.stderr


@given(
    gpus=st.integers(min_value=1, max_value=100_000),
    per_server=st.integers(min_value=1, max_value=64),
    servers=st.integers(min_value=0, max_value=4096),
    nics=st.integers(min_value=1, max_value=16),
)
def test_a_job_is_refused_exactly_when_its_gpus_exceed_the_fabrics(gpus: int, per_server: int, servers: int, nics: int) -> None:
    problems = placement_problems(gpus, per_server, servers, nics)
    errors = [p for p in problems if p.severity.value == "error"]
    warnings = [p for p in problems if p.severity.value == "warning"]
    assert bool(errors) == (gpus > servers * per_server)
    assert bool(warnings) == (per_server > nics)
