"""Rendering at scale: `-j N` gives the same bytes as `-j 1`; the fast paths (orjson for the plan fragments under plan/,
tidy's scan) give the same text as the plain implementations; breakouts and parallel links
work on every tier of the three-tier example."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fabricgen.cli import main
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from fabricgen.render.parallel import slices
from fabricgen.render.serialize import orjson, plan_json, to_data
from fabricgen.render.tidy import tidy
from tests.conftest import EXAMPLES, example_plan
from tests.render_cases import rendered


def test_jobs_render_the_same_bytes() -> None:
    plan, one = rendered("inventories/cluster-3tier")  # rendered once per session, with one job
    assert RenderContext().jobs == 1
    for jobs in (2, 3):
        assert render_files(plan, RenderContext(jobs=jobs)) == one


def test_cli_jobs_writes_identical_trees(tmp_path: Path) -> None:
    runner = CliRunner()
    trees = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        result = runner.invoke(main, ["render", str(EXAMPLES / "pod-rail"), "-o", str(out), "-q", "-j", jobs])
        assert result.exit_code == 0, result.output
        trees[jobs] = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert trees["1"] == trees["2"] and len(trees["1"]) > 24


@given(st.integers(0, 500), st.integers(1, 16))
def test_slices_cover_everything_in_order(count: int, jobs: int) -> None:
    parts = slices(count, jobs)
    assert [i for start, stop in parts for i in range(start, stop)] == list(range(count))
    assert len(parts) <= max(jobs, 1)


def reference_tidy(text: str) -> str:
    """The rules said another way than `tidy`'s own: each line right-stripped, runs of blank
    lines made one, none at either end, one final line end."""
    stripped = "\n".join(line.rstrip() for line in text.split("\n"))
    return re.sub(r"\n{3,}", "\n\n", stripped).strip("\n") + "\n"


@settings(max_examples=500)
@given(st.text(alphabet=st.sampled_from(list("ab \t\n\r\x0b\x0c\x1c\x1f\u00a0\u2028{}"))))
def test_tidy_fast_path_agrees_with_the_line_by_line_rules(text: str) -> None:
    assert tidy(text) == reference_tidy(text)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.text(alphabet=st.characters(codec="utf-8"), max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=30,
)


@settings(max_examples=300)
@given(json_values)
def test_orjson_writes_what_the_standard_encoder_writes(value: Any) -> None:
    fast = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode("utf-8")
    assert fast == json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False)


def test_plan_json_is_the_standard_encoding_of_the_plan() -> None:
    plan = example_plan("cluster-3tier")
    data = to_data(plan)
    for item in data["oversubscription"]:
        item["ratio"] = round(item["downlink_gbps"] / item["uplink_gbps"], 4) if item["uplink_gbps"] else None
    assert plan_json(plan) == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_breakouts_and_parallel_links_on_every_tier() -> None:
    plan = example_plan("cluster-3tier")
    spine = next(d for d in plan.devices if d.role == "spine")
    down = [i for i in spine.interfaces if i.role == "downlink"]
    up = [i for i in spine.interfaces if i.role == "uplink"]
    assert len(down) == 16 * 4 and {i.speed for i in down} == {400}
    assert len(up) == 8 * 4 and {i.speed for i in up} == {800}
    broken = {b.port: (b.count, b.speed) for b in spine.breakouts}
    assert broken == {port: (2, 400) for port in range(1, 33)}
    assert {i.port for i in up} == set(range(33, 65))
    superspine = next(d for d in plan.devices if d.role == "superspine")
    assert not superspine.breakouts and len(superspine.interfaces) == 8 * 4
    pairs: dict[tuple[str, str], int] = {}
    for link in plan.links:
        pairs[(link.a.device, link.z.device)] = pairs.get((link.a.device, link.z.device), 0) + 1
    kinds = {link.kind for link in plan.links}
    assert kinds == {"leaf-spine", "server-leaf", "spine-superspine"}
    assert {n for (a, z), n in pairs.items() if "spine" in z and "ss" not in z} == {4}
    assert {n for (a, z), n in pairs.items() if "-ss" in z} == {4}
