"""The ftree model of the flow simulation against real OpenSM: an ibsim fabric built from the
plan, OpenSM's ftree engine run once, and its forwarding tables read back with `dump_lfts`.
Every path between leaves that the tables give must be the path `ecmp.route(..., "ftree")` takes.

Processes: ibsim is started here and stopped by its own pid in `finally`; OpenSM runs with
`--once` and exits by itself (a timeout kills it otherwise).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from fabricgen.analyze import ecmp
from fabricgen.analyze.planview import fabric_of
from fabricgen.core.model import SM_LINK, Plan
from tests.conftest import wait_until
from tests.test_analyze_plans import inventory, plan_of

UMAD2SIM = next(iter(sorted(Path("/usr/lib").glob("*/umad2sim/libumad2sim.so"))), Path("/usr/lib/umad2sim/libumad2sim.so"))
pytestmark = pytest.mark.skipif(
    not (shutil.which("ibsim") and shutil.which("opensm") and shutil.which("dump_lfts") and UMAD2SIM.exists()),
    reason="needs ibsim-utils, opensm and infiniband-diags (make test installs them)",
)
LFT_LINE = re.compile(r"^0x([0-9a-f]+) (\d+) : \((?:Channel Adapter|Switch) portguid 0x[0-9a-f]+: '([^']+)'\)")
HEADER = re.compile(r"^Unicast lids .* \((.+)\):$")


def ib_port(plan: Plan, device: str, interface: str, cage: int) -> int:
    """InfiniBand port number of a switch interface: a QM9700 cage holds two ports, named
    `<cage>/1` and `<cage>/2` (ports 2 x cage - 1 and 2 x cage); servers keep their NIC port."""
    if "/" not in interface:
        return cage
    return (cage - 1) * 2 + int(interface.split("/")[1])


def net_file(plan: Plan) -> str:
    """The plan in ibsim's ibnetdiscover-like format (ibsim 0.10 simulates up to HDR, so every
    link is 4xHDR: routing does not depend on the rate)."""
    ports: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    # The GPU fabric the model routes: switches and servers (a dedicated SM host's cable, kind
    # sm-leaf, carries no job traffic and its host is not listed below).
    for link in (lk for lk in plan.links if lk.kind != SM_LINK):
        a_port, z_port = (
            ib_port(plan, link.a.device, link.a.interface, link.a.port),
            ib_port(plan, link.z.device, link.z.interface, link.z.port),
        )
        ports[link.a.device].append((a_port, link.z.device, z_port))
        ports[link.z.device].append((z_port, link.a.device, a_port))
    lines = []
    for device in plan.devices:
        lines += [
            f"switchguid={device.guid}",
            f'Switch\t{device.ports_total * 2} "{device.name}"\t# "{device.name}" enhanced port 0 lid 0 lmc 0',
        ]
        lines += [f'[{p}]\t"{peer}"[{peer_port}]\t# "{peer}" lid 0 4xHDR' for p, peer, peer_port in sorted(ports[device.name])]
        lines.append("")
    for server in plan.servers:
        lines += [f"caguid={server.node_guid}", f'Hca\t{len(server.nics)} "{server.name}"\t# "{server.name} HCA-1"']
        lines += [f'[{p}]\t"{peer}"[{peer_port}]\t# lid 0 lmc 0 "{peer}" lid 0 4xHDR' for p, peer, peer_port in sorted(ports[server.name])]
        lines.append("")
    return "\n".join(lines)


def opensm_lfts(plan: Plan, folder: Path) -> dict[str, dict[str, int]]:
    """{switch: {destination HCA: output port}} after OpenSM's ftree engine configured the fabric."""
    (folder / "fabric.net").write_text(net_file(plan), encoding="utf-8")
    env = {**os.environ, "IBSIM_SOCKNAME": f"fg-analyze-{os.getpid()}-{time.monotonic_ns()}"}
    sim = subprocess.Popen(["ibsim", "-s", "-n", "fabric.net"], cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        listening = f"@{env['IBSIM_SOCKNAME']}:ctl"  # ibsim's control socket: it serves the fabric
        assert wait_until(lambda: sim.poll() is not None or listening in Path("/proc/net/unix").read_text(), timeout=30)
        assert sim.poll() is None, "ibsim exited"
        client = {
            **env,
            "LD_PRELOAD": str(UMAD2SIM),
            "OSM_CACHE_DIR": str(folder),
            "OSM_TMP_DIR": str(folder),
            "SIM_HOST": plan.servers[0].name,
        }
        subprocess.run(
            ["opensm", "-R", "ftree", "-o", "-f", str(folder / "opensm.log")],
            cwd=folder,
            env=client,
            timeout=120,
            capture_output=True,
            check=True,
        )
        log = (folder / "opensm.log").read_text(encoding="utf-8", errors="replace")
        assert "ftree tables configured on all switches" in log
        dump = subprocess.run(["dump_lfts"], cwd=folder, env=client, timeout=60, capture_output=True, text=True, check=True).stdout
    finally:
        sim.terminate()
        try:
            sim.wait(timeout=10)
        except subprocess.TimeoutExpired:
            sim.kill()
            sim.wait()
    tables: dict[str, dict[str, int]] = {}
    current: dict[str, int] = {}
    for line in dump.splitlines():
        if header := HEADER.match(line):
            current = tables.setdefault(header.group(1), {})
        elif entry := LFT_LINE.match(line):
            name = entry.group(3).removesuffix(" HCA-1")
            current[name] = int(entry.group(2))
    return tables


@pytest.mark.parametrize(("spines", "per_spine", "per_leaf"), [(4, 2, 8), (3, 2, 7), (4, 3, 10)])
def test_ftree_model_matches_opensm(tmp_path: Path, spines: int, per_spine: int, per_leaf: int) -> None:
    doc = inventory(
        transport="infiniband", spines=spines, leaves=4, per_spine=per_spine, per_leaf=per_leaf, ports_per_server=1, max_ratio=4.0
    )
    plan = plan_of(tmp_path, doc)
    tables = opensm_lfts(plan, tmp_path)
    fabric = fabric_of(plan)
    # Cable p of a leaf-spine pair: the p-th by port, the same order on both ends (the planner's link number).
    up_cable: dict[tuple[str, int], tuple[int, int]] = {}
    down_cable: dict[tuple[str, int], tuple[int, int]] = {}
    by_pair: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for link in plan.links:
        if link.kind == "leaf-spine":
            by_pair[(link.a.device, link.z.device)].append(link)
    for (leaf, spine), links in by_pair.items():
        for p, link in enumerate(sorted(links, key=lambda lk: ib_port(plan, lk.a.device, lk.a.interface, lk.a.port))):
            up_cable[(leaf, ib_port(plan, leaf, link.a.interface, link.a.port))] = (fabric.spines.index(spine), p)
            down_cable[(spine, ib_port(plan, spine, link.z.interface, link.z.port))] = (fabric.leaves.index(leaf), p)
    # Every server to every server on another leaf, as OpenSM routes it and as the model does.
    servers = len(plan.servers)
    src, dst = np.nonzero(~np.eye(servers, dtype=bool))
    off_leaf = fabric.port_leaf[src] != fabric.port_leaf[dst]  # one HCA port per server
    src, dst = src[off_leaf], dst[off_leaf]
    flows = ecmp.all_to_all_flows(fabric, servers, 1, 1.0)
    real = np.zeros(fabric.n_links)
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        leaf, target = plan.servers[s].leaf, plan.servers[d].name
        spine_ix, p_up = up_cable[(leaf, tables[leaf][target])]
        spine = fabric.spines[spine_ix]
        leaf_ix, p_down = down_cable[(spine, tables[spine][target])]
        assert fabric.leaves[leaf_ix] == plan.servers[d].leaf
        real[fabric.leaf_up[fabric.leaves.index(leaf), spine_ix, p_up]] += 1
        real[fabric.spine_down[spine_ix, leaf_ix, p_down]] += 1
    model = ecmp.route(fabric, flows, "ftree", 1, np.random.default_rng(0)).utilisation[0] * fabric.link_gbps / flows.demand_gbps
    assert model.tolist() == real.tolist()
