"""The lab's BGP, BFD and LLDP timers follow the data (platforms/frr/platform.yml `lab_timers`),
chosen by the lab's BGP sessions per core: a small lab keeps the fast timers, the 32 x 64
fabric of benchmarks/lab_bench.py runs slower ones, and changing the data changes what is
rendered. Expected rows are read from the YAML file here, not from the code under test. No lab
is booted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabricgen import platforms as registry
from fabricgen.lab.capacity import Machine, refusal
from fabricgen.lab.configs import frr_config, lldpd_config
from fabricgen.lab.timers import scaled, sessions
from fabricgen.lab.topology import LabTopology, lab_topology
from fabricgen.lab.verify import check_bfd
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES, ROOT
from tests.fabrics import fabric, write

ROWS: list[dict[str, Any]] = yaml.safe_load((ROOT / "fabricgen" / "platforms" / "frr" / "platform.yml").read_text())["lab_timers"]


def _fabric_32x64(tmp: Path) -> LabTopology:
    """benchmarks/lab_bench.py's 96-switch fabric: 32 spines x 64 leaves, one link each."""
    doc = fabric(
        fabric={"name": "lb96", "transport": "roce"},
        spines={"count": 32},
        leaves={"count": 64},
        uplinks={"per_spine": 1, "speed": "400G"},
        servers={"per_leaf": 4, "ports_per_server": 8, "speed": "400G"},
        bgp={"spine_asn": 65000, "leaf_asn": 65101, "bfd": True},
        oversubscription={"max_ratio": 64},
        addressing={"loopbacks": "10.0.0.0/21", "fabric": "10.64.0.0/11", "servers": "10.128.0.0/12"},
    )
    return lab_topology(load_and_plan(write(tmp, doc)).plan)


def _expected_row(sessions_per_core: float) -> dict[str, Any]:
    fitting = [row for row in ROWS if sessions_per_core <= row["sessions_per_core"]]
    return min(fitting, key=lambda row: row["sessions_per_core"])


def _rendered_timers(topology: LabTopology) -> tuple[str, str, str]:
    text = frr_config(topology, topology.switches[0])
    bgp = next(line.strip() for line in text.splitlines() if line.strip().startswith("timers bgp"))
    bfd = next(line.strip() for line in text.splitlines() if line.strip().startswith("transmit-interval"))
    lldp = next(line for line in lldpd_config(topology.switches[0], topology.timers).splitlines() if "tx-interval" in line)
    return bgp, bfd, lldp


def test_a_small_lab_keeps_the_fast_timers_and_the_planned_bfd() -> None:
    topology = scaled(lab_topology(load_and_plan(EXAMPLES / "pod-roce-400g").plan), cores=2)
    row = _expected_row(4 * 8 * 8 / 2)  # 4 spines x 8 leaves x 8 links, on 2 cores
    assert row["bfd_min_interval_ms"] <= 300
    assert _rendered_timers(topology) == (
        f"timers bgp {row['keepalive']} {row['hold']}",
        "transmit-interval 300",  # the inventory's bgp.bfd_interval default
        f"configure lldp tx-interval {row['lldp_tx_interval']}",
    )
    assert topology.bfd_planned_ms == 0


def test_the_32_by_64_fabric_runs_the_row_its_sessions_per_core_select(tmp_path: Path) -> None:
    topology = _fabric_32x64(tmp_path)
    assert sessions(topology) == 32 * 64
    row = _expected_row(32 * 64 / 2)
    assert row is not ROWS[0], "2,048 sessions on 2 cores must be past the first row"
    big = scaled(topology, cores=2)
    interval = max(300, row["bfd_min_interval_ms"])
    assert _rendered_timers(big) == (
        f"timers bgp {row['keepalive']} {row['hold']}",
        f"transmit-interval {interval}",
        f"configure lldp tx-interval {row['lldp_tx_interval']}",
    )
    assert big.bfd_planned_ms == 300
    # the same fabric on 16 cores is small again
    assert _rendered_timers(scaled(topology, cores=16))[0] == f"timers bgp {ROWS[0]['keepalive']} {ROWS[0]['hold']}"


def test_the_timers_are_data(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    topology = _fabric_32x64(tmp_path)
    rows = [
        {"sessions_per_core": 10, "keepalive": 1, "hold": 3, "connect_retry": 2, "lldp_tx_interval": 1, "bfd_min_interval_ms": 0},
        {"sessions_per_core": 5000, "keepalive": 7, "hold": 21, "connect_retry": 9, "lldp_tx_interval": 5, "bfd_min_interval_ms": 900},
    ]
    original = registry.section

    def section(key: str) -> dict[str, Any]:
        return {"frr": rows} if key == "lab_timers" else original(key)

    monkeypatch.setattr(registry, "section", section)
    assert _rendered_timers(scaled(topology, cores=2)) == ("timers bgp 7 21", "transmit-interval 900", "configure lldp tx-interval 5")


def test_the_bfd_check_names_the_planned_interval_when_the_lab_runs_slower(tmp_path: Path) -> None:
    big = scaled(_fabric_32x64(tmp_path), cores=2)
    # without BFD sessions to read the check stops at its title, which is what is tested here
    title = check_bfd(None, replace(big, bfd=False)).title  # type: ignore[arg-type]
    assert title == "BFD up on every session (1200 ms x 3; planned 300 ms, slowed for the lab's size)"


def test_a_lab_past_the_last_row_is_refused_with_the_data_s_limit() -> None:
    topology = lab_topology(load_and_plan(EXAMPLES / "cluster-3tier").plan)
    limit = max(row["sessions_per_core"] for row in ROWS)
    message = refusal(topology, Machine(cores=1, available_mib=200_000))
    assert message is not None
    assert f"1 cores carry about {limit:,} ({limit:,} per core at the slowest lab timers)" in message
