"""Cabling, BOM, hosts and README artifacts: real properties of the rendered files."""

from __future__ import annotations

import csv
import io
import subprocess
from collections import Counter
from functools import cache
from pathlib import Path

import pytest

from fabricgen.artifacts import bom, cabling, fabric_readme, hosts
from fabricgen.artifacts.cabling import NETBOX_COLUMNS
from fabricgen.artifacts.common import csv_text
from fabricgen.artifacts.readme import DETAIL_LIMIT, mermaid
from fabricgen.core.diagnostics import FabricError
from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES, example_plan

EXAMPLE_NAMES = sorted(p.name for p in EXAMPLES.iterdir() if (p / "fabric.yml").is_file())


def _plan(name: str) -> Plan:
    return example_plan(name)


@cache
def _cabling(name: str) -> dict[str, str]:
    """The cabling files of example NAME, rendered once (several tests read cluster-3tier's)."""
    return cabling(_plan(name), RenderContext())


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_one_cable_row_per_link(name: str) -> None:
    plan = _plan(name)
    files = _cabling(name)
    rows = _rows(files["cabling.csv"])
    # ib-ndr's 112 HCA links ride 56 1:2 splitter DACs, which NetBox's CSV import cannot hold
    # (netbox-breakout-cables.json): only its 4 x 2 x 15 leaf-spine links are CSV rows.
    assert len(rows) == {"ib-ndr": 4 * 2 * 15}.get(name, len(plan.links))
    pages = [text for path, text in files.items() if path.startswith("cabling/")] or [files["cabling.md"]]
    assert sum(page.count("\n| ") - 2 for page in pages) == len(plan.links)  # less header and separator rows
    ends = Counter((r["side_a_device"], r["side_a_name"]) for r in rows) + Counter((r["side_b_device"], r["side_b_name"]) for r in rows)
    assert max(ends.values()) == 1, "an interface appears on two cables"
    assert len({r["label"] for r in rows}) == len(rows)


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_cabling_csv_has_exactly_netbox_import_columns(name: str) -> None:
    text = _cabling(name)["cabling.csv"]
    header = text.split("\n", 1)[0].split(",")
    assert tuple(header) == NETBOX_COLUMNS
    for row in _rows(text):
        assert row["side_a_type"] == row["side_b_type"] == "dcim.interface"
        assert row["length_unit"] == "m"
        assert float(row["length"]) > 0
        assert row["type"] in {"dac-passive", "dac-active", "aoc", "mmf-om4", "smf-os2"}


def _bom(plan: Plan) -> dict[tuple[str, str, str], int]:
    return {(r["category"], r["part"], r["length_m"]): int(r["count"]) for r in _rows(bom(plan, RenderContext())["bom.csv"])}


def test_bom_pod1_aoc_between_50g_lane_cages_and_optics_to_100g_lane_nics() -> None:
    """pod1: 7060DX5 to 7060DX5 at 30 m, both 8 x 50G: an AOC (50G-lane AOCs reach 30 m).
    Leaf (8 x 50G) to ConnectX-7 (4 x 100G) at 3 m: no passive cable joins 50G to 100G lanes,
    so DR4 optics at both ends and one MPO-12/APC cord per link."""
    plan = _plan("pod-roce-400g")
    rows = _bom(plan)
    fabric_links, server_links = 8 * 4 * 8, 8 * 4 * 8  # leaves x spines x per_spine; leaves x servers x NICs
    assert rows[("cable", "QSFP-DD-400G-AOC", "30")] == fabric_links
    assert rows[("transceiver", "QSFP-DD-400G-DR4", "")] == server_links
    assert rows[("transceiver", "OSFP-400G-DR4", "")] == server_links
    assert rows[("fibre", "SMF-OS2-MPO-12-APC", "3")] == server_links
    assert not any(part.endswith("DAC") for _, part, _ in rows)


def test_bom_one_module_per_shared_cage() -> None:
    """pod2: 800G OSFP spine cages run as 2 x 400G: two uplinks share one 2xDR4 module (a 9364D-GX2A
    QSFP-DD port runs 8 x 50G, the half cage 4 x 100G: DR4 is the optical interface both have)."""
    rows = _bom(_plan("pod-mixed"))
    fabric_links, server_links = 8 * 4 * 8, 8 * 4 * 8
    assert rows[("transceiver", "OSFP-800G-2xDR4", "")] == fabric_links // 2
    assert rows[("transceiver", "QSFP-DD-400G-DR4", "")] == fabric_links + server_links
    assert rows[("fibre", "SMF-OS2-MPO-12-APC", "30")] == fabric_links


def test_bom_cluster_3tier_twin_port_modules_take_two_cords() -> None:
    """2,048 800G spine-super-spine links (8 pods x 8 spines x 8 super-spines x 4) at 150 m: 2xDR4
    at both ends, two MPO-12/APC cords each: 4,096 cords. 4,096 leaf-spine links on half cages."""
    rows = _bom(_plan("cluster-3tier"))
    ss_links, leaf_links = 8 * 8 * 8 * 4, 8 * 16 * 8 * 4
    assert rows[("fibre", "SMF-OS2-MPO-12-APC", "150")] == 2 * ss_links == 4096
    assert rows[("fibre", "SMF-OS2-MPO-12-APC", "30")] == leaf_links
    assert rows[("transceiver", "OSFP-800G-2xDR4", "")] == 2 * ss_links + leaf_links // 2


def test_bom_ndr_twin_port_cages_and_hca_splitters() -> None:
    """ib-ndr: QM9700 = 32 twin-port OSFP cages. 120 leaf-spine links at 60 m (past 2xSR4's 50 m):
    one 2xDR4 per cage at each end (60 + 60), one cord per 400G port; 112 HCAs at 2 m on 56 1:2
    splitter DACs, and the 2 dedicated SM hosts each on a cage of its own: one splitter DAC each."""
    rows = _bom(_plan("ib-ndr"))
    links = 4 * 2 * 15
    assert rows[("transceiver", "OSFP-800G-2xDR4", "")] == links // 2 + links // 2
    assert rows[("fibre", "SMF-OS2-MPO-12-APC", "60")] == links
    assert rows[("cable", "OSFP-800G-to-2xOSFP-400G-DAC", "2")] == 4 * 28 // 2 + 2
    assert not any("SR8" in part for _, part, _ in rows)


@pytest.mark.parametrize(("length", "part"), [("5m", ("cable", "QSFP56-200G-AOC", "5")), ("150m", ("transceiver", "QSFP56-200G-FR4", ""))])
def test_bom_hdr_aoc_and_200g_fr4(tmp_path: Path, length: str, part: tuple[str, str, str]) -> None:
    """HDR leaf-spine at 5 m: an AOC (not active copper); at 150 m: 200G FR4 (multimode stops at 100 m)."""
    text = (EXAMPLES / "ib-hdr" / "fabric.yml").read_text(
        encoding="utf-8"
    ) + f"\ncabling:\n  length: {{leaf-spine: {length}, server-leaf: 3m}}\n"
    (tmp_path / "fabric.yml").write_text(text, encoding="utf-8")
    rows = _bom(load_and_plan(tmp_path).plan)
    assert rows[part] == (8 * 20 if part[0] == "cable" else 2 * 8 * 20)


def _with_overrides(tmp_path: Path, overrides: str) -> Path:
    text = (EXAMPLES / "pod-roce-400g" / "fabric.yml").read_text(encoding="utf-8")
    text = text.replace(
        "cabling:\n  length: {leaf-spine: 30m, server-leaf: 3m}\n", "cabling:\n  length: {leaf-spine: 30m, server-leaf: 3m}\n" + overrides
    )
    path = tmp_path / "fabric.yml"
    path.write_text(text, encoding="utf-8")
    return path


def test_length_override_changes_one_cable_medium(tmp_path: Path) -> None:
    plan = load_and_plan(
        _with_overrides(
            tmp_path,
            "  overrides:\n    - {device: pod1-leaf01, interface: Ethernet61/1, length: 450m}\n"
            "    - {device: pod1-leaf02-srv01, interface: nic1, length: 5m}\n",
        )
    ).plan
    rows = _rows(cabling(plan, RenderContext())["cabling.csv"])
    by_a = {(r["side_a_device"], r["side_a_name"]): r for r in rows}
    assert by_a[("pod1-leaf01", "Ethernet61/1")]["length"] == "450"
    assert by_a[("pod1-leaf01", "Ethernet61/1")]["type"] == "smf-os2"
    assert "DR4" in by_a[("pod1-leaf01", "Ethernet61/1")]["description"]
    # 5 m between 8 x 50G and a 4 x 100G ConnectX-7: optics (DR4), as at 3 m
    assert by_a[("pod1-leaf02-srv01", "nic1")]["type"] == "smf-os2"
    assert by_a[("pod1-leaf02-srv01", "nic1")]["length"] == "5"
    assert sum(1 for r in rows if r["length"] not in ("30", "3")) == 2


def test_unknown_override_is_an_error_at_its_line(tmp_path: Path) -> None:
    path = _with_overrides(tmp_path, "  overrides:\n    - {device: pod1-leaf99, interface: Ethernet1/1, length: 5m}\n")
    with pytest.raises(FabricError) as info:
        load_and_plan(path)
    (problem,) = info.value.diagnostics
    assert problem.path == "cabling.overrides[0]"
    assert problem.line > 0
    assert "pod1-leaf99" in problem.message


def test_no_medium_for_an_overlong_cable_exits_2(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fabricgen.cli import main

    path = _with_overrides(tmp_path, "  overrides:\n    - {device: pod1-leaf01, interface: Ethernet61/1, length: 20000m}\n")
    result = CliRunner().invoke(main, ["render", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "no cable medium in the catalog reaches 20000 m at 400G between QSFP-DD (50G lanes)" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["pod-roce-400g", "pod-mixed"])
def test_host_settings_match_the_switch_policy(name: str) -> None:
    plan = _plan(name)
    roce = plan.roce
    assert roce is not None
    files = hosts(plan, RenderContext())
    rows = _rows(files["hosts.csv"])
    assert len(rows) == sum(len(s.nics) for s in plan.servers)
    interfaces = {(d.name, i.name): i for d in plan.devices for i in d.interfaces}
    for row in rows:
        leaf_port = interfaces[(row["leaf"], row["leaf_interface"])]
        assert row["gateway"] == leaf_port.address  # the leaf's side of the /31
        assert int(row["mtu"]) == leaf_port.mtu
        assert int(row["tos"]) == (int(row["dscp_data"]) << 2) | 2
        assert row["pfc_flags"].split(",")[roce.no_drop_priority] == "1"
        assert row["pfc_flags"].count("1") == 1
        assert int(row["dscp_cnp"]) == roce.dscp_cnp
        assert row["ecn"] == ("on" if roce.ecn_enabled else "off")
    assert sorted(p for p in files if p.startswith("hosts/")) == ["hosts/apply.sh"]  # one script, no page per server


def test_dscp_26_gives_tos_106() -> None:
    plan = _plan("pod-roce-400g")
    assert plan.roce is not None and plan.roce.dscp_data == 26
    assert {r["tos"] for r in _rows(hosts(plan, RenderContext())["hosts.csv"])} == {"106"}


def test_infiniband_has_no_host_roce_or_lab() -> None:
    plan = _plan("ib-hdr")
    assert hosts(plan, RenderContext()) == {}
    readme = fabric_readme(plan, RenderContext())["README.md"]
    assert "0x0a01" in readme and "## InfiniBand" in readme


def test_readme_aggregates_large_fabrics() -> None:
    plan = _plan("pod-roce-400g")
    detailed = mermaid(plan)
    assert "pod1-leaf03" in detailed and "every leaf-spine pair: 8x400G" in detailed
    # Past the limit of switch pairs the diagram collapses tiers into single nodes.
    aggregated = mermaid(plan, detail_limit=1)
    assert "pod1-leaf03" not in aggregated
    assert 'pod_1_spine ---|"256x400G"| pod_1_leaf' in aggregated
    assert DETAIL_LIMIT >= 32  # the examples (4 x 8 switch pairs) draw every switch


def test_hosts_without_a_server_pool_have_no_address_lines(tmp_path: Path) -> None:
    """`validate` refuses routed servers without addressing.servers; the host pages still cope
    with a plan that has no server addresses (built here without that check)."""
    from fabricgen.core.diagnostics import FabricError
    from fabricgen.inventory.loader import load_inventory
    from fabricgen.inventory.schema import apply_defaults
    from fabricgen.pipeline import build_plan  # wherever the planner lives
    from fabricgen.plan.inputs import inputs_of
    from tests.fabrics import fabric, write

    doc = fabric()
    del doc["addressing"]["servers"]
    path = write(tmp_path, doc)
    with pytest.raises(FabricError) as refused:
        load_and_plan(path)
    assert refused.value.diagnostics[0].path == "addressing"
    assert "addressing.servers is missing" in refused.value.diagnostics[0].message
    document = load_inventory(path)
    plan = build_plan(inputs_of(apply_defaults(document.data), document.source))
    files = hosts(plan, RenderContext())
    (tmp_path / "hosts").mkdir()
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    run = subprocess.run(
        ["sh", str(tmp_path / "hosts" / "apply.sh"), plan.servers[0].name],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DRY_RUN": "1"},
        check=True,
    )
    assert "ip address" not in run.stdout and "ip route" not in run.stdout
    assert "mlnx_qos -i ${NIC1_NETDEV} --trust dscp" in run.stdout


def test_every_link_of_the_plan_carries_its_media() -> None:
    """The planner chooses the media (a physical fact), so the cabling plan and the BOM read one
    decision per cable and `validate` can refuse what no medium reaches."""
    plan = _plan("cluster-3tier")
    assert plan.links and all(link.media is not None for link in plan.links)
    rows = _rows(_cabling("cluster-3tier")["cabling.csv"])
    by_a = {(r["side_a_device"], r["side_a_name"]): r for r in rows}
    for cable in plan.cables:
        link = cable.link
        assert link.media is not None and cable.choice is link.media
        if not cable.breakout:  # breakout cables are in netbox-breakout-cables.json
            assert by_a[(link.a.device, link.a.interface)]["type"] == link.media.netbox_type


def _variant(tmp_path: Path, example: str, edits: dict[str, str], extra: str) -> Plan:
    text = (EXAMPLES / example / "fabric.yml").read_text(encoding="utf-8")
    for old, new in edits.items():
        assert old in text
        text = text.replace(old, new)
    (tmp_path / "fabric.yml").write_text(text + extra, encoding="utf-8")
    return load_and_plan(tmp_path).plan


def test_hdr100_split_ports_take_one_splitter_dac_per_cage(tmp_path: Path) -> None:
    """QM8790 HDR100: a 200G QSFP56 cage split 2 x 100G (2 x 50G lanes each). 30 HCAs per leaf at
    3 m: 15 splitter DACs per leaf, 120 over 8 leaves, and one per dedicated SM host (2, each on a
    cage of its own); ports named `<cage>/1`, `<cage>/2`."""
    plan = _variant(
        tmp_path,
        "ib-hdr",
        {
            "  ports_per_server: 1\n": "  ports_per_server: 1\n  speed: 100G\n",
            "per_leaf: 18 ": "per_leaf: 30 ",
            "per_spine: 5 ": "per_spine: 4 ",
            # a 200G partition rate on 100G members is refused (OpenSM would refuse their joins)
            "    rate: 200\n": "    rate: 100\n",
        },
        "oversubscription:\n  max_ratio: 4.0\n",
    )
    rows = _bom(plan)
    assert rows[("cable", "QSFP56-200G-to-2xQSFP56-100G-DAC", "3")] == 8 * 30 // 2 + 2
    assert {link.z.interface for link in plan.links if link.a.device == "ib1-gpu0102"} == {"1/2"}


def test_ndr200_links_share_one_splitter_cord_per_optical_port(tmp_path: Path) -> None:
    """QM9700 NDR200: a twin-port cage split 4 x 200G. 20 HCAs per leaf at 20 m (within 2xSR4's
    50 m): 5 2xSR4 modules per leaf, two 1:2 splitter cords each (NVIDIA MFP7E20), a 400G SR4
    module running 2 channels in each HCA; each of the 2 dedicated SM hosts on a cage of its own
    takes one more 2xSR4, one splitter cord and its own SR4."""
    plan = _variant(
        tmp_path,
        "ib-ndr",
        {
            "  ports_per_server: 1\n": "  ports_per_server: 1\n  speed: 200G\n",
            "per_leaf: 28 ": "per_leaf: 20 ",
            "per_spine: 15 ": "per_spine: 6 ",
            "server-leaf: 2m": "server-leaf: 20m",
        },
        "oversubscription:\n  max_ratio: 4.0\n",
    )
    rows = _bom(plan)
    hcas, sm_hosts = 4 * 20, 2
    assert rows[("transceiver", "OSFP-800G-2xSR4", "")] == hcas // 4 + sm_hosts
    assert rows[("fibre", "MMF-OM4-MPO-12-APC-1x2-SPLITTER", "20")] == hcas // 2 + sm_hosts
    assert rows[("transceiver", "OSFP-400G-SR4", "")] == hcas + sm_hosts


def test_validate_reports_an_overlong_cable_once_with_its_line(tmp_path: Path) -> None:
    """20 km at every leaf-spine cable: one error at `cabling.length.leaf-spine`, not one per cable."""
    from click.testing import CliRunner

    from fabricgen.cli import main

    path = _with_overrides(tmp_path, "")
    text = path.read_text(encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if "leaf-spine: 30m" in row)
    path.write_text(text.replace("leaf-spine: 30m", "leaf-spine: 20000m"), encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code == 2
    errors = [row for row in result.output.splitlines() if "no cable medium" in row]
    assert len(errors) == 1, result.output
    assert f"{path}:{line}:" in errors[0]
    assert "cabling.length.leaf-spine" in errors[0]


def test_csv_text_equals_the_csv_module_for_rows_needing_quotes_and_not() -> None:
    """csv_text joins plain rows itself; every other row must still come out as the csv module writes it."""
    header = ("a", "b", "c")
    rows = [
        ("plain", "Ethernet1/1", "800G 2xDR4: OSFP + 2 x SMF"),
        ("comma, inside", "x", "y"),
        ('a "quote"', "x", "y"),
        ("line\nbreak", "x", "y"),
        ("carriage\rreturn", "x", "y"),
        ("", "", ""),
        ("count", 3, 2.5),
        ("none", None, "z"),
        ("plain", "again", "last"),
    ]
    expected = io.StringIO()
    writer = csv.writer(expected, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    assert csv_text(header, rows) == expected.getvalue()
    single = [("",), ("x",)]
    expected = io.StringIO()
    csv.writer(expected, lineterminator="\n").writerows([("h",), *single])
    assert csv_text(("h",), single) == expected.getvalue()
