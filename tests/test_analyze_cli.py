"""`fabricgen analyze` end to end: jobs from the inventory and from flags, JSON, the terminal
report, the Markdown section with its SVG, reproducible output, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from tests.conftest import EXAMPLES
from tests.test_analyze_plans import inventory, write_inventory

HAND_JOB = {
    "params": "7B",
    "tensor_parallel": 1,
    "efficiency": {"roce": 1.0},
    "latency_us": {"network": 0, "nvlink": 0},
    "jitter_us": {"roce": 0},
}


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["analyze", *args], catch_exceptions=False)


def test_json_of_an_inventory_job(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(jobs={"hand": HAND_JOB}))
    result = run(str(path), "--format", "json", "--no-simulate")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (job,) = data["jobs"]
    assert job["name"] == "hand"
    assert (job["inputs"]["gpus"], job["inputs"]["gpus_per_server"], job["inputs"]["data_parallel"]) == (16, 8, 16)
    planned = job["planned"]
    # 2 servers x 8 x 400G on one leaf: 8 x 50 GB/s of NICs, but NVLink as NCCL achieves it
    # (370 GB/s) is the narrower; ring 2 x 15/16 x 14 GB / 370 GB/s.
    assert planned["busbw_gbytes_per_s"] == 370.0
    assert planned["allreduce_s"] == pytest.approx(2 * 15 / 16 * 14e9 / 370e9, rel=1e-2)
    assert planned["algorithm"] == "ring"
    assert job["paths"]["adaptive"] == 1.0 and job["paths"]["tree_adaptive"] == 1.0
    assert job["headline"][0].startswith("400G RoCEv2 as planned (adaptive routing): compute-bound, ")
    assert "simulation" not in job and "compare" not in job


def test_flags_override_the_inventory(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(jobs={"hand": HAND_JOB}))
    result = run(str(path), "--format", "json", "--no-simulate", "--params", "70B", "--gpus", "8", "--tp", "8", "--qps-per-connection", "4")
    assert result.exit_code == 0, result.output
    job = json.loads(result.output)["jobs"][0]
    assert job["inputs"]["params"] == 70e9
    assert (job["inputs"]["data_parallel"], job["inputs"]["tensor_parallel"]) == (1, 8)
    assert job["inputs"]["nccl"]["qps_per_connection"] == 4
    assert job["planned"]["allreduce_s"] == 0.0  # one data-parallel rank: nothing to reduce


def test_without_jobs_the_flags_make_one(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory())
    result = run(str(path), "--format", "json", "--no-simulate", "--params", "405B", "--mfu", "0.5")
    data = json.loads(result.output)
    assert [j["name"] for j in data["jobs"]] == ["cli"]
    assert data["jobs"][0]["inputs"]["mfu"] == 0.5
    assert data["jobs"][0]["inputs"]["tensor_parallel"] == 8  # default: the GPUs of a server


@pytest.mark.parametrize("example", sorted(p.name for p in EXAMPLES.iterdir()))
def test_every_example_answers_within_80_columns(example: str) -> None:
    """Rails and three tiers included; the planned fabric's answer comes first. (The 4,096-GPU
    three-tier example skips its 4 M-flow simulation here; test_analyze_ecmp simulates three tiers.)"""
    result = run(str(EXAMPLES / example), "--trials", "4", *(["--no-simulate"] if example == "cluster-3tier" else []))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    job_line = next(i for i, line in enumerate(lines) if line.startswith("job cli:"))
    assert " as planned (" in lines[job_line + 1]
    assert all(len(line) <= 80 for line in lines if not line.startswith(str(EXAMPLES))), max(lines, key=len)
    for text in (
        "Checklist:",
        "leaves one NVLink node",
        "70% ceiling",
        "2x model",
        "Recommendation by cluster size",
        "decided by:",
        "Assumptions that bound this answer:",
        "- overlap: the gradient all-reduce",
        "it takes no bandwidth",
    ):
        assert text in result.output


def test_rail_placement_line_counts_rail_leaves() -> None:
    data = json.loads(run(str(EXAMPLES / "pod-rail"), "--format", "json", "--no-simulate", "--gpus", "256").output)
    assert data["jobs"][0]["placement"] == (
        "first 32 servers in plan order, NIC ports on 8 leaves (rail-attached: each server spans its unit's rail leaves)"
    )


def test_recommendation_does_not_depend_on_the_simulation() -> None:
    path = str(EXAMPLES / "pod-roce-400g")
    with_sim = json.loads(run(path, "--format", "json", "--trials", "8").output)["jobs"][0]
    without = json.loads(run(path, "--format", "json", "--no-simulate").output)["jobs"][0]
    other_seed = json.loads(run(path, "--format", "json", "--trials", "8", "--seed", "9").output)["jobs"][0]
    assert with_sim["recommendation"] == without["recommendation"] == other_seed["recommendation"]
    this_job = with_sim["recommendation"][0]
    assert this_job["deciding"].startswith("256 GPUs in 129-512")
    bands = [r["choice"] for r in with_sim["recommendation"][1:]]
    assert bands[0] == "RoCEv2" and bands[1] == "RoCEv2 or InfiniBand"


def test_large_models_on_large_clusters_get_infiniband() -> None:
    data = json.loads(run(str(EXAMPLES / "cluster-3tier"), "--format", "json", "--no-simulate", "--params", "405B").output)
    rows = data["jobs"][0]["recommendation"]
    assert rows[0]["choice"] == "InfiniBand" and "405B >= 100B" in rows[0]["deciding"]


def test_roce_range_and_what_moves_it() -> None:
    """Defaults (adaptive routing, NCCL's 2 channels per NIC): RoCEv2 within 85-95 % of
    InfiniBand on the example pod; static hashing is the low end and becomes the answer when asked."""
    path = str(EXAMPLES / "pod-roce-400g")
    job = json.loads(run(path, "--format", "json", "--trials", "32").output)["jobs"][0]
    low, high = job["roce_share_of_infiniband"]
    assert 0.85 <= high <= 0.95 and low < high
    hashed = json.loads(run(path, "--format", "json", "--trials", "32", "--roce-load-balancing", "ecmp").output)["jobs"][0]
    assert "(static ECMP, mean over hash draws)" in hashed["headline"][0]
    assert hashed["planned"]["allreduce_s"] == job["roce_ecmp"]["allreduce_s"]
    more_qps = json.loads(run(path, "--format", "json", "--trials", "32", "--qps-per-connection", "8").output)["jobs"][0]
    assert more_qps["paths"]["ecmp"] < job["paths"]["ecmp"]


def test_memory_warning(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(jobs={"hand": HAND_JOB}))
    job = json.loads(run(str(path), "--format", "json", "--no-simulate", "--params", "70B").output)["jobs"][0]
    # 70B with TP 1: 70e9 x 4 bytes of weights and gradients alone exceed 80 GB.
    assert any("GB per GPU" in w and "a GPU has 80 GB" in w for w in job["warnings"])
    ok = json.loads(run(str(path), "--format", "json", "--no-simulate").output)["jobs"][0]
    assert not any("GB per GPU" in w for w in ok["warnings"])


def test_compare_json(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(leaves=2, jobs={"hand": HAND_JOB}))
    data = json.loads(run(str(path), "--format", "json", "--compare", "--trials", "16").output)
    rows = data["jobs"][0]["compare"]
    assert [r["speed_gbps"] for r in rows] == [100, 200, 400, 800]
    ib = [r["infiniband"]["allreduce_s"] for r in rows]
    assert ib == sorted(ib, reverse=True)


def test_markdown_and_svg_are_reproducible_and_readable(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(leaves=2, jobs={"hand": HAND_JOB, "big": {"params": "70B"}}))
    out = tmp_path / "docs" / "analysis.md"
    old = os.umask(0o022)
    try:
        first = run(str(path), "--compare", "--trials", "16", "--markdown", str(out))
    finally:
        os.umask(old)
    assert first.exit_code == 0, first.output
    texts = {p.name: p.read_bytes() for p in sorted(out.parent.iterdir())}
    assert sorted(texts) == ["analysis-big.svg", "analysis-hand.svg", "analysis.md"]
    assert {oct(p.stat().st_mode & 0o777) for p in out.parent.iterdir()} == {"0o644"}
    markdown = texts["analysis.md"].decode()
    assert markdown.startswith("## Will t1 keep the GPUs busy?")
    assert "![analysis-hand.svg](analysis-hand.svg)" in markdown
    assert "| cluster | choice | decided by | why (computed) |" in markdown
    svg = texts["analysis-hand.svg"].decode()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "dc:date" not in svg
    for text in texts.values():
        assert all(line == line.rstrip() for line in text.decode().splitlines())
    run(str(path), "--compare", "--trials", "16", "--markdown", str(out))
    assert {p.name: p.read_bytes() for p in sorted(out.parent.iterdir())} == texts


def test_json_is_identical_across_hash_seeds(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(leaves=2))
    outputs = set()
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run(
            [sys.executable, "-c", "from fabricgen.cli import main; main()", "analyze", str(path), "--format", "json", "--trials", "16"],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        outputs.add(proc.stdout)
    assert len(outputs) == 1


def test_bad_jobs_are_reported_with_their_place(tmp_path: Path) -> None:
    # A job that cannot be placed is refused by the inventory's checks (as `validate` does), before the analysis.
    path = write_inventory(tmp_path / "big", inventory(jobs={"too-big": {"gpus": 64}}))
    result = run(str(path), "--no-simulate")
    assert result.exit_code == 2
    assert any(
        ":" in line and "jobs.too-big.gpus: the job needs 8 servers of 8 GPUs; the plan has 2 (16 GPUs)" in line
        for line in result.output.splitlines()
    ), result.output
    jobs = {"mismatch": {"gpus": 16, "data_parallel": 4, "tensor_parallel": 2}}
    path = write_inventory(tmp_path / "f", inventory(jobs=jobs))
    result = run(str(path), "--no-simulate")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert any(
        "jobs.mismatch.data_parallel: data_parallel 4 x tensor_parallel 2 x pipeline_parallel 1 = 8, but the job has 16 GPUs" in line
        for line in lines
    )
    assert "Traceback" not in result.output


def test_schema_checks_the_jobs_section(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(jobs={"j": {"param": "7B", "mfu": 2}}))
    result = run(str(path))
    assert result.exit_code == 2
    assert "jobs.j.param: unknown key 'param' (hint: did you mean 'params'?)" in result.output
    assert "jobs.j.mfu: must be at most 1, got 2" in result.output


def test_bad_flags_exit_2(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(jobs={"hand": HAND_JOB}))
    assert run(str(path), "--params", "seven").exit_code == 2
    assert run(str(path), "--mfu", "1.5").exit_code == 2
    unknown = run(str(path), "--job", "nope")
    assert unknown.exit_code == 2 and "no job 'nope'" in unknown.output
    too_many = run(str(path), "--gpus", "1000", "--no-simulate")
    assert too_many.exit_code == 2 and "--gpus: the job needs 125 servers" in too_many.output
