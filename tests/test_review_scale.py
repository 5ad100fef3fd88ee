"""A pull request at cluster scale: generated bulk marked for review tools, cabling per pod and
plane, host settings as one CSV and one script, a README diagram grouped by pod/plane/rail,
and the change summary of `fabricgen diff --format markdown` (host side and policy included).

Expected values come from the inventories (counts per pod, DSCP -> ToS), not from the code."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
from functools import cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.artifacts import cabling, gitattributes, hosts
from fabricgen.artifacts.readme import mermaid
from fabricgen.cli import main
from fabricgen.core.model import Plan
from fabricgen.diffing.inventory import diff_plans, report
from fabricgen.diffing.markdown import BUDGET, markdown_report
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES, example_plan

CLUSTER = (EXAMPLES / "cluster-3tier" / "fabric.yml").read_text(encoding="utf-8")
POD1 = (EXAMPLES / "pod-roce-400g" / "fabric.yml").read_text(encoding="utf-8")
GIT_ENV = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def _inventory(folder: Path, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "fabric.yml").write_text(text, encoding="utf-8")
    return folder


def _pods(count: int) -> str:
    text = CLUSTER.replace("pods:\n  count: 8\n", f"pods:\n  count: {count}\n")
    assert f"count: {count}\n" in text
    return text


@cache
def _cluster_plan(pods: int, folder: str) -> Plan:
    return load_and_plan(_inventory(Path(folder), _pods(pods))).plan


@pytest.fixture(scope="module")
def three_pods(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    return _cluster_plan(3, str(tmp_path_factory.mktemp("three")))


def _table_rows(markdown: str) -> list[list[str]]:
    return [
        [c.strip() for c in line.strip("|").split("|")] for line in markdown.splitlines() if line.startswith("| ") and "---" not in line
    ][1:]


def test_cabling_has_a_page_per_pod_and_plane(three_pods: Plan) -> None:
    files = cabling(three_pods, RenderContext())
    pages = sorted(p for p in files if p.startswith("cabling/"))
    # cluster-3tier with pods.count 3: 3 pods, 8 super-spine planes.
    assert pages == sorted([f"cabling/pod{p}.md" for p in (1, 2, 3)] + [f"cabling/plane{j}.md" for j in range(1, 9)])
    csv_rows = list(csv.DictReader(io.StringIO(files["cabling.csv"])))
    for pod in (1, 2, 3):
        rows = _table_rows(files[f"cabling/pod{pod}.md"])
        # 16 leaves x (32 server ports + 8 spines x 4 uplinks)
        assert len(rows) == 16 * (32 + 8 * 4)
        assert all(f"cl1-p{pod}-leaf" in row[0] or f"cl1-p{pod}-leaf" in row[2] for row in rows)
    for plane in range(1, 9):
        rows = _table_rows(files[f"cabling/plane{plane}.md"])
        # each pod's spine of this plane x 8 super-spines x 4 parallel links
        assert len(rows) == 3 * 8 * 4
        assert all(row[2].startswith(f"cl1-ss{plane}-") for row in rows)
    assert sum(len(_table_rows(files[p])) for p in pages) == len(csv_rows)
    index = files["cabling.md"]
    assert "[pod 2](cabling/pod2.md)" in index and "[super-spine plane 8](cabling/plane8.md)" in index


def test_a_single_pod_keeps_one_cabling_page() -> None:
    plan = example_plan("pod-roce-400g")
    files = cabling(plan, RenderContext())
    assert sorted(files) == ["cabling.csv", "cabling.md"]
    assert len(_table_rows(files["cabling.md"])) == len(plan.links)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=GIT_ENV).stdout


def test_gitattributes_mark_generated_bulk_by_pattern(tmp_path: Path) -> None:
    """Checked with git itself: whatever shape the plan's JSON takes (plan/ fragments today, one plan.json
    before), it stays collapsed and diff-less."""
    plan = example_plan("pod-roce-400g")
    out = tmp_path / "build" / "pod1"
    out.mkdir(parents=True)
    (out / ".gitattributes").write_text(gitattributes(plan, RenderContext())[".gitattributes"], encoding="utf-8")
    _git(tmp_path, "init", "-q")
    bulk = (
        "plan.json",
        "plan/fabric.json",
        "plan/devices/pod1-leaf01.json",
        "plan/pod1-leaf01.json",
        "plan-devices.json",
        "cabling.csv",
        "lab/pod1.clab.yml",
    )
    collapsed = ("configs/pod1-leaf01.cfg", "ansible/host_vars/pod1-leaf01.yml", "hosts.csv", ".fabricgen-manifest")
    read = ("README.md", "cabling.md", "cabling/pod1.md", "bom.csv")
    text = _git(tmp_path, "check-attr", "linguist-generated", "diff", "--", *[f"build/pod1/{f}" for f in (*bulk, *collapsed, *read)])
    attrs: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        path, name, value = (part.strip() for part in line.rsplit(":", 2))
        attrs.setdefault(path.removeprefix("build/pod1/"), {})[name] = value
    for name in bulk:
        assert attrs[name] == {"linguist-generated": "true", "diff": "unset"}, name
    for name in collapsed:
        assert attrs[name]["linguist-generated"] == "true" and attrs[name]["diff"] != "unset", name
    for name in read:
        assert attrs[name]["linguist-generated"] in ("unspecified", "false") and attrs[name]["diff"] != "unset", name


def _apply(script: Path, server: str, csv_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["sh", str(script), server, str(csv_path)], capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **env})


def test_one_script_applies_any_servers_row(tmp_path: Path) -> None:
    plan = example_plan("pod-roce-400g")
    files = hosts(plan, RenderContext())
    assert sorted(files) == ["hosts.csv", "hosts/apply.sh"]  # no page per server
    (tmp_path / "hosts").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    script, table = tmp_path / "hosts" / "apply.sh", tmp_path / "hosts.csv"
    server = "pod1-leaf03-srv02"  # leaf 3, server 2: NICs on Ethernet9/1..Ethernet16/1 (8 ports per server)
    dry = _apply(script, server, table, DRY_RUN="1")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    # pod-roce-400g: DSCP 26 -> ToS 106, CNP DSCP 48, no-drop priority 3, ECN on, EOS MTU 9214
    assert sum(1 for line in lines if line.startswith("# nic")) == 8
    assert "# nic1 -> pod1-leaf03 Ethernet9/1 (400G)" in lines
    assert "ip link set dev ${NIC1_NETDEV} mtu 9214" in lines
    assert "mlnx_qos -i ${NIC8_NETDEV} --pfc 0,0,0,1,0,0,0,0" in lines
    assert "cma_roce_tos -d ${NIC1_RDMA} -t 106" in lines
    assert "echo 48 > /sys/class/net/${NIC1_NETDEV}/ecn/roce_np/cnp_dscp" in lines
    assert "echo 1 > /sys/class/net/${NIC1_NETDEV}/ecn/roce_rp/enable/3" in lines
    assert any(line.startswith("ip route replace 10.2.0.0/16 via ") and line.endswith("table 101") for line in lines)
    # Without the device names it refuses before running anything.
    real = _apply(script, server, table)
    assert real.returncode != 0 and "netdev of nic1" in real.stderr
    unknown = _apply(script, "no-such-server", table, DRY_RUN="1")
    assert unknown.returncode == 3 and "no row for server no-such-server" in unknown.stderr


def test_readme_diagram_groups_pods_and_planes(three_pods: Plan, tmp_path: Path) -> None:
    text = mermaid(three_pods)
    assert 'subgraph pod_1["pods 1-3 (each)"]' in text
    assert 'plane_1["planes 1-8: 8 super-spines each"]' in text
    # per pod: 16 leaves x 8 spines x 4 = 512 uplinks, 64 servers x 8 NICs = 512, 8 spines x 8 x 4 = 256 up
    assert 'pod_1_spine ---|"512x400G"| pod_1_leaf' in text
    assert 'pod_1_leaf ---|"512x400G"| pod_1_servers' in text
    assert 'planes ---|"256x800G"| pod_1_spine' in text
    assert text.count("legend[") == 1
    # Growing by a pod changes one label of the diagram.
    four = mermaid(_cluster_plan(4, str(tmp_path)))
    changed = set(four.splitlines()) ^ set(text.splitlines())
    assert changed == {'  subgraph pod_1["pods 1-3 (each)"]', '  subgraph pod_1["pods 1-4 (each)"]'}


def test_readme_diagram_shows_rails_and_units() -> None:
    text = mermaid(example_plan("pod-rail"))
    # pod-rail: two scalable units of 8 rail leaves and 32 servers each
    assert '["unit 1: 8 leaves, rails 1-8"]' in text and '["unit 2: 8 leaves, rails 1-8"]' in text
    assert '(["unit 2: 32 servers"])' in text


def test_readme_diagram_of_a_small_pod_says_a_uniform_bundle_once() -> None:
    text = mermaid(example_plan("pod-roce-400g"))
    # pod-roce-400g: 4 spines x 8 leaves, 8 x 400G per pair, 4 servers x 8 NICs per leaf
    assert "every leaf-spine pair: 8x400G" in text and "every leaf to its 4 servers: 32x400G" in text
    assert text.count("---|") == 0 and text.count(" --- ") == 4 * 8 + 8


def test_diff_shows_policy_and_host_side(tmp_path: Path) -> None:
    old = example_plan("pod-roce-400g")
    text = POD1.replace("dscp: {data: 26, cnp: 48}", "dscp: {data: 24, cnp: 48}")
    assert text != POD1
    new = load_and_plan(_inventory(tmp_path / "new", text)).plan
    result = diff_plans(old, new)
    nics = 8 * 4 * 8  # 8 leaves x 4 servers x 8 NICs
    assert result.policy_changed == ["roce.dscp.data: 26 -> 24"]
    assert (
        f"tos: 106 -> 98 on {nics} NICs (pod1-leaf01-srv01 nic1, pod1-leaf01-srv01 nic2, pod1-leaf01-srv01 nic3 and {nics - 3} more)"
        in (result.hosts_changed)
    )
    assert any(line.startswith(f"dscp_data: 26 -> 24 on {nics} NICs") for line in result.hosts_changed)
    assert "host settings changed (hosts.csv)" in report(result)
    summary = markdown_report(result, "pod1")
    assert "- `roce.dscp.data: 26 -> 24`" in summary
    # one folded diff for the same edit on all 12 switches
    assert summary.count("<details>") == 1 and "and 11 more with the same change" in summary
    # every DSCP is mapped on purpose, so the best-effort line moves too (26 joins it, 24 leaves it)
    assert "\n-qos map dscp 26 to traffic-class 3\n" in summary
    assert "\n+qos map dscp 24 to traffic-class 3\n" in summary


def test_diff_shows_host_routes_when_the_server_pool_widens(tmp_path: Path) -> None:
    old = example_plan("pod-roce-400g")
    text = POD1.replace("servers: 10.2.0.0/16", "servers: 10.2.0.0/15")
    assert text != POD1
    result = diff_plans(old, load_and_plan(_inventory(tmp_path / "new", text)).plan)
    assert "addressing.servers: 10.2.0.0/16 -> 10.2.0.0/15" in result.policy_changed
    assert any(line.startswith("route_prefix: 10.2.0.0/16 -> 10.2.0.0/15 on 256 NICs") for line in result.hosts_changed)


def test_markdown_summary_of_a_new_pod_fits_a_comment(tmp_path: Path) -> None:
    result = diff_plans(_cluster_plan(3, str(tmp_path / "a")), _cluster_plan(4, str(tmp_path / "b")))
    summary = markdown_report(result, "cl1")
    assert len(summary) < 65_536 and len(summary) < BUDGET + 20_000
    assert "| devices | 24 | 0 |" in summary  # one pod: 16 leaves + 8 spines
    assert "| host NICs (hosts.csv) | 512 | 0 | 0 |" in summary  # 64 servers x 8 NICs
    assert "more config diffs not shown (comment size limit)" in summary


def test_cli_markdown_against_a_git_revision(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    inventory = _inventory(root / "inventories" / "pod1", POD1)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "one")
    (inventory / "fabric.yml").write_text(POD1.replace("dscp: {data: 26, cnp: 48}", "dscp: {data: 24, cnp: 48}"), encoding="utf-8")
    result = CliRunner().invoke(main, ["diff", "--rev", "main", "--format", "markdown", str(inventory)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("### fabricgen diff: pod1 (main -> working tree)")
    assert "roce.dscp.data: 26 -> 24" in result.output


def test_diff_rev_outside_git_says_what_to_do(tmp_path: Path) -> None:
    if shutil.which("git") is None:  # pragma: no cover
        pytest.skip("git missing")
    inventory = _inventory(tmp_path / "plain", POD1)
    result = CliRunner().invoke(main, ["diff", "--rev", "main", str(inventory)])
    assert result.exit_code == 2
    assert "is not in a git repository" in result.output
    assert "fabricgen diff OLD/fabric.yml NEW/fabric.yml" in result.output
    assert "fatal:" not in result.output


def test_diff_rev_of_an_uncommitted_inventory_says_what_to_do(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _inventory(root / "old", POD1)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "one")
    new = _inventory(root / "new", POD1)
    result = CliRunner().invoke(main, ["diff", "--rev", "main", str(new)])
    assert result.exit_code == 2
    assert "new/fabric.yml does not exist at revision 'main'" in result.output
    assert "commit it first" in result.output and "fatal:" not in result.output
