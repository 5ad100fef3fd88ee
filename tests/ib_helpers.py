"""Helpers shared by the InfiniBand tests: plans, rendered files, fault injection."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fabricgen.cli import main
from fabricgen.core.model import Plan
from fabricgen.infiniband.sim import missing_tools
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES, ROOT

IB_HDR = EXAMPLES / "ib-hdr"


def ib_fabric(name: str, *, spines: int, leaves: int, per_spine: int, servers: str, model: str = "nvidia-qm8790") -> str:
    """The lines every small InfiniBand test inventory starts with: fabric `name`, switches named
    `{name}-spine01`, `{name}-leaf01`, ..., and `servers` as given (where the tests differ)."""
    return (
        f"fabric: {{name: {name}, transport: infiniband}}\n"
        f'spines: {{count: {spines}, model: {model}, name: "{name}-spine{{index:02d}}"}}\n'
        f'leaves: {{count: {leaves}, model: {model}, name: "{name}-leaf{{index:02d}}"}}\n'
        f"uplinks: {{per_spine: {per_spine}}}\n"
        f"servers: {{{servers}}}\n"
    )


LARGE = (
    ib_fabric(
        "ibl", spines=20, leaves=40, per_spine=1, servers='per_leaf: 20, ports_per_server: 1, name: "ibl-gpu{leaf_index:02d}{index:02d}"'
    )
    + """\
subnet_managers:
  - {host: ibl-gpu0101, priority: 15}
  - {host: ibl-gpu4020, priority: 14}
partitions:
  - {name: t1, pkey: 0x0101, members: ["ibl-gpu0*"]}
  - {name: t2, pkey: 0x0102, members: ["ibl-gpu1*", "ibl-gpu2*"], membership: limited}
"""
)

RAIL_SERVERS = 'attachment: rail, per_leaf: 8, ports_per_server: 4, rails: 4, name: "ibr-su{unit}-gpu{index:02d}"'
RAIL_SM_ON_SERVER = (
    ib_fabric("ibr", spines=2, leaves=4, per_spine=4, servers=RAIL_SERVERS)
    + """\
subnet_managers:
  - {host: ibr-su1-gpu01, priority: 15}
  - {host: ibr-su1-gpu08, priority: 14}
partitions:
  - {name: t1, pkey: 0x0101, members: ["ibr-su1-gpu0[1-4]"], membership: limited}
  - {name: t2, pkey: 0x0102, members: ["ibr-su1-gpu0[5-8]"]}
  - {name: t3, pkey: 0x0a03, members: ["ibr-su1-gpu0[1-2]"], ipoib: true, sl: 2}
qos: {enabled: true, max_vls: 4}
"""
)
"""Rail-optimised, the SMs on servers: the master's port is in t1 as a limited member by plan."""

NDR_SM = 'opensm: {implementation: opensm, version: "3.3.24"}\n'
"""What an NDR (QM9700) test fabric declares: upstream OpenSM 3.3.24 is the first with NDR port
rates (data/subnet_managers.yml); without it `validate` refuses the fabric."""

HGX = """\
fabric: {name: ibh, transport: infiniband}
spines: {count: 2, model: nvidia-qm9700, name: "ibh-spine{index}"}
leaves: {count: 2, model: nvidia-qm9700, name: "ibh-leaf{index}"}
uplinks: {per_spine: 12}
servers: {per_leaf: 3, ports_per_server: 8, nic: nvidia-connectx-7-osfp, name: "ibh-gpu{leaf_index}{index}"}
opensm: {implementation: opensm, version: "3.3.24"}
subnet_managers:
  - {host: ibh-sm1, priority: 15, leaf: ibh-leaf1}
  - {host: ibh-sm2, priority: 14, leaf: ibh-leaf2}
partitions:
  - {name: a, pkey: 0x0a01, members: ["ibh-gpu1*"], ipoib: true}
  - {name: b, pkey: 0x0a02, members: ["ibh-gpu2*"]}
"""
"""HGX-style servers: 8 single-port ConnectX-7 adapters each (8 HCAs, "<host> mlx5_N"), QM9700
leaves; tests/data/ibnetdiscover-hgx.txt is this fabric as ibnetdiscover prints it."""
HGX_DISCOVERY = ROOT / "tests" / "data" / "ibnetdiscover-hgx.txt"

HALF_CAGE_SM = """\
fabric: {name: ibq, transport: infiniband}
spines: {count: 2, model: nvidia-qm9700, name: "ibq-spine{index}"}
leaves: {count: 2, model: nvidia-qm9700, name: "ibq-leaf{index}"}
uplinks: {per_spine: 16}
servers: {per_leaf: 31, nic: nvidia-connectx-7-osfp, name: "ibq-gpu{leaf_index}{index:02d}"}
subnet_managers:
  - {host: ibq-sm1, priority: 15, leaf: ibq-leaf1}
  - {host: ibq-sm2, priority: 14, leaf: ibq-leaf2}
opensm: {implementation: opensm, version: "3.3.24"}
"""
"""QM9700 leaves whose only free InfiniBand port is the second port of cage 16: 31 NDR servers
fill cages 1-15 and port 16/1, 32 uplinks fill cages 17-32. Each dedicated SM host takes 16/2."""

SPLIT_HALF_CAGE_SM = """\
fabric: {name: ibs, transport: infiniband}
spines: {count: 2, model: nvidia-qm9700, name: "ibs-spine{index}"}
leaves: {count: 2, model: nvidia-qm9700, name: "ibs-leaf{index}"}
uplinks: {per_spine: 16}
servers: {per_leaf: 63, speed: 200G, nic: nvidia-connectx-7-osfp, name: "ibs-gpu{leaf_index}{index:02d}"}
subnet_managers:
  - {host: ibs-sm1, priority: 15, leaf: ibs-leaf1}
  - {host: ibs-sm2, priority: 14, leaf: ibs-leaf2}
opensm: {implementation: opensm, version: "3.3.24"}
"""
"""NDR200: 63 servers at 200G fill cages 1-16 (4 split ports each) but the last; 32 NDR uplinks
fill cages 17-32. Each dedicated SM host takes the free NDR200 port of cage 16."""

needs_sim = pytest.mark.skipif(
    bool(missing_tools()), reason=f"needs the Debian packages opensm ibsim-utils infiniband-diags (missing: {missing_tools()})"
)
needs_opensm = pytest.mark.skipif(shutil.which("opensm") is None, reason="needs the Debian package opensm (make debian-packages)")

OPENSM_REFUSALS = ("Unrecognized token", "Invalid", "Parsing error")
"""What OpenSM's option parser prints for an option name or value it does not take."""


def opensm_dump(conf: Path, dump: Path) -> str:
    """`opensm -F conf -c dump`: OpenSM's own parser reads `conf` and writes back every option it
    took into `dump` (no subnet is touched); what it printed, for the refusals above."""
    done = subprocess.run(["opensm", "-F", str(conf), "-c", str(dump)], capture_output=True, text=True, timeout=60, check=False)
    return done.stdout + done.stderr


def plan_and_files(inventory: Path) -> tuple[Plan, dict[str, str]]:
    plan = load_and_plan(inventory).plan
    return plan, render_files(plan, RenderContext())


def write_inventory(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "fabric.yml"
    path.write_text(text)
    return path


def plan_of(tmp_path: Path, text: str) -> Plan:
    """The plan of inventory `text` (written to `tmp_path`/fabric.yml, as a user's file would be)."""
    return load_and_plan(write_inventory(tmp_path, text)).plan


def cli(*args: str | Path) -> Result:
    """`fabricgen ARGS...` in-process, as the user types it."""
    return CliRunner().invoke(main, [str(arg) for arg in args])


def render_cli(tmp_path: Path, text: str) -> tuple[Result, Path]:
    """`fabricgen render fabric.yml -o out -q` for inventory `text`: the result and the output folder."""
    out = tmp_path / "out"
    return cli("render", write_inventory(tmp_path, text), "-o", out, "-q"), out


def copy_example(tmp_path: Path) -> Path:
    target = tmp_path / "ib-hdr"
    shutil.copytree(IB_HDR, target)
    return target / "fabric.yml"


def drop_cable(net: str, a: str, a_port: int, z: str, z_port: int) -> str:
    """The net text without the cable a[a_port] <-> z[z_port] (both ends' port lines)."""
    out, node = [], ""
    for line in net.splitlines():
        if line.startswith(("Switch", "Hca")):
            node = line.split('"')[1]
        if (node == a and line.startswith(f'[{a_port}]\t"{z}"[{z_port}]')) or (
            node == z and line.startswith(f'[{z_port}]\t"{a}"[{a_port}]')
        ):
            continue
        out.append(line)
    return "\n".join(out) + "\n"


__all__ = [
    "HALF_CAGE_SM",
    "IB_HDR",
    "LARGE",
    "OPENSM_REFUSALS",
    "RAIL_SERVERS",
    "RAIL_SM_ON_SERVER",
    "ROOT",
    "SPLIT_HALF_CAGE_SM",
    "cli",
    "copy_example",
    "drop_cable",
    "ib_fabric",
    "needs_opensm",
    "needs_sim",
    "opensm_dump",
    "plan_and_files",
    "plan_of",
    "render_cli",
    "write_inventory",
]
