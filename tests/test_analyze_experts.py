"""Issue 31, expert parallelism: a mixture-of-experts job's dispatch and combine all-to-alls,
checked against arithmetic written out here (not the code under test): inside one server they
move on NVLink only (no NIC speed changes them), across servers at the NIC's achieved rate, and
both sit in the exposed time and the step; impossible combinations are refused by `analyze` and
by `validate` with the same words. Before, `jobs:` had no MoE keys (the schema refused them)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from tests.conftest import EXAMPLES
from tests.fabrics import fabric, write
from tests.test_analyze_cli import run

POD = str(EXAMPLES / "pod-roce-400g")
"""32 servers x 8 GPUs, one 400G NIC per GPU, leaves 1:1 (adaptive routing: no collisions)."""
MIXTRAL = ("--params", "47B", "--hidden-size", "4096", "--moe-layers", "32", "--tokens-per-step", "4M")
"""A Mixtral-8x7B-like model: 32 MoE layers of 8 experts, top-2 (the default), width 4,096."""


def _job(*args: str, experts: int = 8) -> dict[str, Any]:
    result = run(POD, *MIXTRAL, "--experts", str(experts), *args, "--no-simulate", "--format", "json")
    assert result.exit_code == 0, result.output
    job: dict[str, Any] = json.loads(result.stdout)["jobs"][0]
    return job


def _per_call(tokens: float, ep: int, local: int, nic_gbytes_per_s: float, servers: int) -> float:
    """One all-to-all by hand: tokens x 4,096 x 2 bytes x top-2 spread evenly over EP ranks; the
    (local - 1) peers in the server on NVLink at 370 GB/s, the others on the NIC, both at once;
    one step latency (14 us network, 3.4 us NVLink)."""
    per_peer = tokens * 4096 * 2 * 2 / ep
    nvlink = per_peer * (local - 1) / 370e9
    network = per_peer * (ep - local) / (nic_gbytes_per_s * 1e9)
    return max(nvlink, network) + (14e-6 if servers > 1 else 3.4e-6)


def test_expert_parallel_inside_a_server_moves_no_network_bytes() -> None:
    """TP 1, EP 8 on 8-GPU servers: DP 256, ceil(4M / (4,096 x 256)) = 4 micro-batches, 4,096
    tokens per GPU; 7 of 8 shares go to NVLink peers: 7 x 8,388,608 B / 370 GB/s + 3.4 us =
    162 us, 4 all-to-alls x 32 layers x 4 micro-batches = 512 of them."""
    job = _job("--tp", "1", "--ep", "8", "--compare")
    call = _per_call(4096, 8, 8, 1.0, 1)
    assert call == pytest.approx(7 * 8388608 / 370e9 + 3.4e-6)
    planned = job["planned"]
    assert planned["all_to_all_calls"] == 512
    assert planned["all_to_all_s"] == pytest.approx(512 * call, rel=5e-3)
    # No network bytes: the same time on every NIC speed and transport.
    times = {row[key]["all_to_all_s"] for row in job["compare"] for key in ("infiniband", "roce_adaptive", "roce_ecmp")}
    assert times == {planned["all_to_all_s"]}
    assert "inside one server (NVLink only)" in " ".join(job["assumptions"])


def test_expert_parallel_across_servers_runs_at_the_nics_rate() -> None:
    """TP 8, EP 8: every expert-parallel peer is on another server (one rank per server); DP 32,
    31 micro-batches, 4,096 / 8 = 512 tokens per GPU (sequence parallelism): 7 x 1,048,576 B at
    400G x 0.90 = 45 GB/s is 163 us + 14 us; 4 x 32 x 31 = 3,968 calls. InfiniBand at 0.94,
    and 100G four times slower on the bandwidth term."""
    job = _job("--tp", "8", "--ep", "8", "--compare")
    planned = job["planned"]
    assert planned["all_to_all_calls"] == 4 * 32 * 31
    assert planned["all_to_all_s"] == pytest.approx(3968 * _per_call(512, 8, 1, 45.0, 8), rel=5e-3)
    rows = {row["speed_gbps"]: row for row in job["compare"]}
    assert rows[400]["infiniband"]["all_to_all_s"] == pytest.approx(3968 * _per_call(512, 8, 1, 47.0, 8), rel=5e-3)
    assert rows[100]["roce_adaptive"]["all_to_all_s"] == pytest.approx(3968 * _per_call(512, 8, 1, 11.25, 8), rel=5e-3)
    # On the critical path: in the exposed time and the step, beside the exposed all-reduce.
    assert planned["exposed_s"] == pytest.approx(planned["allreduce_exposed_s"] + planned["all_to_all_s"], rel=1e-2)
    assert planned["step_s"] == pytest.approx(planned["compute_s"] + planned["exposed_s"], rel=1e-2)
    assert "experts: 3,968 all-to-alls" in job["headline"][1]


def test_a_group_of_two_servers_is_limited_by_its_network_half() -> None:
    """TP 1, EP 16 (16 experts): 8 ranks per server, 2 servers. Per peer 4,096 x 4,096 x 4 / 16 =
    4,194,304 B; 7 NVLink peers (79 us) and 8 network peers (746 us) at once: 746 us + 14 us."""
    job = _job("--tp", "1", "--ep", "16", experts=16)
    call = _per_call(4096, 16, 8, 45.0, 2)
    assert call == pytest.approx(8 * 4194304 / 45e9 + 14e-6)
    assert job["planned"]["all_to_all_s"] == pytest.approx(512 * call, rel=5e-3)


def test_static_ecmp_slows_the_all_to_all_by_its_path_factor() -> None:
    """With static hashing the all-to-all pattern's own (mean) path factor divides the rate."""
    job = _job("--tp", "8", "--ep", "8", "--roce-load-balancing", "ecmp")
    factor = job["paths"]["all_to_all_ecmp"]
    assert factor > 1.0  # hash collisions on the planned uplinks
    assert job["planned"]["all_to_all_s"] == pytest.approx(3968 * _per_call(512, 8, 1, 45.0 / factor, 8), rel=1e-2)


def test_a_dense_job_has_no_all_to_all() -> None:
    result = run(POD, "--params", "47B", "--tp", "8", "--no-simulate", "--format", "json")
    planned = json.loads(result.stdout)["jobs"][0]["planned"]
    assert (planned["all_to_all_calls"], planned["all_to_all_s"]) == (0, 0)


REFUSALS = [
    (("--experts", "8", "--experts-per-token", "9"), "--experts-per-token: experts_per_token 9 is more than the model's 8 experts"),
    (("--experts", "8", "--ep", "16", "--tp", "1"), "--ep: 8 experts do not split over expert_parallel 16"),
    (("--experts", "64", "--ep", "64", "--tp", "8"), "--ep: expert_parallel 64 does not divide data_parallel 32"),
    (
        ("--experts", "12", "--ep", "12", "--tp", "1"),
        "--ep: expert_parallel 12 x tensor_parallel 1 = 12 GPUs neither divides nor fills whole servers of 8 GPUs",
    ),
    (("--ep", "8"), "expert_parallel 8 needs experts:"),
]


@pytest.mark.parametrize(("flags", "message"), REFUSALS)
def test_analyze_refuses_what_cannot_run(flags: tuple[str, ...], message: str) -> None:
    result = run(POD, *flags, "--no-simulate")
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "Traceback" not in result.output


def _validate(tmp_path: Path, job: dict[str, Any]) -> tuple[Any, Path]:
    """8 servers of 2 NIC ports (leaves 1:1): 16 GPUs, TP 2 by default, DP 8."""
    path = write(tmp_path, fabric(servers={"per_leaf": 2, "ports_per_server": 2, "speed": "400G"}, jobs={"moe": job}))
    return CliRunner().invoke(main, ["validate", str(path)]), path


def test_validate_refuses_every_bad_expert_setting_at_its_key(tmp_path: Path) -> None:
    result, path = _validate(tmp_path, {"experts": 6, "experts_per_token": 8, "expert_parallel": 32})
    assert result.exit_code == 2, result.output
    lines = [line for line in result.stderr.splitlines() if line.startswith(f"{path}:")]
    assert any("jobs.moe.experts_per_token: experts_per_token 8 is more than the model's 6 experts" in x for x in lines)
    assert any("jobs.moe.expert_parallel: 6 experts do not split over expert_parallel 32" in x for x in lines)
    assert any("jobs.moe.expert_parallel: expert_parallel 32 does not divide data_parallel 8" in x for x in lines)
    assert all(re.match(rf"{re.escape(str(path))}:\d+:\d+: ", x) for x in lines)


def test_validate_and_analyze_refuse_with_the_same_words(tmp_path: Path) -> None:
    result, path = _validate(tmp_path, {"experts": 8, "expert_parallel": 3, "tensor_parallel": 1})
    analysed = run(str(path), "--no-simulate")
    assert result.exit_code == analysed.exit_code == 2
    expected = "jobs.moe.expert_parallel: 8 experts do not split over expert_parallel 3"
    assert expected in result.stderr and expected in analysed.stderr


def test_a_valid_expert_job_validates(tmp_path: Path) -> None:
    result, _ = _validate(tmp_path, {"experts": 64, "expert_parallel": 8, "experts_per_token": 6})
    assert result.exit_code == 0, result.output
    assert "jobs." not in result.stderr


@pytest.mark.parametrize(
    ("job", "message"),
    [
        ({"tensor_parallel": 4}, "jobs.moe.tensor_parallel: tensor_parallel 4 spans 2 servers of 2 GPUs"),
        (
            {"data_parallel": 3},
            "jobs.moe.data_parallel: data_parallel 3 x tensor_parallel 2 x pipeline_parallel 1 = 6, but the job has 16 GPUs",
        ),
        ({"pipeline_parallel": 3}, "jobs.moe: 16 GPUs do not split into tensor_parallel 2 x pipeline_parallel 3 groups"),
    ],
)
def test_validate_refuses_the_parallelism_analyze_refuses(tmp_path: Path, job: dict[str, Any], message: str) -> None:
    """Before, only `analyze` refused these; `validate` passed the inventory."""
    result, path = _validate(tmp_path, job)
    analysed = run(str(path), "--no-simulate")
    assert result.exit_code == analysed.exit_code == 2, result.output
    assert message in result.stderr and message in analysed.stderr
