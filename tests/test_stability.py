"""Allocation is stable under growth: adding a leaf, a spine within the leaves' uplink budget,
or a server changes no address or ASN of anything that exists."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from fabricgen.core.model import Plan
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES
from tests.fabrics import fabric, write


def plan_for(tmp: Path, doc: dict[str, Any], name: str) -> Plan:
    return load_and_plan(write(tmp, doc, name)).plan


def servers_of(plan: Plan, leaf: str) -> dict[str, Any]:
    return {s.name: s for s in plan.servers if s.leaf == leaf}


@pytest.mark.parametrize("server_mode", ["p2p", "subnet"])
def test_adding_a_leaf_changes_only_that_leaf_and_the_spines(tmp_path: Path, server_mode: str) -> None:
    before = plan_for(tmp_path, fabric(addressing={"server_mode": server_mode}), "a.yml")
    after = plan_for(tmp_path, fabric(leaves={"count": 5}, addressing={"server_mode": server_mode}), "b.yml")
    old = {d.name: d for d in before.devices}
    new = {d.name: d for d in after.devices}
    assert set(new) - set(old) == {"t1-leaf05"}
    for name, device in old.items():
        if device.role == "leaf":
            assert new[name] == device, name
            assert servers_of(after, name) == servers_of(before, name)
        else:
            grown = new[name]
            assert (grown.loopback, grown.asn, grown.management) == (device.loopback, device.asn, device.management)
            assert set(device.interfaces) < set(grown.interfaces)
            assert set(device.bgp_neighbors) < set(grown.bgp_neighbors)
    assert set(before.links) < set(after.links)


def test_adding_a_server_changes_only_its_leaf(tmp_path: Path) -> None:
    base = fabric(oversubscription={"max_ratio": 2.0})
    before = plan_for(tmp_path, base, "a.yml")
    after = plan_for(tmp_path, fabric(servers={"per_leaf": 5}, oversubscription={"max_ratio": 2.0}), "b.yml")
    for device in before.devices:
        grown = after.device(device.name)
        assert (grown.loopback, grown.asn, grown.management) == (device.loopback, device.asn, device.management)
        assert set(device.interfaces) <= set(grown.interfaces)
        if device.role == "spine":
            assert grown == device
    old_nics = {(s.name, n.nic): n for s in before.servers for n in s.nics}
    new_nics = {(s.name, n.nic): n for s in after.servers for n in s.nics}
    assert all(new_nics[key] == nic for key, nic in old_nics.items())


def test_pinned_index_keeps_addresses_when_others_disappear(tmp_path: Path) -> None:
    """Decommissioning leaf 2 (an explicit node list without it) leaves leaf 3 as it was."""
    before = plan_for(tmp_path, fabric(leaves={"count": 3}), "a.yml")
    after = plan_for(tmp_path, fabric(leaves={"count": 0, "nodes": [{"index": 1}, {"index": 3}]}), "b.yml")
    assert after.device("t1-leaf03") == before.device("t1-leaf03")


SEEDED = ("pod-roce-400g", "pod-mixed", "ib-hdr")

_PLAN_EACH = """\
import sys
from fabricgen.cli import main
for inventory, out in zip(sys.argv[1::2], sys.argv[2::2]):
    sys.stdout = open(out, "w", encoding="utf-8")
    try:
        main(["plan", inventory, "--format", "json"])
    except SystemExit as done:
        if done.code:
            raise
    finally:
        sys.stdout.close()
"""


@pytest.fixture(scope="module")
def seeded_plans(tmp_path_factory: pytest.TempPathFactory) -> dict[str, set[bytes]]:
    """`fabricgen plan --format json` of each of SEEDED under three hash seeds: one fresh
    interpreter per seed plans them all, each into its own file."""
    base = tmp_path_factory.mktemp("seeds")
    outputs: dict[str, set[bytes]] = {name: set() for name in SEEDED}
    for seed in ("0", "1", "4242"):
        argv = [str(arg) for name in SEEDED for arg in (EXAMPLES / name, base / f"{seed}-{name}.json")]
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", _PLAN_EACH, *argv], env=env, timeout=300, check=True)
        for name in SEEDED:
            outputs[name].add((base / f"{seed}-{name}.json").read_bytes())
    return outputs


@pytest.mark.parametrize("name", SEEDED)
def test_plan_json_is_identical_across_hash_seeds(name: str, seeded_plans: dict[str, set[bytes]]) -> None:
    outputs = seeded_plans[name]
    assert len(outputs) == 1, f"{name}: plan JSON differs between hash seeds"
    assert next(iter(outputs)).startswith(b"{")
