"""Drain as planned state (docs/drain.md): `drain:` and `--drain`, refused where unsafe, rendered
into EOS, NX-OS and the lab's FRR. Expected lines come from the vendors' documentation (EOS
maintenance mode, NX-OS and FRR BGP graceful shutdown, RFC 8326's 65535:0), not from the code."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from click.testing import CliRunner, Result

from fabricgen.cli import main
from fabricgen.lab.configs import frr_config
from fabricgen.lab.topology import lab_topology
from fabricgen.lab.traffic import loss
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES

POD = EXAMPLES / "pod-roce-400g" / "fabric.yml"
RAIL = EXAMPLES / "pod-rail" / "fabric.yml"


def _with_drain(tmp_path: Path, source: Path, names: list[str], **oversubscription: object) -> Path:
    """A copy of `source` with `drain:` (and `oversubscription:` keys) appended as written text."""
    text = source.read_text(encoding="utf-8")
    if oversubscription:
        doc = yaml.safe_load(text)
        doc.setdefault("oversubscription", {}).update(oversubscription)
        text = yaml.safe_dump(doc, sort_keys=False)
    path = tmp_path / "fabric.yml"
    path.write_text(text + "drain:\n" + "".join(f"  - {name}\n" for name in names), encoding="utf-8")
    return path


def _run(*args: object) -> Result:
    return CliRunner().invoke(main, [str(arg) for arg in args])


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if line.strip() == text)


def test_one_spine_of_four_drains(tmp_path: Path) -> None:
    result = _run("validate", _with_drain(tmp_path, POD, ["pod1-spine01"]))
    assert result.exit_code == 0, result.output


def test_two_spines_of_four_are_refused_naming_the_second(tmp_path: Path) -> None:
    """Two of four spines leave every 1:1 leaf at 2:1 (32 x 400G down, 16 up): above 1.5:1."""
    path = _with_drain(tmp_path, POD, ["pod1-spine01", "pod1-spine02"])
    result = _run("validate", path)
    assert result.exit_code == 2, result.output
    line = _line_of(path, "- pod1-spine02")
    assert re.search(
        rf"{re.escape(str(path))}:{line}:\d+: drain\[1\]: draining pod1-spine01, pod1-spine02 leaves pod1-leaf01", result.stderr
    )
    assert "at 2:1 (12800G down, 6400G up)" in result.stderr
    assert "pod1-spine02 would break it" in result.stderr
    assert "Traceback" not in result.output


def test_a_higher_drain_ratio_allows_two_spines(tmp_path: Path) -> None:
    result = _run("validate", _with_drain(tmp_path, POD, ["pod1-spine01", "pod1-spine02"], during_change="2:1"))
    assert result.exit_code == 0, result.output


def test_the_command_line_drain_is_checked_too(tmp_path: Path) -> None:
    result = _run("validate", _with_drain(tmp_path, POD, ["pod1-spine01"]), "--drain", "pod1-spine03")
    assert result.exit_code == 2, result.output
    assert "--drain: draining pod1-spine01, pod1-spine03 leaves" in result.stderr
    assert "pod1-spine03 would break it" in result.stderr


def test_unknown_names_are_refused_with_a_suggestion(tmp_path: Path) -> None:
    path = _with_drain(tmp_path, POD, ["pod1-spine1"])
    result = _run("validate", path)
    assert result.exit_code == 2, result.output
    assert f"{path}:{_line_of(path, '- pod1-spine1')}:" in result.stderr
    assert "pod1-spine1 is no switch or server of fabric pod1 (hint: did you mean pod1-spine01?)" in result.stderr


def test_a_leaf_whose_servers_are_not_drained_is_refused(tmp_path: Path) -> None:
    result = _run("validate", _with_drain(tmp_path, POD, ["pod1-leaf02"]))
    assert result.exit_code == 2, result.output
    servers = ", ".join(f"pod1-leaf02-srv0{i}" for i in range(1, 5))
    assert f"draining pod1-leaf02 isolates 4 server(s) whose every NIC it or another drained leaf carries: {servers}" in result.stderr


def test_a_leaf_drains_once_its_servers_are_drained(tmp_path: Path) -> None:
    names = ["pod1-leaf02", *(f"pod1-leaf02-srv0{i}" for i in range(1, 5))]
    result = _run("validate", _with_drain(tmp_path, POD, names))
    assert result.exit_code == 0, result.output


def test_a_rail_leaf_cuts_one_nic_of_its_units_servers(tmp_path: Path) -> None:
    """A rail leaf carries NIC i of every server of its unit: the servers stay reachable, with
    one NIC fewer; the tool names them (a warning), the job scheduler decides."""
    plan = load_and_plan(RAIL).plan
    leaf = next(d.name for d in plan.devices if d.role == "leaf")
    expected = sorted(s.name for s in plan.servers if any(n.leaf == leaf for n in s.nics))
    result = _run("validate", _with_drain(tmp_path, RAIL, [leaf]))
    assert result.exit_code == 0, result.output
    assert f"warning: drain[0]: draining {leaf} cuts the NICs it carries on {len(expected)} server(s): {expected[0]}" in result.stderr


def test_render_prints_the_drain_on_the_drained_switch_only(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _run("render", POD, "-o", out, "--drain", "pod1-spine02", "-q")
    assert result.exit_code == 0, result.output
    drained = (out / "configs" / "pod1-spine02.cfg").read_text()
    assert "\nmaintenance\n   unit System\n      quiesce\n" in drained
    for name in ("pod1-spine01", "pod1-leaf01"):
        config = (out / "configs" / f"{name}.cfg").read_text()
        assert "maintenance" not in config
        assert "ip community-list GSHUT permit 65535:0\n" in config
        assert "route-map RM-GSHUT-IN permit 10\n   match community GSHUT\n   set local-preference 0\n" in config
        assert re.search(r"neighbor (SPINES|LEAVES) route-map RM-GSHUT-IN in\n", config)


def test_nxos_drains_under_router_bgp(tmp_path: Path) -> None:
    inventory = EXAMPLES / "pod-mixed" / "fabric.yml"
    plan = load_and_plan(inventory).plan
    leaf = next(d for d in plan.devices if d.platform == "nxos")
    spine = next(d for d in plan.devices if d.role == "spine")
    out = tmp_path / "out"
    result = _run("render", inventory, "-o", out, "--drain", spine.name, "-q")
    assert result.exit_code == 0, result.output
    config = (out / "configs" / f"{leaf.name}.cfg").read_text()
    assert "graceful-shutdown activate" not in config
    assert "ip community-list standard GSHUT permit 65535:0\n" in config
    assert re.search(r"template peer SPINES\n(    .*\n)*?      route-map RM-GSHUT-IN in\n", config)
    drained_leaf = load_and_plan(inventory, drain=(leaf.name, *(s.name for s in plan.servers if s.leaf == leaf.name))).plan
    assert next(d for d in drained_leaf.devices if d.name == leaf.name).drained


def test_frr_drains_with_bgp_graceful_shutdown() -> None:
    plan = load_and_plan(POD, drain=("pod1-spine01",)).plan
    topology = lab_topology(plan)
    by_name = {s.name: s for s in topology.switches}
    drained, other = frr_config(topology, by_name["pod1-spine01"]), frr_config(topology, by_name["pod1-leaf01"])
    assert "\n bgp graceful-shutdown\n" in drained
    assert "graceful-shutdown\n" not in other.replace("community-list", "")
    assert "bgp community-list standard GSHUT permit 65535:0\n" in other
    assert "  neighbor SPINES route-map RM-GSHUT-IN in\n" in other


def test_loss_is_counted_per_phase_from_sequence_numbers() -> None:
    """Flow a->b sent 6 packets at t=0..5, numbers 2 and 4 never arrived; phases start at 0, 2 and 4."""
    sender = {"sent": {"10.0.0.1:40001>10.0.0.2": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]}, "received": {}}
    receiver = {"sent": {"10.0.0.2:40001>10.0.0.1": [0.5]}, "received": {"10.0.0.1:40001": [0, 1, 3, 5]}}
    measured = loss([sender, receiver], [("a", 0), ("b", 2), ("c", 4)])
    assert measured.sent == (3, 2, 2) and measured.lost == (1, 1, 1)  # b->a's one packet never arrived
    assert measured.flows == 2 and measured.worst_flow == 2


def test_the_old_drain_ratio_key_is_refused_with_the_new_one_in_the_hint(tmp_path: Path) -> None:
    """One ratio for drains and deploy batches: `drain_max_ratio` (before) names its successor."""
    path = _with_drain(tmp_path, POD, ["pod1-spine01"], drain_max_ratio=1.5)
    result = _run("validate", path)
    assert result.exit_code == 2, result.output
    line = _line_of(path, "drain_max_ratio: 1.5")
    assert f"{path}:{line}:3: oversubscription.drain_max_ratio: oversubscription.drain_max_ratio is now oversubscription.during_change" in (
        result.stderr
    )
    assert "(hint: write during_change: <the ratio> (1.5 by default) and remove drain_max_ratio)" in result.stderr
    assert "unknown key" not in result.stderr


def test_during_change_true_is_refused_with_the_ratio_it_meant(tmp_path: Path) -> None:
    """`true` meant "hold max_ratio" when the key was a switch: the hint writes that ratio."""
    result = _run("validate", _with_drain(tmp_path, POD, ["pod1-spine01"], during_change=True))
    assert result.exit_code == 2, result.output
    assert "oversubscription.during_change: during_change is the ratio a change window holds now" in result.stderr
    assert "write during_change: 1:1 (your max_ratio, what true meant)" in result.stderr


def test_during_change_false_checks_no_capacity_and_an_unquoted_ratio_reads_as_a_ratio(tmp_path: Path) -> None:
    assert _run("validate", _with_drain(tmp_path, POD, ["pod1-spine01", "pod1-spine02"], during_change=False)).exit_code == 0
    text = POD.read_text() + "drain:\n  - pod1-spine01\n  - pod1-spine02\n"
    (tmp_path / "raw").mkdir()
    raw = tmp_path / "raw" / "fabric.yml"
    raw.write_text(text.replace("  max_ratio: 1.0\n", "  max_ratio: 1.0\n  during_change: 4:3\n"))  # YAML 1.1 reads 243
    result = _run("validate", raw)
    assert result.exit_code == 2 and "above oversubscription.during_change 1.33:1" in result.stderr, result.output
