"""Forgiving where it costs nothing: units as people write them (normalised to the canonical
form everywhere after loading), the ambiguous refused with the reason, an indentation error
pointing at the line to fix, one finding per root cause, and why a missing section is needed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fabricgen.checks.fabric import _clash_findings
from fabricgen.cli import main
from fabricgen.core.diagnostics import FabricError
from fabricgen.inventory.loader import SourceMap
from fabricgen.pipeline import load_and_plan
from fabricgen.render.serialize import plan_json
from tests.fabrics import fabric, write


def _errors(path: Path) -> list[str]:
    with pytest.raises(FabricError) as caught:
        load_and_plan(path)
    return [d.format() for d in caught.value.diagnostics if d.is_error]


def _canonical(tmp_path: Path) -> dict[str, Any]:
    return fabric(
        uplinks={"speed": "400G"},
        servers={"speed": "400G"},
        roce={"ecn": {"min": "100KB", "max": "1MB"}},
        cabling={"length": {"leaf-spine": "30m"}},
    )


@pytest.mark.parametrize(
    ("uplink", "server", "ecn_min", "ecn_max", "length"),
    [
        ("400g", "400 G", "100 KB", "1mb", "30 m"),
        ("400Gbps", "400gb/s", "100kb", "1 MB", "30 metres"),
        ("400 GbE", "400Gb", "100kB", "1mb", "30M"),
    ],
)
def test_units_as_people_write_them_give_the_canonical_plan(
    tmp_path: Path, uplink: str, server: str, ecn_min: str, ecn_max: str, length: str
) -> None:
    expected = plan_json(load_and_plan(write(tmp_path, _canonical(tmp_path), "canonical.yml")).plan)
    doc = fabric(
        uplinks={"speed": uplink},
        servers={"speed": server},
        roce={"ecn": {"min": ecn_min, "max": ecn_max}},
        cabling={"length": {"leaf-spine": length}},
    )
    relaxed = load_and_plan(write(tmp_path, doc, "relaxed.yml")).plan
    assert relaxed.roce is not None
    assert (relaxed.roce.ecn_min_bytes, relaxed.roce.ecn_max_bytes) == (100_000, 1_000_000)
    # The plan (and so every output) is the one of the canonical spelling, except its source name.
    assert plan_json(relaxed).replace("relaxed.yml", "canonical.yml") == expected


@pytest.mark.parametrize(
    ("section", "value", "message"),
    [
        ("servers", {"speed": "400GB"}, "servers.speed: '400GB' reads as gigabytes; link speeds are in Gbit/s: write 400G"),
        ("roce", {"ecn": {"min": "100Kb"}}, "roce.ecn.min: '100Kb' could be kilobits or kilobytes: write 100KB"),
        ("roce", {"ecn": {"max": "1MiB"}}, "roce.ecn.max: '1MiB' counts 1024s"),
        ("cabling", {"length": {"server-leaf": "10ft"}}, "cabling.length.server-leaf: '10ft': lengths are in metres"),
    ],
)
def test_ambiguous_units_are_refused_with_the_reason(tmp_path: Path, section: str, value: dict[str, Any], message: str) -> None:
    errors = _errors(write(tmp_path, fabric(**{section: value})))
    assert len(errors) == 1, errors  # our message only, not the schema's pattern error as well
    assert message in errors[0]


def test_job_counts_as_people_write_them(tmp_path: Path) -> None:
    from fabricgen.inventory.loader import load_inventory
    from fabricgen.inventory.schema import normalise_units

    path = write(tmp_path, fabric(jobs={"llm": {"params": "70b", "tokens_per_step": "4 m"}}))
    load_and_plan(path)  # valid
    document = load_inventory(path)
    data, problems = normalise_units(document.data, document.source)
    assert problems == []
    assert data["jobs"]["llm"] == {"params": "70B", "tokens_per_step": "4M"}
    refused = write(tmp_path, fabric(jobs={"llm": {"params": "70G"}}), "refused.yml")
    assert any("jobs.llm.params: '70G' is ambiguous" in e for e in _errors(refused))


def test_analyze_flags_accept_lower_case_counts() -> None:
    from fabricgen.analyze.cli import CountType

    assert CountType().convert("70b", None, None) == "70B"
    assert CountType().convert("4 m", None, None) == "4M"


INDENTED = """\
fabric:
  name: t1
spines:
  count: 2
  model: arista-7060dx5-64s
leaves:
  count: 4
   model: arista-7060dx5-64s
"""


def test_an_indentation_error_names_the_line_to_fix(tmp_path: Path) -> None:
    path = tmp_path / "fabric.yml"
    path.write_text(INDENTED, encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    # line 8 is the one indented one space too deep; column 4 is where it starts
    assert f"{path}:8:4: YAML syntax error: check the indentation of line 8" in result.output
    assert "move it to column 3" in result.output


def test_a_dedented_list_item_key_names_its_line(tmp_path: Path) -> None:
    text = INDENTED.replace("   model", "  model") + "  nodes:\n    - index: 1\n     name: x\n"
    path = tmp_path / "fabric.yml"
    path.write_text(text, encoding="utf-8")
    errors = _errors(path)
    assert len(errors) == 1
    assert ":11:6: YAML syntax error: check the indentation of line 11" in errors[0]
    assert "left of the keys of line 10 (column 7)" in errors[0]


def test_thirteen_leaves_with_the_same_oversubscription_are_one_finding(tmp_path: Path) -> None:
    # 8 servers x 400G down, 2 spines x 2 x 400G up: 2:1 on each of the 13 leaves
    errors = _errors(write(tmp_path, fabric(leaves={"count": 13}, servers={"per_leaf": 8})))
    assert len(errors) == 1
    assert "t1-leaf01..t1-leaf13 are oversubscribed 2:1 (3200G to servers, 1600G to spines)" in errors[0]


def test_one_overlap_of_address_blocks_is_one_finding() -> None:
    # Two leaves whose server blocks overlap over 128 addresses (the planner no longer builds
    # such a plan from a model pin, tests/test_allocation_pins.py): one finding, not 128.
    clashing = {f"10.2.1.{n}": [("t1-leaf03", f"Ethernet{n}/1"), (f"t1-gpu05{n:02d}", "nic1")] for n in range(128)}
    leaf_of = {f"t1-gpu05{n:02d}": "t1-leaf05" for n in range(128)}
    found = [d.format() for d in _clash_findings(clashing, {}, leaf_of, SourceMap("fabric.yml", {}))]
    assert len(found) == 1, found
    assert "128 addresses (10.2.1.0 to 10.2.1.127) are used by more than one of t1-leaf03, t1-leaf05 (and their servers)" in found[0]


def test_a_missing_section_says_why_it_is_required(tmp_path: Path) -> None:
    doc = fabric()
    del doc["addressing"]
    errors = _errors(write(tmp_path, doc))
    assert len(errors) == 1
    assert "missing required key 'addressing': addressing is required for RoCE fabrics" in errors[0]
    assert "InfiniBand fabrics (fabric.transport: infiniband) need none" in errors[0]
