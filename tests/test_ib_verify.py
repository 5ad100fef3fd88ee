"""`fabricgen ib verify` against the real OpenSM on an ibsim fabric: the example passes, a
20 x 40 x 20 fabric passes, and each fault (a missing cable, leaf GUIDs as roots, a syntax error
in partitions.conf) fails with a message that says what to fix. Every test also checks that
nothing it started is left running."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.infiniband.verify import Options, Report, verify
from tests.ib_helpers import (
    HALF_CAGE_SM,
    IB_HDR,
    LARGE,
    RAIL_SM_ON_SERVER,
    SPLIT_HALF_CAGE_SM,
    drop_cable,
    needs_sim,
    plan_and_files,
    write_inventory,
)

pytestmark = needs_sim


def _processes() -> set[int]:
    """PIDs of ibsim/opensm processes that run a fabricgen simulation."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
                cmd = (entry / "cmdline").read_bytes().split(b"\0")[0]
            except OSError:
                continue
            if cmd.endswith((b"ibsim", b"opensm")) and b"IBSIM_SOCKNAME=fabricgen-" + str(os.getpid()).encode() in environ:
                found.add(int(entry.name))
    return found


@pytest.fixture(autouse=True)
def no_leftovers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """Each test gets its own temp root, so runs in parallel (other checkouts) cannot interfere."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    yield
    assert _processes() == set(), "a simulation process outlived verify"
    assert list(root.glob("fabricgen-ib-verify-*")) == []


def _check(report: Report, name: str) -> tuple[bool, str]:
    check = next(c for c in report.checks if c.name == name)
    return check.ok, "\n".join([check.summary, *check.evidence, *check.hints])


def test_example_passes() -> None:
    plan, files = plan_and_files(IB_HDR)
    report = verify(plan, files, Options(pairs=32, sample=8))
    assert report.ok, report.format()
    text = report.format()
    assert "ftree tables configured on all switches" in text
    assert "discovered 12/12 switches, 146/146 HCAs, 306/306 cables" in text
    assert "each through exactly one spine" in text
    assert "tenant-a 0x8a01: 36 member port(s)" in text
    assert "P_Key tables of 146 HCA port(s) read back" in text
    assert "indexes as on the host pages (NCCL_IB_PKEY)" in text
    assert "ftree ranked the 4 planned spines as roots, no ftree errors" in text
    assert "all 4 spines carry leaf-to-leaf routes" in text
    assert "SL2VL [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]" in text
    assert "ib1-gpu0101: low VL arbitration 0:64, 1:128, 2:64," in text  # qos.vlarb_low of the example
    assert "ib1-gpu0101: high VL arbitration empty (every weight 0)" in text
    assert "MASTER on ib1-sm1" in text
    assert "ib1-sm2 (0x02fab00040000041): priority 14, SMState 2 (STANDBY)" in text


def test_ndr_twin_port_example_passes() -> None:
    """ib-ndr: QM9700s with 32 twin-port cages; ibsim gets 64 InfiniBand ports per switch, two per
    cage, and OpenSM discovers every planned cable: 4 x 28 HCAs + 4 x 30 uplinks + 2 SM hosts."""
    plan, files = plan_and_files(IB_HDR.parent / "ib-ndr")
    report = verify(plan, files, Options(pairs=16, sample=4))
    assert report.ok, report.format()
    assert "discovered 6/6 switches, 114/114 HCAs, 234/234 cables" in report.format()


NDR200_SPLIT = """\
fabric: {name: ibs, transport: infiniband}
spines: {count: 2, model: nvidia-qm9700, name: "ibs-spine{index}"}
leaves: {count: 2, model: nvidia-qm9700, name: "ibs-leaf{index}"}
uplinks: {per_spine: 16}
servers: {per_leaf: 64, speed: 200G, nic: nvidia-connectx-7-osfp, name: "ibs-gpu{leaf_index}{index:02d}"}
subnet_managers: [{host: ibs-gpu101, priority: 15}, {host: ibs-gpu264, priority: 14}]
opensm: {version: "3.3.24"}
"""
"""64 NDR200 hosts (16 cages split 4 x 200G) under 32 NDR uplinks per leaf: 1:1 by bandwidth."""


def test_ndr200_split_fabric_passes(tmp_path: Path) -> None:
    plan, files = plan_and_files(write_inventory(tmp_path, NDR200_SPLIT))
    report = verify(plan, files, Options(pairs=16, sample=4))
    assert report.ok, report.format()
    assert "discovered 4/4 switches, 128/128 HCAs, 192/192 cables" in report.format()


@pytest.mark.parametrize(
    ("text", "discovered", "master"),
    [
        # 2 x 31 NDR servers + 2 SM hosts on port 16/2; 2 x 32 uplinks.
        (HALF_CAGE_SM, "discovered 4/4 switches, 64/64 HCAs, 128/128 cables", "MASTER on ibq-sm1"),
        # 2 x 63 NDR200 servers + 2 SM hosts on split port 16/2/2; 2 x 32 uplinks.
        (SPLIT_HALF_CAGE_SM, "discovered 4/4 switches, 128/128 HCAs, 192/192 cables", "MASTER on ibs-sm1"),
    ],
    ids=["twin-port-half", "ndr200-split-half"],
)
def test_dedicated_sm_hosts_in_half_cages_pass(tmp_path: Path, text: str, discovered: str, master: str) -> None:
    """Before: refused, 'has no free port (32 cages, all used by servers and uplinks)'."""
    plan, files = plan_and_files(write_inventory(tmp_path, text))
    report = verify(plan, files, Options(pairs=16, sample=4))
    assert report.ok, report.format()
    assert discovered in report.format()
    assert master in report.format()


def test_root_guid_typo_and_partition_member_typo_fail() -> None:
    """One run, two typos: a root GUID (OpenSM: ERR AB24, ranks three roots, routes over three
    spines, still 'ftree tables configured') and a member GUID of tenant-a in partitions.conf
    (OpenSM skips it: the host silently loses its tenant)."""
    plan, files = plan_and_files(IB_HDR)
    spine = plan.device("ib1-spine02").guid
    typo = spine[:-1] + ("f" if spine[-1] != "f" else "e")
    member = plan.servers[0]
    assert member.name == "ib1-gpu0101"
    wrong_member = member.nics[0].port_guid[:-1] + "f"
    for sm in ("ib1-sm1", "ib1-sm2"):
        files[f"opensm/{sm}/root_guids.conf"] = files[f"opensm/{sm}/root_guids.conf"].replace(spine, typo)
        files[f"opensm/{sm}/partitions.conf"] = files[f"opensm/{sm}/partitions.conf"].replace(member.nics[0].port_guid, wrong_member)
    report = verify(plan, files, Options(pairs=8, standby=False))
    assert not report.ok
    assert _check(report, "routing engine")[0]  # what verify looked at before: it passes
    ok, text = _check(report, "fat tree")
    assert not ok
    assert f"ERR AB24: Root switch GUID 0x{int(typo, 16):x} not found" in text
    assert "rank-0 switches (roots): 3, planned spines: 4" in text
    ok, text = _check(report, "spine routes")
    assert not ok
    assert "ib1-spine02 0," in text
    assert "ib1-spine02 carries no route between leaves" in text
    ok, text = _check(report, "partitions")
    assert not ok
    assert f"tenant-a: member {wrong_member} is not an HCA port of the fabric" in text
    assert f"tenant-a: planned member ib1-gpu0101 ({member.nics[0].port_guid}) is missing from partitions.conf" in text
    assert f"ib1-gpu0101 ({member.nics[0].port_guid}): P_Keys 0x7fff, planned 0x7fff 0x8a01" in text


def test_rail_fabric_with_the_sm_on_a_server_passes(tmp_path: Path) -> None:
    """HCA ports on four rail leaves are traced; the master SM's port is a full member of every
    partition although the plan makes its server a limited member of t1: no false alarm."""
    plan, files = plan_and_files(write_inventory(tmp_path, RAIL_SM_ON_SERVER))
    report = verify(plan, files, Options(pairs=16))
    assert report.ok, report.format()
    text = report.format()
    nic_leaves = {nic.leaf for nic in plan.servers[0].nics}
    assert nic_leaves == {"ibr-leaf01", "ibr-leaf02", "ibr-leaf03", "ibr-leaf04"}
    assert "ibr-su1-gpu01/2 -> ibr-leaf02 -> " in text
    assert "spines used: 2/2" in text
    assert "16 HCA port pairs on different leaves" in text
    assert "P_Key tables of 32 HCA port(s) read back" in text
    assert "t1 0x0101: 16 member port(s)" in text
    assert "ibr-su1-gpu01 (master SM port): 0x8101 0x8102 0x8a03 0xffff" in text
    assert "indexes as on the host pages (NCCL_IB_PKEY)" in text  # every port's table in the order the pages promise
    assert "ibr-su1-gpu08 (0x" in text and "SMState 2 (STANDBY)" in text


def test_missing_cable_is_reported_by_name() -> None:
    plan, files = plan_and_files(IB_HDR)
    files["ib/ibsim.net"] = drop_cable(files["ib/ibsim.net"], "ib1-leaf03", 21, "ib1-spine01", 11)
    report = verify(plan, files, Options(pairs=8, sample=4, standby=False))
    assert not report.ok
    ok, text = _check(report, "cabling")
    assert not ok
    assert "missing cable: ib1-leaf03 port 21 <-> ib1-spine01 port 11" in text
    assert "305/306 cables" in text
    # With a root file ftree tolerates the missing cable: the fault shows only in the cabling check.
    assert _check(report, "routing engine")[0]


def test_leaf_guids_as_roots_fail_the_engine_check() -> None:
    plan, files = plan_and_files(IB_HDR)
    leaves = [d.guid for d in plan.devices if d.role == "leaf"]
    for sm in ("ib1-sm1", "ib1-sm2"):
        files[f"opensm/{sm}/root_guids.conf"] = "\n".join(leaves) + "\n"
    report = verify(plan, files, Options(pairs=8, sample=4, standby=False))
    ok, text = _check(report, "routing engine")
    assert not ok
    assert "expected 'ftree tables configured on all switches', got 'minhop tables configured'" in text
    assert "Fabric rank is 1" in text
    assert "root_guids.conf lists ib1-leaf01 (leaf)" in text
    assert "it must list the spine node GUIDs" in text


def test_partitions_syntax_error_is_caught_before_and_inside_opensm() -> None:
    plan, files = plan_and_files(IB_HDR)
    path = "opensm/ib1-sm1/partitions.conf"
    files[path] = files[path].replace("mtu=5, rate=17", "mtu=5 rate=17").replace("0x02fab00030008041,", "0x02fab00030008041 ;", 1)
    report = verify(plan, files, Options(pairs=8, sample=4, standby=False))
    ok, text = _check(report, "partitions.conf")
    assert not ok
    assert re.search(r"partitions\.conf:\d+:\d+: error: 'mtu=5 rate=17': flags must be separated by ','", text)
    ok, text = _check(report, "OpenSM log")
    assert not ok
    assert "fell back to the open Default partition" in text
    ok, text = _check(report, "partitions")
    assert not ok
    assert "ib1-gpu0101 (0x02fab00030008021): P_Keys 0xffff, planned 0x7fff 0x8a01" in text


def test_large_fabric_passes(tmp_path: Path) -> None:
    plan, files = plan_and_files(write_inventory(tmp_path, LARGE))
    assert len(plan.servers) == 800
    report = verify(plan, files, Options(pairs=40, sample=8, timeout=300))
    assert report.ok, report.format()
    assert "discovered 60/60 switches, 800/800 HCAs, 1600/1600 cables" in report.format()
    assert "spines used: 20/20" in report.format()


def test_cli_exit_codes_and_keep(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["ib", "verify", str(IB_HDR), "--pairs", "4", "--sample", "2", "--keep", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert "PASSED" in result.output
    assert "ftree tables configured on all switches" in (tmp_path / "run" / "opensm.log").read_text()
    assert (tmp_path / "run" / "ibnetdiscover.out").is_file()
    build = tmp_path / "build"
    assert runner.invoke(main, ["render", str(IB_HDR), "-o", str(build), "-q"]).exit_code == 0
    (build / "opensm" / "ib1-sm1" / "root_guids.conf").write_text("0x02fab00020000010\n")
    result = runner.invoke(main, ["ib", "verify", str(IB_HDR), "--build", str(build), "--pairs", "4", "--sample", "2"])
    assert result.exit_code == 1, result.output
    assert "FAIL routing engine" in result.output


def test_no_fallback_subnet_stays_down_and_the_wait_is_bounded(tmp_path: Path) -> None:
    inventory = tmp_path / "fabric.yml"
    inventory.write_text((IB_HDR / "fabric.yml").read_text().replace("  engine: ftree\n", "  engine: ftree\n  no_fallback: true\n"))
    plan, files = plan_and_files(inventory)
    assert "routing_engine ftree,no_fallback" in files["opensm/ib1-sm1/opensm.conf"]
    files["opensm/ib1-sm1/root_guids.conf"] = plan.device("ib1-leaf01").guid + "\n"
    report = verify(plan, files, Options(pairs=4, sample=2, timeout=5))
    assert not report.ok
    ok, text = _check(report, "routing engine")
    assert not ok
    assert "SUBNET UP: no (waited 5 s)" in text
    assert "no routing engine could route the fabric (no_fallback)" in text
    assert "root_guids.conf lists ib1-leaf01 (leaf)" in text
    assert not _check(report, "diagnostics")[0]
