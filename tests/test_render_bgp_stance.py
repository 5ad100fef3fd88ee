"""BGP graceful restart is a fabric-wide stance printed on every platform (docs/render.md, "BGP
graceful restart"): NX-OS restarts gracefully by default and EOS does not, so a mixed pod would
treat a reload differently unless both configs say the same. Read back with the vendors' own
parsers (cisco.nxos nxos_bgp_global, arista.eos eos_bgp_global). The FRR lab keeps FRR's default
(helper mode) and prints no graceful-restart line: docs/lab.md says why. Expected values come
from the inventory written here."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabricgen.lab.configs import frr_config
from fabricgen.lab.topology import lab_topology
from fabricgen.pipeline import load_and_plan
from fabricgen.producers import render_files
from fabricgen.render.context import RenderContext
from tests.render_cases import section

MIXED = """
fabric: {name: gr, transport: roce}
leaves: {count: 2, model: cisco-n9k-9364d-gx2a, platform: nxos, name: "gr-leaf{index}"}
spines: {count: 2, model: arista-7060dx5-64s, platform: eos, name: "gr-spine{index}"}
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 2, ports_per_server: 1, speed: 400G}
addressing: {loopbacks: 10.40.0.0/24, fabric: 10.64.0.0/20, servers: 10.128.0.0/20, management: 192.168.0.0/24}
bgp: {spine_asn: 65000, leaf_asn: 65100GR}
"""


def _render(tmp_path: Path, graceful_restart: str) -> tuple[dict[str, str], str]:
    (tmp_path / "fabric.yml").write_text(MIXED.replace("GR", graceful_restart))
    plan = load_and_plan(tmp_path).plan
    topology = lab_topology(plan)
    return render_files(plan, RenderContext()), frr_config(topology, topology.switches[0])


def _router_bgp(files: dict[str, str], device: str) -> list[str]:
    return [line.strip() for line in section(files[f"configs/{device}.cfg"], r"^router bgp").splitlines()]


def _graceful(lines: list[str]) -> list[str]:
    return [line for line in lines if "graceful-restart" in line]


# (inventory text, NX-OS lines, EOS lines): the vendors' syntax (docs/render.md)
STANCES = {
    "default: disabled": (
        "",
        ["no graceful-restart"],
        ["no graceful-restart", "no graceful-restart-helper"],
    ),
    "helper": (
        ", graceful_restart: {mode: helper}",
        ["no graceful-restart", "graceful-restart-helper"],
        ["no graceful-restart", "graceful-restart-helper"],
    ),
    "enabled, own times": (
        ", graceful_restart: {mode: enabled, restart_time: 90, stalepath_time: 240}",
        ["graceful-restart", "graceful-restart restart-time 90", "graceful-restart stalepath-time 240"],
        ["graceful-restart restart-time 90", "graceful-restart stalepath-time 240", "graceful-restart", "graceful-restart-helper"],
    ),
}


@pytest.mark.parametrize("stance", list(STANCES))
def test_every_platform_states_the_graceful_restart_stance(tmp_path: Path, stance: str) -> None:
    """The same stance on NX-OS leaves and EOS spines; nothing left to a default. The lab's FRR
    config has no graceful-restart line (FRR refuses to change the mode on a running bgpd)."""
    text, nxos, eos = STANCES[stance]
    files, lab = _render(tmp_path, text)
    for leaf in ("gr-leaf1", "gr-leaf2"):
        assert _graceful(_router_bgp(files, leaf)) == nxos, leaf
    for spine in ("gr-spine1", "gr-spine2"):
        assert _graceful(_router_bgp(files, spine)) == eos, spine
    assert [line.strip() for line in lab.splitlines() if "graceful-restart" in line] == []


def test_vendor_parsers_read_the_stance(tmp_path: Path) -> None:
    """cisco.nxos reads `no graceful-restart` as graceful restart off (its default is on) and the
    times of an enabled stance; arista.eos reads the enabled stance's times."""
    parsers = pytest.importorskip("tests.test_render_parsers", reason="needs the deploy extra (ansible)")
    files, _ = _render(tmp_path, "")
    nxos = parsers.parsed("cisco.nxos", "nxos_bgp_global", section(files["configs/gr-leaf1.cfg"], r"^router bgp"))
    assert nxos["graceful_restart"] == {"set": False}
    files, _ = _render(tmp_path, STANCES["enabled, own times"][0])
    nxos = parsers.parsed("cisco.nxos", "nxos_bgp_global", section(files["configs/gr-leaf1.cfg"], r"^router bgp"))
    assert nxos["graceful_restart"] == {"restart_time": 90, "stalepath_time": 240}
    eos = parsers.parsed("arista.eos", "eos_bgp_global", section(files["configs/gr-spine1.cfg"], r"^router bgp"))
    assert eos["graceful_restart"]["restart_time"] == 90 and eos["graceful_restart"]["stalepath_time"] == 240
