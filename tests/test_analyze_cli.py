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

HAND_JOB = {"params": "7B", "efficiency": {"roce": 1.0}, "latency_us": {"network": 0, "nvlink": 0}}


def run(*args: str) -> Any:
    return CliRunner().invoke(main, ["analyze", *args], catch_exceptions=False)


def test_json_of_an_inventory_job(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(jobs={"hand": HAND_JOB}))
    result = run(str(path), "--format", "json", "--no-simulate")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    (job,) = data["jobs"]
    assert job["name"] == "hand"
    assert job["inputs"]["gpus"] == 16 and job["inputs"]["gpus_per_server"] == 8
    assert job["network"] == {"efficiency": 1.0, "gpu_gbps": 400.0, "leaves": 1, "line_gbps": 400.0, "servers": 2, "uplink_share": 1.0}
    assert job["estimate"]["hierarchical_s"] == pytest.approx(0.0894444, rel=1e-5)
    assert job["estimate"]["ring_s"] == pytest.approx(0.525)
    assert job["assumptions"]["efficiency"] == {"infiniband": 0.92, "roce": 1.0}
    assert "simulation" not in job and "compare" not in job


def test_flags_override_the_inventory(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(jobs={"hand": HAND_JOB}))
    result = run(str(path), "--format", "json", "--no-simulate", "--params", "70B", "--gpus", "8", "--tp", "8")
    assert result.exit_code == 0, result.output
    job = json.loads(result.output)["jobs"][0]
    assert job["inputs"]["params"] == 70e9
    assert (job["inputs"]["data_parallel"], job["inputs"]["tensor_parallel"]) == (1, 8)
    assert job["estimate"]["allreduce_s"] == 0.0  # one data-parallel rank: nothing to reduce


def test_without_jobs_the_flags_make_one(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory())
    result = run(str(path), "--format", "json", "--no-simulate", "--params", "405B", "--mfu", "0.5")
    data = json.loads(result.output)
    assert [j["name"] for j in data["jobs"]] == ["cli"]
    assert data["jobs"][0]["inputs"]["mfu"] == 0.5


def test_terminal_report_with_simulation_and_compare() -> None:
    result = run(str(EXAMPLES / "pod-roce-400g"), "--compare", "--trials", "32")
    assert result.exit_code == 0, result.output
    for text in ("verdict:", "Step model", "Assumptions", "Flow simulation", "ring-random", "all-to-all", "Compare", "Recommendation"):
        assert text in result.output


def test_compare_json(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(leaves=2, jobs={"hand": HAND_JOB}))
    data = json.loads(run(str(path), "--format", "json", "--compare", "--trials", "16").output)
    comp = data["jobs"][0]["compare"]
    assert [(r["transport"], r["speed_gbps"]) for r in comp["rows"]] == [
        (t, s) for t in ("infiniband", "roce") for s in (100, 200, 400, 800)
    ]
    assert [r["bucket"] for r in comp["recommendation"]] == ["up to 128 GPUs", "128-512 GPUs", "512 GPUs and more"]
    for row in comp["rows"]:
        assert row["network_bound_from_gpus"] is None or row["exposed_from_gpus"] <= row["network_bound_from_gpus"]
    roce = [r["allreduce_s"] for r in comp["rows"] if r["transport"] == "roce"]
    assert roce == sorted(roce, reverse=True)


def test_markdown_and_svg_are_reproducible(tmp_path: Path) -> None:
    path = write_inventory(tmp_path / "f", inventory(leaves=2, jobs={"hand": HAND_JOB, "big": {"params": "70B"}}))
    out = tmp_path / "docs" / "analysis.md"
    first = run(str(path), "--compare", "--trials", "16", "--markdown", str(out))
    assert first.exit_code == 0, first.output
    texts = {p.name: p.read_bytes() for p in sorted(out.parent.iterdir())}
    assert sorted(texts) == ["analysis-big.svg", "analysis-hand.svg", "analysis.md"]
    markdown = texts["analysis.md"].decode()
    assert markdown.startswith("## Will t1 keep the GPUs busy?")
    assert "![analysis-hand.svg](analysis-hand.svg)" in markdown
    assert "| cluster | choice | why (computed) |" in markdown
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
    jobs = {"too-big": {"gpus": 64}, "mismatch": {"gpus": 16, "data_parallel": 4, "tensor_parallel": 2}}
    path = write_inventory(tmp_path / "f", inventory(jobs=jobs))
    result = run(str(path), "--no-simulate")
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert any(
        ":" in line and "jobs.too-big.gpus: the job needs 8 servers of 8 GPUs; the plan has 2 (16 GPUs)" in line for line in lines
    ), result.output
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
