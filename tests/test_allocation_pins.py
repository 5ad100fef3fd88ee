"""A leaf pinned to a model with more ports than its tier's default model: its server block is
sized for the largest model of the tier, so it never runs into the next leaf's block, and the
slots of a fabric of one leaf model stay what they were."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from fabricgen.pipeline import load_and_plan
from tests.fabrics import fabric, write

BIG = "arista-7060x6-64pe"
"""64 x 800G OSFP: 128 logical 400G ports, twice the 64 of the tier's 7060DX5-64S."""


def _pinned(count: int, mode: str) -> dict[str, object]:
    return fabric(
        leaves={"count": count, "nodes": [{"index": 3, "model": BIG}]},
        servers={"per_leaf": 4},
        addressing={"server_mode": mode},
    )


@pytest.mark.parametrize("mode", ["p2p", "subnet"])
def test_pinned_bigger_leaf_does_not_overlap_the_next_leafs_servers(tmp_path: Path, mode: str) -> None:
    plan = load_and_plan(write(tmp_path, _pinned(6, mode))).plan
    leaves = [d for d in plan.devices if d.role == "leaf"]
    # Independent of the planner: the biggest leaf has 64 cages x 2 logical 400G ports.
    logical = 64 * 2
    addresses = [n.address for s in plan.servers for n in s.nics] + [n.gateway for s in plan.servers for n in s.nics if mode == "p2p"]
    assert len(addresses) == len(set(addresses)), "a server address is handed out twice"
    blocks = sorted({p.split()[0] for d in leaves for p in d.advertised_prefixes if not p.endswith("/32")})
    networks = [ipaddress.ip_network(b) for b in blocks]
    assert len(networks) == len(leaves)
    assert all(n.num_addresses >= (logical * 2 if mode == "p2p" else logical + 3) for n in networks)
    assert not any(a.overlaps(b) for i, a in enumerate(networks) for b in networks[i + 1 :])


def test_adding_a_leaf_keeps_the_pinned_fabrics_server_addresses(tmp_path: Path) -> None:
    before = load_and_plan(write(tmp_path, _pinned(6, "p2p"), "a.yml")).plan
    after = load_and_plan(write(tmp_path, _pinned(7, "p2p"), "b.yml")).plan
    old = {(s.name, n.nic): n.address for s in before.servers for n in s.nics}
    new = {(s.name, n.nic): n.address for s in after.servers for n in s.nics}
    assert all(new[key] == address for key, address in old.items())


def test_one_model_tier_keeps_its_block_size(tmp_path: Path) -> None:
    # 7060DX5-64S at 400G: 64 logical ports, a /31 each = 128 addresses = a /25 per leaf.
    plan = load_and_plan(write(tmp_path, fabric())).plan
    leaf = next(d for d in plan.devices if d.role == "leaf" and d.index == 2)
    assert f"{ipaddress.ip_address('10.2.0.0') + 128}/25 le 31" in leaf.advertised_prefixes
