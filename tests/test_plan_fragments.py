"""The plan in the build folder: `plan/fabric.json` plus one fragment per device. Joined they are
the whole plan (`fabricgen plan --format json`), and a one-leaf change rewrites a handful of
files: the leaf's, its spines', and the fabric-wide files that name ASNs, never another leaf's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from fabricgen.render.serialize import FABRIC_FRAGMENT, join_fragments, plan_fragments, plan_json
from fabricgen.render.write import write_tree
from tests.conftest import example_plan

SPINES, LEAVES = 4, 6


def _key(item: Any) -> str:
    return json.dumps(item, sort_keys=True)


def test_fragments_join_into_the_whole_plan() -> None:
    plan = example_plan("cluster-3tier")
    files = plan_fragments(plan)
    assert set(files) == {FABRIC_FRAGMENT} | {f"plan/devices/{d.name}.json" for d in plan.devices}
    fabric = json.loads(files[FABRIC_FRAGMENT])
    devices = {
        path.removeprefix("plan/devices/").removesuffix(".json"): json.loads(text)
        for path, text in files.items()
        if path != FABRIC_FRAGMENT
    }
    joined, whole = join_fragments(fabric, devices), json.loads(plan_json(plan))
    assert whole["links"] and whole["servers"]
    for grouped in ("links", "servers"):  # grouped by device: the same items, in another order
        assert sorted(map(_key, joined.pop(grouped))) == sorted(map(_key, whole.pop(grouped)))
    assert joined == whole
    assert fabric["links"] == [] and fabric["servers"] == []  # every link and server has a device


def test_each_list_item_is_one_line() -> None:
    plan = example_plan("pod-roce-400g")
    leaf = next(d for d in plan.devices if d.role == "leaf")
    text = plan_fragments(plan)[f"plan/devices/{leaf.name}.json"]
    lines = text.splitlines()
    assert sum(1 for line in lines if line.startswith('    {"address"')) == len(leaf.bgp_neighbors) + sum(1 for i in leaf.interfaces), (
        "one line per interface and per BGP neighbor"
    )
    assert json.loads(text)["name"] == leaf.name


def _inventory(pinned_asn: int = 0) -> str:
    pin = f"\n  nodes: [{{index: 1, asn: {pinned_asn}}}]" if pinned_asn else ""
    return f"""fabric: {{name: small, transport: roce}}
spines: {{count: {SPINES}, model: arista-7060dx5-64s, platform: eos, name: "s-spine{{index}}"}}
leaves:
  count: {LEAVES}
  model: arista-7060dx5-64s
  platform: eos
  name: "s-leaf{{index}}"{pin}
addressing: {{loopbacks: 10.0.0.0/24, fabric: 10.1.0.0/16, servers: 10.2.0.0/16, management: 192.168.0.0/24}}
bgp: {{spine_asn: 65000, leaf_asn: 65101}}
uplinks: {{per_spine: 1, speed: 400G}}
servers: {{per_leaf: 2, ports_per_server: 2, speed: 400G}}
"""


def _render(folder: Path, out: Path, text: str) -> list[str]:
    (folder / "fabric.yml").write_text(text, encoding="utf-8")
    plan = load_and_plan(folder / "fabric.yml").plan
    summary = write_tree(out, render_files(plan, RenderContext()))
    return summary.added + summary.changed


def test_one_leaf_change_rewrites_only_its_own_and_its_spines_files(tmp_path: Path) -> None:
    out = tmp_path / "build"
    first = _render(tmp_path, out, _inventory())
    written = _render(tmp_path, out, _inventory(pinned_asn=4000000000))
    touched = {"s-leaf1", *(f"s-spine{n}" for n in range(1, SPINES + 1))}
    fragments = {path for path in written if path.startswith("plan/")}
    # plan/fabric.json lists the inventory's pins: the new pin is a fabric-wide fact.
    assert fragments == {FABRIC_FRAGMENT} | {f"plan/devices/{name}.json" for name in touched}
    untouched = [f"s-leaf{n}" for n in range(2, LEAVES + 1)]
    assert [path for path in written if any(Path(path).stem.startswith(name) for name in untouched)] == []
    fabric_wide = [path for path in written if not any(name in path for name in touched)]
    assert len(fabric_wide) <= 8 < len(first) - len(written), fabric_wide


def _reference_lines(data: dict[str, Any]) -> str:
    """The fragment format written plainly with the standard library: a key per line, a
    non-empty list's items one compact value per line, anything else compact on its key's line."""
    lines = ["{"]
    for number, key in enumerate(sorted(data), start=1):
        value, comma = data[key], "," if number < len(data) else ""
        compact = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
        if isinstance(value, list) and value:
            items = [f"    {json.dumps(item, separators=(',', ':'), sort_keys=True, ensure_ascii=False)}" for item in value]
            lines += [f"  {json.dumps(key)}: [", ",\n".join(items), f"  ]{comma}"]
        else:
            lines.append(f"  {json.dumps(key)}: {compact}{comma}")
    return "\n".join(lines) + "\n}\n"


def test_fragments_are_the_format_written_by_the_standard_library() -> None:
    """Every fragment, byte for byte, as the reference writer formats its parsed data (orjson,
    fragments and seams cut in the encoded text must not change a byte)."""
    for name in ("cluster-3tier", "pod-mixed", "ib-hdr"):
        files = plan_fragments(example_plan(name))
        for path, text in files.items():
            assert text == _reference_lines(json.loads(text)), path
