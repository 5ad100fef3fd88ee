"""deploy.yml day 0 on the lab for the shipped example `inventories/pod-roce-400g` itself, not a
small look-alike: 4 EOS spines, 8 EOS leaves, 8 uplinks per spine per leaf (256 BGP sessions,
512 neighbor entries), 32 servers, BFD on. STAND-IN device APIs whose routing state is real FRR
+ lldpd (see tests/lab_deploy.py).

What it proves on the real example: every switch is pushed and committed once, one canary per
tier first (a spine, then a leaf), and afterwards, read from FRR and lldpd against the plan
(never from what the stand-ins were told): every planned session Established with its planned
remote AS and at least one prefix received, LLDP on every port equal to the cabling plan.
The expected counts come from the inventory, not from the code under test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from fabricgen.lab.verify import check_bgp, check_lldp
from tests.lab_deploy import LabDeploy, lab_deploy, wait_for
from tests.lab_helpers import needs_lab
from tests.standins.runner import BIN, ROOT

pytestmark = [needs_lab, pytest.mark.skipif(not (BIN / "ansible-playbook").exists(), reason="needs the deploy extra (ansible)")]

EXAMPLE = ROOT / "inventories" / "pod-roce-400g"
INVENTORY = yaml.safe_load((EXAMPLE / "fabric.yml").read_text())


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabDeploy]:
    with lab_deploy(tmp_path_factory.mktemp("pod1"), (EXAMPLE / "fabric.yml").read_text(), "pod1") as running:
        yield running


def _expected_switches() -> tuple[set[str], set[str]]:
    """Spine and leaf names, from the inventory's counts and name patterns."""
    spines, leaves = INVENTORY["spines"], INVENTORY["leaves"]
    return (
        {spines["name"].format(index=i) for i in range(1, spines["count"] + 1)},
        {leaves["name"].format(index=i) for i in range(1, leaves["count"] + 1)},
    )


def test_pod_roce_400g_day0_every_switch_committed_every_session_up_with_prefixes_lldp_as_cabled(lab: LabDeploy) -> None:
    spines, leaves = _expected_switches()
    every = spines | leaves
    assert {s.name for s in lab.topology.switches} == every
    assert all(lab.sessions(name) == {} for name in every)  # day 0: no BGP anywhere

    result = lab.deploy.run("deploy.yml")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    commits = lab.deploy.commits()
    assert sorted(commits) == sorted(every)  # every switch, once
    assert set(commits[: len(spines)]) == spines and set(commits[len(spines) :]) == leaves  # tiers are barriers, top tier first
    for name, device in lab.devices().items():
        assert device.changed and device.pending is None and "router bgp" in device.running, name

    # From FRR, against the plan: every planned session Established with its planned remote AS
    bgp = wait_for(lambda: check_bgp(lab.frr, lab.topology))
    assert bgp.passed, bgp.failures[:10]
    links = len(spines) * len(leaves) * INVENTORY["uplinks"]["per_spine"]
    assert links == 256
    peers = {name: lab.frr.bgp_summary(name)["peers"] for name in every}
    assert sum(len(p) for p in peers.values()) == 2 * links  # both ends of every link, nothing else
    established = {(n, a) for n, p in peers.items() for a, peer in p.items() if peer["state"] == "Established"}
    assert len(established) == 2 * links
    empty = [(n, a) for n, p in peers.items() for a, peer in p.items() if peer["pfxRcd"] < 1]
    assert empty == [], empty[:10]

    # From lldpd, against the cabling plan (check_lldp), and what the post-check itself read
    lldp = wait_for(lambda: check_lldp(lab.frr, lab.topology))
    assert lldp.passed, lldp.failures[:10]
    for name in every:
        host = yaml.safe_load((lab.deploy.build / "ansible" / "host_vars" / f"{name}.yml").read_text())
        cabled = {(c["interface"], c["peer"], c["peer_interface"]) for c in host["fabricgen_lldp_plan"]}
        device = lab.deploy.device(name)
        assert set(device.routing.lldp(device)) == cabled, name  # type: ignore[union-attr]
