"""The lab's reading of the plan, its FRR and containerlab renderings and its CLI guards: no
root needed. Expected values come from the inventories (counts, ASNs) and the issue's rules
(15-character interface names, a per-fabric prefix)."""

from __future__ import annotations

import doctest
import importlib
import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from fabricgen.cli import main
from fabricgen.configs.devices import device_configs
from fabricgen.core.model import Plan
from fabricgen.lab import cli as lab_cli
from fabricgen.lab import expect
from fabricgen.lab.clab import export_files
from fabricgen.lab.configs import frr_config
from fabricgen.lab.report import Check, Report
from fabricgen.lab.topology import IFNAMSIZ, LabUnsupported, lab_topology
from fabricgen.pipeline import load_and_plan
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES, ROOT
from tests.fabrics import write
from tests.test_artifacts_lab import _errors

THREE_TIER = ROOT / "tests" / "data" / "lab" / "three-tier"
ETHERNET = ("pod-roce-400g", "pod-mixed", "pod-rail", "cluster-3tier")


def _plan(path: Path) -> Plan:
    return load_and_plan(path).plan


@pytest.mark.parametrize("example", ETHERNET)
def test_kernel_names_fit_and_are_unique_per_namespace(example: str) -> None:
    topology = lab_topology(_plan(EXAMPLES / example))
    ends: dict[str, list[str]] = {}
    for cable in topology.cables:
        ends.setdefault(cable.a_node, []).append(cable.a_kernel)
        ends.setdefault(cable.z_node, []).append(cable.z_kernel)
    for node, names in ends.items():
        assert len(names) == len(set(names)), node
        assert all(len(n) <= IFNAMSIZ for n in names), node
    assert all(ns.startswith(f"fg-{topology.fabric}-") for ns in topology.namespaces)


def test_two_fabrics_never_share_a_namespace() -> None:
    one = set(lab_topology(_plan(EXAMPLES / "pod-roce-400g")).namespaces)
    two = set(lab_topology(_plan(EXAMPLES / "pod-mixed")).namespaces)
    assert one and two and not one & two


def test_infiniband_and_server_vlans_are_refused() -> None:
    with pytest.raises(LabUnsupported, match="not an Ethernet"):
        lab_topology(_plan(EXAMPLES / "ib-hdr"))


def test_frr_config_of_a_leaf_means_the_plan(tmp_path: Path) -> None:
    topology = lab_topology(_plan(EXAMPLES / "pod-roce-400g"))
    leaf = topology.switch("pod1-leaf01")
    text = frr_config(topology, leaf)
    inventory = yaml.safe_load((EXAMPLES / "pod-roce-400g" / "fabric.yml").read_text())
    spines, links = inventory["spines"]["count"], inventory["uplinks"]["per_spine"]
    assert f"router bgp {inventory['bgp']['leaf_asn']}\n" in text  # leaf01 takes the base ASN
    assert f" neighbor SPINES remote-as {inventory['bgp']['spine_asn']}\n" in text
    assert len(re.findall(r"^ neighbor \S+ peer-group SPINES$", text, re.M)) == spines * links
    assert f"  maximum-paths {spines * links}\n" in text
    assert " neighbor SPINES bfd profile FABRIC\n" in text
    assert "  detect-multiplier 3\n  receive-interval 300\n  transmit-interval 300\n" in text  # bgp.bfd_* defaults
    assert "route-map RM-ADVERTISE permit 10\n match ip address prefix-list PL-ADVERTISE\n" in text
    assert "  redistribute connected route-map RM-ADVERTISE\n" in text
    assert "\n no bgp bestpath as-path multipath-relax\n" in text  # one spine ASN: identical AS_PATHs
    assert " no bgp ebgp-requires-policy\n" in text
    assert "frr defaults traditional\n" in text


def test_three_tier_leaves_relax_as_path_multipath_and_spines_do_not() -> None:
    topology = lab_topology(_plan(THREE_TIER))
    for switch in topology.switches:
        text = frr_config(topology, switch)
        relaxed = re.search(r"^ bgp bestpath as-path multipath-relax$", text, re.M) is not None
        # super-spine planes have their own ASNs (4200000001, 4200000002): only leaves see two AS_PATHs
        assert relaxed == (switch.role == "leaf"), switch.name


def _nxos_three_tier(tmp_path: Path) -> Path:
    doc = yaml.safe_load((THREE_TIER / "fabric.yml").read_text())
    for tier in ("leaves", "spines", "superspines"):
        doc[tier].update(platform="nxos", model="cisco-n9k-9364d-gx2a")
    return write(tmp_path, doc)


def test_vendor_renderings_print_the_relaxation_the_plan_decides(tmp_path: Path) -> None:
    """Every renderer prints the plan's intent, whatever the OS's default: the three-tier leaves
    relax on NX-OS (`bestpath as-path multipath-relax`) and on EOS (`bgp bestpath as-path
    multipath-relax`), nothing else does."""
    for path, platform_line in (
        (_nxos_three_tier(tmp_path), "\n  bestpath as-path multipath-relax\n"),
        (THREE_TIER, "\n   bgp bestpath as-path multipath-relax\n"),
    ):
        plan = _plan(path)
        configs = device_configs(plan, RenderContext())
        for device in plan.devices:
            text = configs[f"configs/{device.name}.cfg"]
            assert (platform_line in text) == (device.role == "leaf"), device.name


def test_ecmp_expectation_from_the_inventory() -> None:
    topology = lab_topology(_plan(EXAMPLES / "pod-roce-400g"))
    leaf = topology.switch("pod1-leaf01")
    assert expect.ecmp_width(expect.graph(topology), leaf, "pod1-leaf02") == 4 * 8  # spines x per_spine
    hurt = expect.graph(topology, expect.Faults(switches=frozenset({"pod1-spine01"})))
    assert expect.ecmp_width(hurt, leaf, "pod1-leaf02") == 3 * 8
    cable = next(c for c in topology.cables if c.a_node == leaf.name and c.kind == "leaf-spine")
    cut = expect.graph(topology, expect.Faults(cables=frozenset({(leaf.name, cable.a_kernel)})))
    assert expect.ecmp_width(cut, leaf, "pod1-leaf02") == 4 * 8 - 1
    assert expect.ecmp_width(cut, topology.switch("pod1-leaf02"), leaf.name) == 4 * 8  # spine01 still reaches leaf01


def test_three_tier_cross_pod_width_counts_both_planes() -> None:
    topology = lab_topology(_plan(THREE_TIER))
    leaf = topology.switch("lab3t-p1-leaf01")
    assert expect.ecmp_width(expect.graph(topology), leaf, "lab3t-p2-leaf01") == 2 * 2
    hurt = expect.graph(topology, expect.Faults(switches=frozenset({"lab3t-p2-spine01"})))
    assert expect.ecmp_width(hurt, leaf, "lab3t-p2-leaf01") == 2  # plane 1 lost its way into pod 2


def test_advertised_set_is_loopback_and_server_subnets() -> None:
    topology = lab_topology(_plan(EXAMPLES / "pod-roce-400g"))
    leaf = topology.switch("pod1-leaf01")
    want = expect.originated(topology, leaf)
    assert len(want) == 1 + 4 * 8  # loopback + one /31 per server NIC (4 servers x 8 NICs)
    assert all(p.endswith("/31") for p in want - {f"{leaf.loopback}/32"})


def test_ping_pairs_cover_every_leaf_and_cross_pods() -> None:
    topology = lab_topology(_plan(THREE_TIER))
    pairs = expect.ping_pairs(topology)
    assert {p[4] for p in pairs} == {s.name for s in topology.switches if s.role == "leaf"}
    assert all(p[0].split("-")[1] != p[2].split("-")[1] for p in pairs)  # servers of the other pod


@pytest.mark.parametrize("example", ["pod-roce-400g", "pod-mixed"])
def test_containerlab_export_is_valid_and_complete(example: str) -> None:
    topology = lab_topology(_plan(EXAMPLES / example))
    files = export_files(topology)
    document = yaml.safe_load(files[f"{topology.fabric}.clab.yml"])
    assert _errors(document) == []
    assert len(document["topology"]["links"]) == len(topology.cables)
    assert set(document["topology"]["nodes"]) == {s.name for s in topology.switches} | {s.name for s in topology.servers}
    for switch in topology.switches:
        assert files[f"frr/{switch.name}/frr.conf"] == frr_config(topology, switch)


def test_lab_verify_without_privileges_exits_2(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lab_cli, "has_net_admin", lambda: False)
    result = CliRunner().invoke(main, ["lab", "verify", str(EXAMPLES / "pod-roce-400g")])
    assert result.exit_code == 2
    assert "root or CAP_NET_ADMIN" in result.output


def test_lab_verify_of_infiniband_or_bad_input_exits_2() -> None:
    result = CliRunner().invoke(main, ["lab", "verify", str(EXAMPLES / "ib-hdr")])
    assert result.exit_code == 2 and "not an Ethernet" in result.output
    bad = CliRunner().invoke(main, ["lab", "up", str(ROOT / "tests" / "data" / "broken" / "duplicate-asn.yml")])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_export_cli_writes_the_topology(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["lab", "export", str(THREE_TIER), "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "lab3t.clab.yml").is_file() and (tmp_path / "frr" / "lab3t-ss1-01" / "frr.conf").is_file()


def test_report_json_names_the_failed_check() -> None:
    report = Report("f", 2, 1, 3)
    ok, bad = Check(1, "bgp", "BGP"), Check(3, "lldp", "LLDP")
    bad.fail("leaf1", "Ethernet1/1: sees spine2 Ethernet1/1, planned spine1 Ethernet1/1")
    report.checks += [ok, bad]
    data = json.loads(report.as_json())
    assert data["passed"] is False
    assert [c["name"] for c in data["checks"] if not c["passed"]] == ["lldp"]
    assert "FAIL (lldp)" in report.as_text()


@pytest.mark.parametrize(
    "module", ["fabricgen.plan.passes.aspath", "fabricgen.lab.topology", "fabricgen.lab.kernel", "fabricgen.lab.drill"]
)
def test_doctests(module: str) -> None:
    failed, attempted = doctest.testmod(importlib.import_module(module))
    assert attempted and not failed


def test_a_failed_ping_is_attributed_to_the_short_link_its_paths_cross() -> None:
    """lab verify's MTU check: a DF ping that may hash across the lowered link is that link's
    failure, never a second message; a ping whose paths avoid it stays its own failure. Paths
    from the inventory's shape: a leaf reaches another leaf of its pod over every spine."""
    from fabricgen.lab.verify import attribute_pings

    topology = lab_topology(_plan(EXAMPLES / "pod-roce-400g"))
    spine = topology.switch("pod1-spine01")
    port = next(p for p in spine.ports if p.peer_node == "pod1-leaf01")
    cable = next(c for c in expect.fabric_cables(topology) if c.z_node == spine.name and c.z_kernel == port.kernel)
    key = (cable.a_node, cable.a_kernel)
    pairs = expect.ping_pairs(topology)
    leaf_of = expect.leaf_of_address(topology)
    touching = [p for p in pairs if "pod1-leaf01" in (p[4], leaf_of[p[3]])]
    others = [p for p in pairs if p not in touching]
    assert len(touching) == 2 and others  # leaf01 sends one ping and receives one
    assert attribute_pings(topology, pairs, {key}) == dict.fromkeys(touching, key)
    # within a pod: every uplink of the source and every spine link down to the destination
    paths = expect.path_cables(topology, "pod1-leaf01", "pod1-leaf02")
    assert len(paths) == 2 * len([c for c in expect.fabric_cables(topology) if c.a_node == "pod1-leaf01"])


def test_cross_pod_paths_cross_the_super_spines() -> None:
    topology = lab_topology(_plan(THREE_TIER))
    leaves = [s for s in topology.switches if s.role == "leaf"]
    first = next(s for s in leaves if s.pod == 1)
    other = next(s for s in leaves if s.pod == 2)
    paths = expect.path_cables(topology, first.name, other.name)
    roles = {topology.switch(node).role for node, _ in paths}
    assert roles == {"leaf", "spine"}  # lower ends: leaf uplinks and spine uplinks (to super-spines)
    assert any(topology.switch(node).role == "spine" and topology.switch(node).pod == 2 for node, _ in paths)
