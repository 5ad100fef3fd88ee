"""deploy.yml on the three-tier lab fixture (tests/data/lab/three-tier: two pods, super-spines),
end to end on STAND-IN devices whose routing state is real FRR + lldpd (see tests/lab_deploy.py).

Every tier is pushed, super-spines included (before the fix, deploy.yml had plays for spines and
leaves only), one canary per tier among the changing switches, and afterwards the lab itself, read
from FRR, lldpd and the kernel, passes `lab verify`'s checks against the plan: every planned
session Established with its planned remote AS, each switch originating exactly its planned
prefixes, every leaf's route to every other leaf's prefixes at the planned ECMP width (across
pods: through both super-spine planes), LLDP equal to the cabling plan.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from fabricgen.lab.verify import check_advertised, check_bgp, check_ecmp, check_lldp
from tests.lab_deploy import LabDeploy, lab_deploy, wait_for
from tests.lab_helpers import needs_lab
from tests.standins.runner import BIN, ROOT

pytestmark = [needs_lab, pytest.mark.skipif(not (BIN / "ansible-playbook").exists(), reason="needs the deploy extra (ansible)")]

THREE_TIER = (ROOT / "tests" / "data" / "lab" / "three-tier" / "fabric.yml").read_text()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LabDeploy]:
    with lab_deploy(tmp_path_factory.mktemp("lab3t"), THREE_TIER, "lab3t") as running:
        yield running


def test_every_tier_super_spines_included_is_pushed_and_the_fabric_routes_as_planned(lab: LabDeploy) -> None:
    inventory = yaml.safe_load((lab.deploy.build / "ansible" / "hosts.yml").read_text())["all"]
    tiers = inventory["vars"]["fabricgen_tiers"]
    members = {tier: set(inventory["children"][tier]["hosts"]) for tier in tiers}
    assert "superspines" in tiers and len(members["superspines"]) == 2
    every = set().union(*members.values())
    assert every == {s.name for s in lab.topology.switches}  # 2 super-spines, 4 spines, 4 leaves

    result = lab.deploy.run("deploy.yml")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    commits = lab.deploy.commits()
    assert sorted(commits) == sorted(every)  # every switch once, the super-spines too
    order = [tiers.index(next(t for t in tiers if name in members[t])) for name in commits]
    assert order == sorted(order) and sorted(set(order)) == list(range(len(tiers)))  # tiers are barriers, in tier order

    for check in (check_bgp, check_advertised, check_ecmp, check_lldp):
        verdict = wait_for(lambda check=check: check(lab.frr, lab.topology))  # type: ignore[misc]
        assert verdict.passed, (check.__name__, verdict.failures[:10], verdict.evidence)
    assert all(peer["pfxRcd"] >= 1 for s in lab.topology.switches for peer in lab.frr.bgp_summary(s.name)["peers"].values())
