"""drain.yml's parts in Python (fabricgen/push/drain.py, push/rollout.py `drain_problems`): the
drain as a change of the owned config, the wait read from the neighbours' routing tables in each
vendor's `show ip route | json` shape, and the pre-flight refusal. Expected lines come from the
platforms' documented drain commands and the rendered inventory of pod-roce-400g."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fabricgen.push import rollout
from fabricgen.push.drain import drained_config, route_problems, routes_through
from tests.conftest import EXAMPLES
from tests.test_push import _hostvars

HV: dict[str, Any] = {
    "s1": {"ansible_network_os": "arista.eos.eos", "fabricgen_bgp_neighbors": [{"address": "10.1.0.1", "peer": "l1"}]},
    "l1": {
        "ansible_network_os": "arista.eos.eos",
        "fabricgen_deploy_role": "eos_deploy",
        "fabricgen_bgp_neighbors": [
            {"address": "10.1.0.0", "peer": "s1"},
            {"address": "10.1.0.2", "peer": "s1"},
            {"address": "10.1.0.4", "peer": "s2"},
        ],
    },
}


def _eos(routes: dict[str, list[str]]) -> dict[str, Any]:
    """`show ip route | json` of EOS: vrfs.default.routes.<prefix>.vias[].nexthopAddr."""
    table = {p: {"routeType": "eBGP", "vias": [{"nexthopAddr": h, "interface": "Ethernet1/1"} for h in hops]} for p, hops in routes.items()}
    table["10.1.0.0/31"] = {"routeType": "connected", "vias": [{"interface": "Ethernet1/1"}]}
    return {"vrfs": {"default": {"routes": table}}}


def _nxos(routes: dict[str, list[str]]) -> dict[str, Any]:
    """NX-OS: TABLE_vrf.ROW_vrf[].TABLE_addrf.ROW_addrf.TABLE_prefix.ROW_prefix[] (one path a dict)."""
    rows = [
        {
            "ipprefix": p,
            "ucast-nhops": str(len(h)),
            "attached": "false",
            "TABLE_path": {"ROW_path": [{"ipnexthop": x} for x in h] if len(h) > 1 else {"ipnexthop": h[0]}},
        }
        for p, h in routes.items()
    ]
    rows.append(
        {"ipprefix": "10.1.0.0/31", "attached": "true", "TABLE_path": {"ROW_path": {"ipnexthop": "10.1.0.1", "clientname": "direct"}}}
    )
    return {
        "TABLE_vrf": {
            "ROW_vrf": [{"vrf-name-out": "default", "TABLE_addrf": {"ROW_addrf": {"addrf": "ipv4", "TABLE_prefix": {"ROW_prefix": rows}}}}]
        }
    }


BEFORE = {"10.0.0.1/32": ["10.1.0.0", "10.1.0.2"], "10.22.1.0/24": ["10.1.0.0", "10.1.0.2", "10.1.0.4"]}
DRAINED = {"10.0.0.1/32": ["10.1.0.0", "10.1.0.2"], "10.22.1.0/24": ["10.1.0.4"]}


def test_drained_when_no_route_load_shares_over_the_switch_in_both_vendor_shapes() -> None:
    for platform, shape in (("arista.eos.eos", _eos), ("cisco.nxos.nxos", _nxos)):
        hv = {**HV, "l1": {**HV["l1"], "ansible_network_os": platform}}
        assert route_problems(shape(BEFORE), "l1", "s1", hv, "drained") == ["l1 still load-shares 1 route(s) over s1: 10.22.1.0/24"], (
            platform
        )
        assert route_problems(shape(DRAINED), "l1", "s1", hv, "drained") == [], platform  # its own loopback stays on it
        assert routes_through(shape(BEFORE), "l1", "s1", hv) == 2


def test_undrained_needs_every_planned_link_and_the_routes_of_before() -> None:
    assert route_problems(_eos(DRAINED), "l1", "s1", HV, "undrained", before=2) == ["l1 routes 1 prefix(es) through s1, 2 before the drain"]
    half = {**BEFORE, "10.22.1.0/24": ["10.1.0.0", "10.1.0.4"]}
    assert route_problems(_eos(half), "l1", "s1", HV, "undrained", before=2) == [
        "l1 uses fewer than the 2 planned links to s1 for 1 route(s): 10.22.1.0/24"
    ]
    assert route_problems(_eos(BEFORE), "l1", "s1", HV, "undrained", before=2) == []


def test_the_wait_fails_closed_on_an_output_it_does_not_know_or_an_empty_table() -> None:
    assert route_problems({"routes": {}}, "l1", "s1", HV, "drained")[0].startswith("l1: routes: output not recognised")
    assert route_problems(_eos({}), "l1", "s1", HV, "drained") == [
        "l1: no route through any BGP neighbour: the routing table was not understood"
    ]
    assert routes_through({"nothing": 1}, "l1", "s1", HV) == -1


def test_the_drain_is_the_platforms_own_lines_added_and_removed_in_the_rendered_places(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from fabricgen.cli import main

    for drained in ("", "--drain"):
        args = ["render", str(EXAMPLES / "pod-roce-400g"), "-o", str(tmp_path / (drained or "plain"))]
        assert CliRunner().invoke(main, args + ([drained, "pod1-spine01"] if drained else [])).exit_code == 0
    plain = (tmp_path / "plain" / "configs" / "pod1-spine01.cfg").read_text()
    rendered = (tmp_path / "--drain" / "configs" / "pod1-spine01.cfg").read_text()
    from fabricgen.platforms.sections import join_sections, split_sections

    assert drained_config(plain, "arista.eos.eos", True) == join_sections(split_sections(rendered))  # what the plan renders
    assert drained_config(rendered, "eos", False) == join_sections(split_sections(plain))
    assert "maintenance\n   unit System\n      quiesce\n" in drained_config(plain, "eos", True)  # EOS User Manual, Maintenance Mode


def test_drain_yml_refuses_two_of_four_spines_naming_the_second_with_the_rule_validate_uses(tmp_path: Path) -> None:
    hostvars = _hostvars(tmp_path, (EXAMPLES / "pod-roce-400g" / "fabric.yml").read_text())
    assert rollout.drain_problems(["pod1-spine01"], hostvars) == []
    problems = rollout.drain_problems(["pod1-spine01", "pod1-spine02"], hostvars)
    assert len(problems) == 1
    assert problems[0].startswith(
        "draining pod1-spine01, pod1-spine02: pod1-spine02 would break it: pod1-leaf01 at 2:1 (12800G down, 6400G of 12800G up),"
        " above oversubscription.during_change 1.5:1"
    )


def test_the_verdict_names_every_neighbour_that_did_not_answer_or_still_shares() -> None:
    from fabricgen.push.drain import through_each, verdict

    hv = {
        **HV,
        "s1": {**HV["s1"], "fabricgen_bgp_neighbors": [{"address": "10.1.0.1", "peer": "l1"}, {"address": "10.1.0.9", "peer": "l2"}]},
    }
    hv["l2"] = {**HV["l1"], "fabricgen_bgp_neighbors": [{"address": "10.1.0.8", "peer": "s1"}, {"address": "10.1.0.10", "peer": "s2"}]}
    assert through_each({"l1": _eos(BEFORE), "l2": None}, "s1", hv) == {"l1": 2}
    assert verdict({"l1": _eos(BEFORE)}, "s1", hv, "drained", {}) == [
        "l1 still load-shares 1 route(s) over s1: 10.22.1.0/24",
        "l2: no answer to show ip route",
    ]
