"""What a push may touch (fabricgen/platforms/<os>/ownership.yml), the staged config, the lockout pre-flight,
drift, the baseline post-checks, the rollout order and the rescue's message: plain Python, with
realistic device lines of both platforms (tests/data/device-lines/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fabricgen.configs.devices import device_configs
from fabricgen.diffing.running import remediate
from fabricgen.pipeline import load_and_plan
from fabricgen.platforms.eos.config_text import bgp_identity as eos_bgp_identity
from fabricgen.platforms.nxos.config_text import bgp_identity as nxos_bgp_identity
from fabricgen.push import baseline, rollout
from fabricgen.push.bgp_identity import two_ended_sessions
from fabricgen.push.ownership import owned_text, redact
from fabricgen.push.rescue import Attempt, outcome
from fabricgen.push.stage import Login, drift, lockout_problems, staged_config
from fabricgen.render.context import RenderContext
from tests.conftest import EXAMPLES

DEVICE_LINES = Path(__file__).parent / "data" / "device-lines"
SECRETS = ("$6$", "$5$", "070C285F4D06485744", "Fq1r3tTacKey", "Publ1cR0Community", "1234567890abcdef", "FakeKeyMaterial")
# What a remediation must never touch: the sections an operator relies on to reach the switch.
NEVER = re.compile(r"(?m)^\s*(no )?(username|aaa|tacacs|management (ssh|api)|daemon|snmp|boot|copp|line |vlan 1$|feature nxapi|role )")


def _rendered(inventory: str, name: str) -> str:
    plan = load_and_plan(EXAMPLES / inventory).plan
    return device_configs(plan, RenderContext())[f"configs/{name}.cfg"]


def _as_displayed(rendered: str) -> str:
    """The rendered config as the switch shows it: no `no shutdown` (the default), `!` separators."""
    return "\n".join(line for line in rendered.splitlines() if line.strip() != "no shutdown") + "\n"


CASES = [("eos", "pod-roce-400g", "pod1-leaf01"), ("nxos", "pod-mixed", "pod2-leaf01")]
CONTROLLER = {"pod-roce-400g": "192.168.0.250", "pod-mixed": "192.168.20.250"}
"""Where the push comes from: an address in each inventory's management pool, which the
rendered control-plane ACL allows (tests/test_control_plane_acl.py judges other addresses)."""


@pytest.mark.parametrize(("platform", "inventory", "name"), CASES)
def test_remediation_of_a_matching_device_is_empty(platform: str, inventory: str, name: str) -> None:
    rendered = _rendered(inventory, name)
    running = (DEVICE_LINES / f"{platform}.cfg").read_text() + _as_displayed(rendered)
    assert remediate(platform, running, rendered) == ("", "")


@pytest.mark.parametrize(("platform", "inventory", "name"), CASES)
def test_remediation_touches_only_owned_sections_and_writes_no_secret(platform: str, inventory: str, name: str) -> None:
    rendered = _rendered(inventory, name)
    old = re.sub(r"(?m)^(\s+)description (.*)$", r"\1description OLD \2", rendered, count=1)
    assert old != rendered
    running = (DEVICE_LINES / f"{platform}.cfg").read_text() + _as_displayed(old)
    remediation, back = remediate(platform, running, rendered)
    assert "description OLD" in back and re.search(r"(?m)^\s+description (?!OLD)", remediation)
    for text in (remediation, back):
        assert not NEVER.search(text), text
        assert not any(secret in text for secret in SECRETS)
        assert not re.search(r"(?m)^\s*shutdown$", text)  # a `no shutdown` never turns into a shutdown


def test_a_config_from_another_generator_never_shuts_management() -> None:
    rendered = _rendered("pod-roce-400g", "pod1-leaf01")
    running = "interface Management1\n   description oob\n   vrf MGMT\n   ip address 192.168.0.99/24\n   no shutdown\n"
    remediation, _ = remediate("eos", running, rendered)
    assert "interface Management1" in remediation and not re.search(r"(?m)^\s*shutdown$", remediation)


@pytest.mark.parametrize("platform", ["eos", "nxos"])
def test_redact_removes_every_secret_of_the_device_lines(platform: str) -> None:
    text = redact(platform, (DEVICE_LINES / f"{platform}.cfg").read_text())
    assert not any(secret in text for secret in SECRETS), [line for line in text.splitlines() if any(s in line for s in SECRETS)]
    assert "<redacted>" in text


# Secret lines as the vendors print them (EOS User Manual and Cisco NX-OS configuration guides'
# examples, values made up): (line, the secret value, what must stay readable).
SECRET_LINES = {
    "eos": [
        ("ntp authentication-key 1 md5 7 0307530A0B0F2D4C", "0307530A0B0F2D4C", "ntp authentication-key 1 md5 7 "),
        ("ntp authentication-key 2 sha1 8a CfYq9Akh3w0XCPZ2", "CfYq9Akh3w0XCPZ2", "sha1 8a "),
        (
            "   exec /usr/bin/TerminAttr -cvaddr=apiserver.arista.io:443 -cvauth=key,Zk3yS3cr3tCv -cvvrf=MGMT -taillogs",
            "Zk3yS3cr3tCv",
            "-cvvrf=MGMT",
        ),
        ("tacacs-server host 10.1.1.1 vrf MGMT key 7 070C285F4D06485744", "070C285F4D06485744", "vrf MGMT key 7 "),
        ("   neighbor 10.0.0.1 password 7 AbCdEfGh1234==", "AbCdEfGh1234==", "neighbor 10.0.0.1 password 7 "),
        ("   ip ospf message-digest-key 1 md5 7 0511071B0A", "0511071B0A", "md5 7 "),
        ("enable password sha512 $6$salt$EnableHash", "$6$salt$EnableHash", "enable password sha512 "),
        ("snmp-server user ops ops-group v3 auth sha AuthP4ss priv aes PrivP4ss", "AuthP4ss", "priv aes "),
    ],
    "nxos": [
        ("ntp authentication-key 42 md5 aNiceNtpKey 7", "aNiceNtpKey", "ntp authentication-key 42 md5 "),
        ('tacacs-server key 7 "Fq1r3tTacKey"', "Fq1r3tTacKey", "tacacs-server key 7 "),
        ("    key-string 7 070C285F4D06", "070C285F4D06", "key-string 7 "),
        ("    password 3 5b4cd5ff7a1b", "5b4cd5ff7a1b", "password 3 "),
        ("username admin password 5 $5$AA$hashvalue role network-admin", "$5$AA$hashvalue", "role network-admin"),
    ],
}


@pytest.mark.parametrize(("platform", "line", "secret", "kept"), [(p, *entry) for p, entries in SECRET_LINES.items() for entry in entries])
def test_redact_follows_the_vendors_secret_grammar(platform: str, line: str, secret: str, kept: str) -> None:
    redacted = redact(platform, line + "\n")
    assert secret not in redacted and "<redacted>" in redacted and kept in redacted, redacted


def test_an_ntp_key_in_an_owned_section_is_no_drift_and_never_shown() -> None:
    ntp = "ntp authentication-key 1 md5 7 0307530A0B0F2D4C\nntp trusted-key 1\n"
    reference = redact("eos", owned_text("eos", ntp))
    assert "0307530A0B0F2D4C" not in reference
    assert drift("eos", ntp, reference) == []
    changed = drift("eos", ntp.replace("0307530A0B0F2D4C", "1111111111111111").replace("md5", "sha1"), reference)
    assert changed and not any("0307530A0B0F2D4C" in line or "1111111111111111" in line for line in changed)


@pytest.mark.parametrize(("platform", "inventory", "name"), CASES)
def test_staged_config_keeps_access_and_the_device_s_own_sections(platform: str, inventory: str, name: str) -> None:
    rendered = _rendered(inventory, name)
    device = (DEVICE_LINES / f"{platform}.cfg").read_text()
    hotfix = "ip access-list HOTFIX\n  10 deny ip any any\n"
    staged = staged_config(platform, rendered, device + hotfix)
    for line in device.splitlines():
        # every device line survives except defaults of sections fabricgen owns
        if line and not line.startswith(("!", " ", "version ")) and line not in ("spanning-tree mode mstp", "ip domain-lookup"):
            assert line in staged, line
    assert hotfix.splitlines()[0] in staged
    assert owned_text(platform, staged) == owned_text(platform, rendered)
    login = Login(name, "netops", "ansible.netcommon.httpapi", "", CONTROLLER[inventory])
    assert lockout_problems(platform, staged, device, login) == []


def test_overlay_wins_and_lockout_is_refused_with_the_device_name() -> None:
    rendered = _rendered("pod-mixed", "pod2-leaf01")
    device = (DEVICE_LINES / "nxos.cfg").read_text()
    login = Login("pod2-leaf01", "netops", "ansible.netcommon.httpapi")
    # Authoritative: rendered + overlay only. No user, no NX-API: refused, naming the device.
    bare = staged_config("nxos", rendered, device, "", keep_device_sections=False)
    problems = lockout_problems("nxos", bare, device, login)
    assert any("pod2-leaf01: the staged config has no 'username netops'" in p for p in problems)
    assert any("no 'feature nxapi'" in p for p in problems)
    overlay = "feature nxapi\nusername netops password 5 $5$NEW role network-operator\n"
    demoted = staged_config("nxos", rendered, device, overlay)
    assert "username netops password 5 $5$NEW role network-operator" in demoted
    assert "username netops password 5 $5$BBBBBB" not in demoted
    assert lockout_problems("nxos", demoted, device, login) == [
        "pod2-leaf01: the staged config changes the role of 'netops' from network-admin to network-operator"
    ]
    eos_login = Login("pod1-leaf01", "netops", "ansible.netcommon.httpapi")
    api_off = "username netops privilege 15 role network-admin secret x\nmanagement api http-commands\n   shutdown\n"
    assert any("has 'shutdown'" in p for p in lockout_problems("eos", api_off, api_off, eos_login))


def test_drift_reports_owned_changes_only() -> None:
    rendered = _rendered("pod-roce-400g", "pod1-leaf01")
    device = (DEVICE_LINES / "eos.cfg").read_text()
    assert drift("eos", device + _as_displayed(rendered), rendered) == []
    assert drift("eos", device.replace("idle-timeout 60", "idle-timeout 5") + rendered, rendered) == []
    changed = rendered.replace("router bgp 65101\n", "router bgp 65101\n   timers bgp 1 3\n")
    assert drift("eos", changed, rendered) == ["+ router bgp 65101 / timers bgp 1 3"]


# --- post-checks against a baseline -----------------------------------------------------------


def _eos_bgp(peers: dict[str, tuple[str, int]]) -> dict[str, object]:
    return {"vrfs": {"default": {"peers": {a: {"peerState": s, "prefixReceived": n} for a, (s, n) in peers.items()}}}}


NEIGHBORS = [{"address": "10.0.0.0", "peer": "spine1"}, {"address": "10.0.0.2", "peer": "spine2"}]


def _problems(before: dict[str, object], after: dict[str, object], done: tuple[str, ...] = ()) -> list[str]:
    return baseline.switch_problems(before, after, NEIGHBORS, done, ["Ethernet1"], [], [], platform="eos")


def test_day0_passes_while_the_far_end_is_not_on_the_new_config_yet() -> None:
    before = {"bgp": _eos_bgp({})}
    after = {"bgp": _eos_bgp({"10.0.0.0": ("Active", 0), "10.0.0.2": ("Active", 0)})}
    assert _problems(before, after) == []
    assert _problems(before, after, ("spine1",)) == ["bgp: 10.0.0.0 (spine1, already on the new config) is Active"]


def test_a_regression_or_an_empty_session_fails() -> None:
    before = {"bgp": _eos_bgp({"10.0.0.0": ("Established", 5)})}
    assert _problems(before, {"bgp": _eos_bgp({"10.0.0.0": ("Idle", 0)})}) == ["bgp: 10.0.0.0 was Established before the change, now Idle"]
    assert _problems(before, {"bgp": _eos_bgp({"10.0.0.0": ("Established", 0)})}) == [
        "bgp: 10.0.0.0 is Established with 0 prefixes received"
    ]


def test_a_two_ended_change_may_drop_a_session_only_to_a_far_end_that_has_yet_to_change() -> None:
    # spine1's half of an ASN change lands first: the session whose remote AS this switch's own
    # change alters may drop while spine1 has not landed; once spine1 is on the new config it is
    # required; the same drop on a session the change does not touch is a regression.
    before = {"bgp": _eos_bgp({"10.0.0.0": ("Established", 5), "10.0.0.2": ("Established", 5)})}
    after = {"bgp": _eos_bgp({"10.0.0.0": ("Active", 0), "10.0.0.2": ("Established", 5)})}
    assert baseline.switch_problems(before, after, NEIGHBORS, (), [], [], [], ["10.0.0.0"], platform="eos") == []
    assert baseline.switch_problems(before, after, NEIGHBORS, (), [], [], [], ["10.0.0.2"], platform="eos") == [
        "bgp: 10.0.0.0 was Established before the change, now Active"
    ]
    assert baseline.switch_problems(before, after, NEIGHBORS, ("spine1",), [], [], [], ["10.0.0.0"], platform="eos") == [
        "bgp: 10.0.0.0 was Established before the change, now Active"
    ]


def test_a_canary_fails_when_every_peer_is_in_the_change_but_no_session_identity_changes() -> None:
    # An ECN change touches every switch, so every leaf changes later in this run; the spine
    # canary's staged config keeps every neighbor's address and remote AS. With every session
    # Idle after the commit (router bgp gone on the device), the canary must fail.
    running = _rendered("pod-roce-400g", "pod1-spine01")
    staged = running.replace("bandwidth percent", "bandwidth percent", 1) + "qos profile ECN-CHANGED\n"
    assert two_ended_sessions(staged, running, "arista.eos.eos") == []
    neighbors = [{"address": a, "peer": f"leaf{i}"} for i, a in enumerate(eos_bgp_identity(running))]
    assert len(neighbors) > 8
    before = {"bgp": _eos_bgp({n["address"]: ("Established", 3) for n in neighbors})}
    after = {"bgp": _eos_bgp({n["address"]: ("Idle", 0) for n in neighbors})}
    problems = baseline.switch_problems(
        before, after, neighbors, (), [], [], [], two_ended_sessions(staged, running, "eos"), platform="eos"
    )
    assert len(problems) == len(neighbors) and all("was Established before the change, now Idle" in p for p in problems)
    # The same spine with every leaf's ASN changing in its staged config: those sessions may wait.
    renumbered = re.sub(r"remote-as 651(\d\d)", r"remote-as 652\1", running)
    assert two_ended_sessions(renumbered, running, "eos") == sorted(n["address"] for n in neighbors)
    assert (
        baseline.switch_problems(before, after, neighbors, (), [], [], [], two_ended_sessions(renumbered, running, "eos"), platform="eos")
        == []
    )


def test_two_ended_sessions_read_nxos_templates_and_removed_neighbors() -> None:
    running = _rendered("pod-mixed", "pod2-leaf01")
    spines = nxos_bgp_identity(running)
    assert spines and all(remote for _, remote in spines.values())
    assert two_ended_sessions(running + "policy-map type qos X\n", running, "cisco.nxos.nxos") == []
    first = sorted(spines)[0]
    renumbered = running.replace("remote-as ", "remote-as 4", 1)
    assert two_ended_sessions(renumbered, running, "nxos") == sorted(spines)  # the template's remote-as
    # A staged config that drops a neighbor (or all of `router bgp`) excuses nothing here.
    without = re.sub(rf"(?m)^  neighbor {re.escape(first)}\n(    .*\n)*", "", running)
    assert first not in nxos_bgp_identity(without) and two_ended_sessions(without, running, "nxos") == []


def test_a_session_the_plan_dropped_may_go_one_it_still_has_may_not() -> None:
    before = {"bgp": _eos_bgp({"10.0.0.0": ("Established", 5), "10.9.9.9": ("Established", 5)})}
    after = {"bgp": _eos_bgp({"10.0.0.0": ("Idle", 0)})}
    assert baseline.switch_problems(before, after, NEIGHBORS, platform="eos") == [
        "bgp: 10.0.0.0 was Established before the change, now Idle"
    ]


def test_an_optic_dead_before_the_change_does_not_block_but_a_new_failure_does() -> None:
    status = {"interfaceStatuses": {"Ethernet1": {"linkStatus": "notconnect"}, "Ethernet2": {"linkStatus": "connected"}}}
    assert _problems({"interfaces": status}, {"interfaces": status}) == []
    broken = {"interfaceStatuses": {"Ethernet1": {"linkStatus": "notconnect"}, "Ethernet2": {"linkStatus": "notconnect"}}}
    fabric = ["Ethernet1", "Ethernet2"]
    assert baseline.switch_problems({"interfaces": status}, {"interfaces": broken}, fabric_interfaces=fabric, platform="eos") == [
        "interfaces: Ethernet2 was up before the change, now notconnect"
    ]


def test_a_server_port_going_down_during_the_post_check_is_not_the_change_s_fault() -> None:
    # Ethernet5 is a host port (a GPU server rebooting); only fabric links count.
    before = {"interfaceStatuses": {"Ethernet1": {"linkStatus": "connected"}, "Ethernet5": {"linkStatus": "connected"}}}
    after = {"interfaceStatuses": {"Ethernet1": {"linkStatus": "connected"}, "Ethernet5": {"linkStatus": "notconnect"}}}
    assert baseline.switch_problems({"interfaces": before}, {"interfaces": after}, fabric_interfaces=["Ethernet1"], platform="eos") == []


@pytest.mark.parametrize(
    ("check", "output"),
    [
        ("bgp", {"result": [{"peers": {}}]}),
        ("interfaces", {}),
        ("lldp", {"neighbors": []}),
        ("pfc", {"TABLE_pfc": {}}),
        ("qos", {"TABLE_intf": {}}),
        ("ecn", {"queues": {}}),
        ("errors", {"counters": {"Ethernet1": {"fcsErrors": 0}}}),
        ("watchdog", "not json"),
    ],
)
def test_an_unrecognised_show_shape_fails_closed(check: str, output: object) -> None:
    problems = baseline.switch_problems({check: output}, {check: output}, platform="eos")
    assert len(problems) == 1 and problems[0].startswith(f"{check}: output not recognised"), problems


def test_lldp_must_match_the_cabling_plan() -> None:
    plan = [{"interface": "Ethernet1", "peer": "spine1", "peer_interface": "Ethernet9"}]
    good = {"lldpNeighbors": [{"port": "Ethernet1", "neighborDevice": "spine1.example.net", "neighborPort": "Ethernet9"}]}
    swapped = {"lldpNeighbors": [{"port": "Et1", "neighborDevice": "spine2", "neighborPort": "Ethernet9"}]}
    assert baseline.switch_problems({}, {"lldp": good}, lldp_plan=plan, platform="eos") == []
    assert baseline.switch_problems({}, {"lldp": swapped}, lldp_plan=plan, platform="eos") == [
        "lldp: Ethernet1 sees spine2 ethernet9, the cabling plan says spine1 Ethernet9"
    ]
    assert baseline.switch_problems({"lldp": good}, {"lldp": {"lldpNeighbors": []}}, lldp_plan=plan, platform="eos") == [
        "lldp: Ethernet1 saw spine1 before the change, nothing now"
    ]


def test_errors_are_judged_by_rate_and_any_watchdog_drop_fails() -> None:
    before = {
        "watchdog": {"interfaces": {"Et1": {"txQueues": {"3": {"droppedPackets": 4}}}}},
        "errors": {"interfaceErrorCounters": {"Ethernet1": {"fcsErrors": 0}}},
    }
    assert baseline.switch_problems(before, dict(before), platform="eos") == []
    ticked = {**before, "errors": {"interfaceErrorCounters": {"Ethernet1": {"fcsErrors": 2}}}}
    assert baseline.switch_problems(before, ticked, elapsed=60, platform="eos") == []  # 2 in 60 s: under 0.1/s
    grown = {
        "watchdog": {"interfaces": {"Et1": {"txQueues": {"3": {"droppedPackets": 5}}}}},
        "errors": {"interfaceErrorCounters": {"Ethernet1": {"fcsErrors": 900}}},
    }
    assert baseline.switch_problems(before, grown, elapsed=60, platform="eos") == [
        "errors: interfaceErrorCounters/Ethernet1/fcsErrors grew from 0 to 900 in 60 s (threshold 0.1/s)",
        "watchdog: interfaces/Et1/txQueues/3/droppedPackets grew from 4 to 5 in 60 s (threshold 0/s)",
    ]
    assert baseline.switch_problems(before, grown, elapsed=60, counter_rates={"errors": 20, "watchdog": 1}, platform="eos") == []
    nxos = {"errors": {"TABLE_interface": {"ROW_interface": {"interface": "Eth1/1", "eth-fcs-err": 0}}}}
    nxos_grown = {"errors": {"TABLE_interface": {"ROW_interface": {"interface": "Eth1/1", "eth-fcs-err": 900}}}}
    assert baseline.switch_problems(nxos, nxos_grown, elapsed=60, platform="cisco.nxos.nxos") == [
        "errors: TABLE_interface/ROW_interface/eth-fcs-err grew from 0 to 900 in 60 s (threshold 0.1/s)"
    ]


@pytest.mark.parametrize(("platform", "other"), [("arista.eos.eos", "nxos"), ("cisco.nxos.nxos", "eos")])
def test_the_host_s_driver_reads_the_output_and_another_platform_s_shape_fails(platform: str, other: str) -> None:
    """The post-check reads a host's outputs with its own platform's driver: a BGP summary in the
    other platform's shape is not understood and fails, where merging both parsers read it."""
    bgp = {
        "eos": {"vrfs": {"default": {"peers": {"10.0.0.0": {"peerState": "Established", "prefixReceived": 3}}}}},
        "nxos": {
            "TABLE_vrf": {
                "ROW_vrf": {"TABLE_neighbor": {"ROW_neighbor": {"neighborid": "10.0.0.0", "state": "Established", "prefixreceived": "3"}}}
            }
        },
    }
    own = bgp["nxos" if "nxos" in platform else "eos"]
    assert baseline.switch_problems({"bgp": own}, {"bgp": own}, NEIGHBORS[:1], platform=platform) == []
    problems = baseline.switch_problems({"bgp": bgp[other]}, {"bgp": bgp[other]}, NEIGHBORS[:1], platform=platform)
    assert len(problems) == 1 and problems[0].startswith("bgp: output not recognised"), problems


def test_peers_on_new_config_reads_only_the_planned_peers() -> None:
    hostvars = {"spine1": {"fabricgen_switch_on_new_config": True}, "spine2": {}, "other": {"fabricgen_switch_on_new_config": True}}
    assert baseline.peers_on_new_config(NEIGHBORS, hostvars) == ["spine1"]


# --- rollout and rescue --------------------------------------------------------------------------


def test_canaries_and_batches() -> None:
    groups = {"superspines": ["ss1", "ss2"], "spines": ["s1", "s2"], "leaves": ["l1", "l2", "l3"]}
    tiers = ["superspines", "spines", "leaves"]
    plan = rollout.rollout_plan(tiers, groups, ["ss1", "ss2", "s1", "l2", "l3"], {})
    assert [(i["host"], i["group"].rsplit("_", 1)[0]) for i in plan] == [
        ("ss1", "fabricgen_canaries"),
        ("ss2", "fabricgen_rollout"),
        ("s1", "fabricgen_canaries"),
        ("l2", "fabricgen_canaries"),
        ("l3", "fabricgen_rollout"),
    ]
    assert rollout.serial_steps(5000, (5, 25), 20) == [1, 20, 20]
    assert rollout.serial_steps(40, (5, 25), 20) == [1, 2, 10]


def test_a_canary_per_platform_and_model_within_a_tier() -> None:
    hostvars = {
        "l1": {"ansible_network_os": "arista.eos.eos", "fabricgen_model": "7060"},
        "l2": {"ansible_network_os": "arista.eos.eos", "fabricgen_model": "7060"},
        "l3": {"ansible_network_os": "cisco.nxos.nxos", "fabricgen_model": "9364"},
        "l4": {"ansible_network_os": "arista.eos.eos", "fabricgen_model": "7800"},
    }
    plan = rollout.rollout_plan(["leaves"], {"leaves": ["l1", "l2", "l3", "l4"]}, ["l1", "l2", "l3", "l4"], hostvars)
    assert [i["host"] for i in plan if i["group"] == "fabricgen_canaries_leaves"] == ["l1", "l3", "l4"]


def test_a_16_spine_pod_goes_one_spine_at_a_time_and_tiers_never_share_a_batch() -> None:
    # The plan of the old playbook put the 16 spines and 16 leaves of one rollout group in batches
    # of 1, 2, 8, 8, ... (14 spines in one batch). Now: one canary, then 15 batches of one spine;
    # super-spines one per plane at a time; every batch holds one tier only.
    spines = [f"pod1-spine{i:02d}" for i in range(1, 17)]
    leaves = [f"pod1-leaf{i:02d}" for i in range(1, 17)]
    supers = [f"ss-p{p}-{i}" for p in (1, 2) for i in (1, 2, 3)]
    hostvars = {h: {"fabricgen_redundancy_group": "pod1", "fabricgen_model": "m"} for h in spines + leaves}
    hostvars |= {h: {"fabricgen_redundancy_group": h.split("-")[1], "fabricgen_model": "m"} for h in supers}
    groups = {"superspines": supers, "spines": spines, "leaves": leaves}
    plan = rollout.rollout_plan(["superspines", "spines", "leaves"], groups, supers + spines + leaves, hostvars)
    rest = {tier: [i["host"] for i in plan if i["group"] == f"fabricgen_rollout_{tier}"] for tier in groups}
    assert rollout.batch_sizes(rest["spines"], hostvars, 1, (5, 25), 20) == [1] * 15
    assert rest["superspines"] == ["ss-p1-2", "ss-p2-1", "ss-p1-3", "ss-p2-2", "ss-p2-3"]  # planes interleaved
    sizes = rollout.batch_sizes(rest["superspines"], hostvars, 1, (5, 25), 20)
    assert sizes == [1, 1, 2, 1]
    start = 0
    for size in sizes:
        batch = rest["superspines"][start : start + size]
        assert len({hostvars[h]["fabricgen_redundancy_group"] for h in batch}) == len(batch)  # one per plane
        start += size
    assert sum(rollout.batch_sizes(rest["leaves"], hostvars, 0, (5, 25), 20)) == 15


def test_rollback_restores_exactly_the_switches_with_a_file_in_reverse_rollout_order() -> None:
    groups = {"superspines": ["ss1"], "spines": ["s1", "s2"], "leaves": ["l1", "l2"]}
    tiers = ["superspines", "spines", "leaves"]
    every = ["ss1", "s1", "s2", "l1", "l2"]
    assert rollout.restore_order(tiers, groups, every, ["/b/pod1/CHG1/l1.cfg"]) == ["l1"]
    files = ["/b/CHG1/s1.cfg", "/b/CHG1/ss1.cfg", "/b/CHG1/l2.cfg", "/b/CHG1/l1.cfg", "/b/CHG1/other-fabric-host.cfg"]
    assert rollout.restore_order(tiers, groups, every, files) == ["l2", "l1", "s1", "ss1"]
    assert rollout.restore_order(tiers, groups, ["s1", "l1"], files) == ["l1", "s1"]  # --limit narrows


def test_commit_timer_must_outlast_the_worst_batch() -> None:
    assert rollout.commit_window_problems("00:10:00", 30, 10, 20, 20) == []
    assert rollout.commit_window_problems(600, 30, 10, 41, 20) != []


def test_rescue_says_what_the_switch_will_do() -> None:
    before = "hostname a\ninterface Ethernet1\n   mtu 9214\n"
    after_change = before.replace("9214", "1500")
    committed = Attempt("leaf1", "eos", "fg_1", True, "00:10:00", "2026-12-01 10:00:00", True, "post-check")
    assert "rolled back now and verified" in outcome(committed, before, before)
    timer = outcome(committed, before, after_change)
    assert "rolls back by itself when its commit timer expires, at 2026-12-01 10:10:00 UTC" in timer
    assert "could not be read back" in outcome(committed, before, None)
    staging = Attempt("leaf1", "eos", "fg_1", False, "00:10:00", "", True, "stage")
    assert "failed before any commit" in outcome(staging, before, before)
    pending = {"sessions": {"fg_1": {"state": "pendingCommitTimer"}}}
    assert "rolled back now" not in outcome(committed, before, before, pending)


# --- management reachability ---------------------------------------------------------------------

EOS_ZTP = (
    "username netops privilege 15 role network-admin secret sha512 $6$x\n"
    "interface Management1\n   ip address 192.168.0.10/24\n"
    "ip route 0.0.0.0/0 192.168.0.1\n"
    "management api http-commands\n   no shutdown\n"
)


def _mgmt(rendered: str, platform: str) -> tuple[str, str]:
    """The rendered management interface section and its address."""
    name = "Management1" if platform == "eos" else "mgmt0"
    section = re.search(rf"(?m)^interface {name}\n(?:[ \t]+.*\n)*", rendered)
    assert section
    address = re.search(r"ip address (\S+)/", section.group(0))
    assert address
    return section.group(0), address.group(1)


def test_eapi_enabled_only_in_the_default_vrf_is_cut_when_management1_moves_to_mgmt() -> None:
    # After ZTP: Management1 and eAPI in the default VRF. The rendered file puts Management1 in
    # VRF MGMT (owned); the API section is kept from the device: eAPI would not listen there.
    rendered = _rendered("pod-roce-400g", "pod1-leaf01")
    _, address = _mgmt(rendered, "eos")
    running = EOS_ZTP.replace("192.168.0.10", address)
    login = Login("pod1-leaf01", "netops", "ansible.netcommon.httpapi", address, CONTROLLER["pod-roce-400g"])
    problems = lockout_problems("eos", staged_config("eos", rendered, running), running, login)
    assert problems == [
        "pod1-leaf01: the API is not enabled in VRF MGMT, where the staged config puts Management1: "
        "ansible.netcommon.httpapi would be cut at commit (enable it there in the management overlay)"
    ]
    moved = lockout_problems(
        "eos",
        staged_config("eos", rendered, EOS_ZTP),
        EOS_ZTP,
        Login("l", "netops", "ansible.netcommon.httpapi", "192.168.0.10", CONTROLLER["pod-roce-400g"]),
    )
    assert (
        f"l: the staged config moves Management1 from 192.168.0.10 (ansible_host) to {address}: the controller would lose the switch"
        in moved
    )


def test_the_device_lines_keep_their_management_path_and_a_dropped_default_route_is_refused() -> None:
    # eAPI and SSH in VRF MGMT on the device (tests/data/device-lines/eos.cfg), Management1 in MGMT
    # with its default route, as the plan has them: nothing is cut.
    for platform, inventory, name in CASES:
        rendered = _rendered(inventory, name)
        section, address = _mgmt(rendered, platform)
        route = re.search(
            r"(?m)^ip route vrf MGMT 0\.0\.0\.0/0 .*\n" if platform == "eos" else r"(?m)^vrf context management\n(?:[ \t]+.*\n)*", rendered
        )
        assert route and "0.0.0.0/0" in route.group(0), platform
        device = (DEVICE_LINES / f"{platform}.cfg").read_text() + section + route.group(0)
        login = Login(name, "netops", "ansible.netcommon.httpapi", address, CONTROLLER[inventory])
        assert lockout_problems(platform, staged_config(platform, rendered, device), device, login) == [], platform
        without = re.sub(r"(?m)^\s*ip route (vrf MGMT )?0\.0\.0\.0/0 .*\n", "", rendered)
        problems = lockout_problems(platform, staged_config(platform, without, device), device, login)
        assert any("drops the default route of management VRF" in p for p in problems), (platform, problems)


def test_a_tacacs_only_account_is_judged_by_the_aaa_that_authenticates_it() -> None:
    # `tacuser` exists only on the TACACS+ server: no local username line. Kept AAA: no problem
    # (the old check refused it, so operators skipped the check); dropped AAA: refused.
    rendered = _rendered("pod-roce-400g", "pod1-leaf01")
    device = (DEVICE_LINES / "eos.cfg").read_text()
    login = Login("pod1-leaf01", "tacuser", "ansible.netcommon.httpapi", "", CONTROLLER["pod-roce-400g"])
    assert lockout_problems("eos", staged_config("eos", rendered, device), device, login) == []
    bare = staged_config("eos", rendered, device, "management api http-commands\n   no shutdown\n", keep_device_sections=False)
    problems = lockout_problems("eos", bare, device, login)
    assert (
        "pod1-leaf01: 'tacuser' has no local username and logs in through AAA; the staged config drops 'aaa authentication login default'"
        in " ".join(problems)
    )


# --- BFD ----------------------------------------------------------------------------------------


def _eos_bfd(peers: dict[str, str]) -> dict[str, object]:
    """`show bfd peers | json` in the shape of ANTA's VerifyBFDPeersHealth unit data."""
    return {"vrfs": {"default": {"ipv4Neighbors": {a: {"peerStats": {"": {"status": s}}} for a, s in peers.items()}, "ipv6Neighbors": {}}}}


def test_a_bfd_peer_up_before_stays_up_and_one_to_a_far_end_on_the_new_config_must_be_up() -> None:
    before = {"bfd": _eos_bfd({"10.0.0.0": "up", "10.0.0.2": "up"})}
    assert baseline.switch_problems(before, {"bfd": _eos_bfd({"10.0.0.0": "up", "10.0.0.2": "up"})}, NEIGHBORS, platform="eos") == []
    assert baseline.switch_problems(before, {"bfd": _eos_bfd({"10.0.0.0": "down"})}, NEIGHBORS, platform="eos") == [
        "bfd: 10.0.0.0 was up before the change, now down",
        "bfd: 10.0.0.2 was up before the change, now gone",
    ]
    # a two-ended change waiting for its far end excuses the same sessions BGP excuses
    assert (
        baseline.switch_problems(
            before, {"bfd": _eos_bfd({"10.0.0.0": "down", "10.0.0.2": "up"})}, NEIGHBORS, (), [], [], [], ["10.0.0.0"], platform="eos"
        )
        == []
    )
    day0 = {"bfd": _eos_bfd({"10.0.0.0": "down"})}
    assert baseline.switch_problems({"bfd": {}}, day0, NEIGHBORS, platform="eos") == []
    assert baseline.switch_problems({"bfd": {}}, day0, NEIGHBORS, ("spine1",), platform="eos") == [
        "bfd: 10.0.0.0 (spine1, already on the new config) is down"
    ]
    nxos_up = {"TABLE_bfdNeighbor": {"ROW_bfdNeighbor": {"dest_ip_addr": "10.0.0.0", "local_state": "Up"}}}
    nxos = {"TABLE_bfdNeighbor": {"ROW_bfdNeighbor": {"dest_ip_addr": "10.0.0.0", "local_state": "Down"}}}
    assert baseline.switch_problems({"bfd": nxos_up}, {"bfd": nxos}, NEIGHBORS, platform="nxos") == [
        "bfd: 10.0.0.0 was up before the change, now down"
    ]
    assert baseline.switch_problems({"bfd": {}}, {"bfd": {"peers": []}}, NEIGHBORS, platform="eos")[0].startswith(
        "bfd: output not recognised"
    )


# --- QoS in effect against the plan ------------------------------------------------------------

# What pod-mixed's inventory says (roce: no_drop_priority 3, ecn 950KB-3000KB): 1 KB = 1000 bytes.
QOS_PLAN = {"policy": "QOS_CLASSIFY", "pfc_priorities": [3], "ecn": [{"traffic_class": 3, "min_bytes": 950000, "max_bytes": 3000000}]}


def _nxos_qos(policy: str = "QOS_CLASSIFY", bitmap: str = "8", low: str = "950", unit: str = "kbytes") -> dict[str, object]:
    """The three NX-OS answers (invented shapes, tests/data/show/README.md) for one port, Eth1/1."""
    queues = [{"eq-qosgrp": "3", "eq-wred-ecn": "enabled", "eq-wred-min-thresh": low, "eq-wred-max-thresh": "3000", "eq-wred-unit": unit}]
    return {
        "pfc": {"TABLE_entry": {"ROW_entry": {"intf-name": "Ethernet1/1", "mode": "On", "oper": "On", "vl-bmap": bitmap}}},
        "qos": {"TABLE_intf": {"ROW_intf": [{"intf-name": "Ethernet1/1", "in-qos-policy": policy}]}},
        "ecn": {
            "TABLE_queuing_interface": {
                "ROW_queuing_interface": {"if_name_str": "Eth1/1", "TABLE_qosgrp_egress": {"ROW_qosgrp_egress": queues}}
            }
        },
    }


def _nxos_qos_problems(outputs: dict[str, object]) -> list[str]:
    return baseline.switch_problems(outputs, outputs, roce_interfaces=["Ethernet1/1"], platform="nxos", qos_plan=QOS_PLAN)


def test_the_qos_in_effect_passes_only_as_the_plan_says_it() -> None:
    assert _nxos_qos_problems(_nxos_qos()) == []
    assert _nxos_qos_problems(_nxos_qos(policy="")) == ["qos: Ethernet1/1 runs policy (none), the plan says QOS_CLASSIFY"]
    assert _nxos_qos_problems(_nxos_qos(bitmap="18")) == ["pfc: Ethernet1/1 pauses priorities 3,4, the plan says 3 only"]
    assert _nxos_qos_problems(_nxos_qos(bitmap="0")) == ["pfc: Ethernet1/1 pauses priorities none, the plan says 3 only"]
    assert _nxos_qos_problems(_nxos_qos(low="150")) == [
        "ecn: Ethernet1/1 traffic class 3 marks ECN from 150000 to 3000000 bytes, the plan says 950000 to 3000000 bytes"
    ]
    assert _nxos_qos_problems(_nxos_qos(unit="cells"))[0].startswith("ecn: Ethernet1/1 traffic class 3 marks ECN from -1")
    # a port the output does not list fails; no plan (rollback.yml) expects nothing
    assert baseline.switch_problems({}, _nxos_qos(), roce_interfaces=["Ethernet1/2"], platform="nxos", qos_plan=QOS_PLAN) == [
        "pfc: Ethernet1/2 (missing)",
        "qos: Ethernet1/2 (missing)",
        "ecn: Ethernet1/2 (missing)",
    ]
    assert baseline.switch_problems({}, _nxos_qos(policy="", bitmap="18"), roce_interfaces=["Ethernet1/1"], platform="nxos") == []


def test_eos_reads_the_profile_pfc_priorities_and_ecn_queues_of_each_port() -> None:
    plan = {**QOS_PLAN, "policy": "ROCE-LOSSLESS"}
    queue = {"ecnEnabled": True, "minThreshold": 950, "maxThreshold": 3000, "unit": "kbytes"}
    good = {
        "pfc": {"interfaceStatuses": {"Ethernet1/1": {"enabled": True, "priorities": [3]}}},
        "qos": {"interfaces": {"Ethernet1/1": {"serviceProfile": "ROCE-LOSSLESS"}}},
        "ecn": {"interfaces": {"Ethernet1/1": {"txQueues": {"3": queue}}}},
    }
    assert baseline.switch_problems(good, good, roce_interfaces=["Et1/1"], platform="eos", qos_plan=plan) == []
    extra = {**good, "ecn": {"interfaces": {"Ethernet1/1": {"txQueues": {"3": queue, "1": queue}}}}}
    assert baseline.switch_problems(good, extra, roce_interfaces=["Et1/1"], platform="eos", qos_plan=plan) == [
        "ecn: Et1/1 traffic class 1 marks ECN from 950000 to 3000000 bytes, the plan says no ECN there"
    ]
    none = {**good, "ecn": {"interfaces": {"Ethernet1/1": {"txQueues": {}}}}}
    assert baseline.switch_problems(good, none, roce_interfaces=["Et1/1"], platform="eos", qos_plan=plan) == [
        "ecn: Et1/1 traffic class 3 marks no ECN, the plan says 950000 to 3000000 bytes"
    ]


def test_the_host_vars_carry_the_inventory_s_qos_per_platform() -> None:
    from fabricgen.configs.ansible import qos_plan

    plan = load_and_plan(EXAMPLES / "pod-mixed").plan
    assert qos_plan(plan.roce, "nxos") == QOS_PLAN
    assert qos_plan(plan.roce, "eos") == {**QOS_PLAN, "policy": "ROCE-LOSSLESS"}


# --- batches bounded by redundancy and capacity ------------------------------------------------


def _hostvars(tmp_path: Path, inventory: str) -> dict[str, dict[str, object]]:
    """The rendered hosts.yml of `inventory` (YAML text), as Ansible's hostvars: host -> its
    variables (all.vars included)."""
    import yaml

    from fabricgen.configs.ansible import ansible_inventory

    (tmp_path / "fabric.yml").write_text(inventory)
    document = yaml.safe_load(ansible_inventory(load_and_plan(tmp_path).plan, RenderContext())["ansible/hosts.yml"])["all"]
    hostvars: dict[str, dict[str, object]] = {}
    for group in document["children"].values():
        for host, variables in ((group or {}).get("hosts") or {}).items():
            hostvars[host] = {**document["vars"], **variables}
    return hostvars


def _batches(hosts: list[str], sizes: list[int]) -> list[list[str]]:
    out, start = [], 0
    for size in sizes:
        out.append(hosts[start : start + size])
        start += size
    return out


def test_a_rail_fabric_never_takes_two_leaves_of_one_scalable_unit_at_once(tmp_path: Path) -> None:
    # pod-rail: 2 scalable units x 8 rails; each server has a NIC on every rail leaf of its unit
    # (leaves 1-8 unit 1, 9-16 unit 2). Before: batches of up to 4 leaves of one unit.
    hostvars = _hostvars(tmp_path, (EXAMPLES / "pod-rail" / "fabric.yml").read_text())
    leaves = [f"pr1-leaf{i:02d}" for i in range(1, 17)]
    unit = {leaf: 1 if index < 8 else 2 for index, leaf in enumerate(leaves)}
    rest = rollout.rollout_order(leaves, leaves, ["pr1-leaf01"], hostvars)
    batches = _batches(rest, rollout.batch_sizes(rest, hostvars, 0, (5, 25), 20))
    assert sorted(leaf for batch in batches for leaf in batch) == leaves[1:]
    assert all(len({unit[leaf] for leaf in batch}) == len(batch) for batch in batches), batches
    assert max(len(batch) for batch in batches) == 2  # one leaf of each unit at once


SIXTEEN_SPINES = """\
fabric: {name: p16, description: a 16-spine pod, transport: roce}
spines: {count: 16, model: arista-7060x6-64pe, platform: eos, name: "p16-spine{index:02d}"}
leaves: {count: 4, model: arista-7060x6-64pe, platform: eos, name: "p16-leaf{index:02d}"}
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 8, ports_per_server: 2, speed: 400G}
addressing: {loopbacks: 10.20.0.0/24, fabric: 10.21.0.0/22, servers: 10.22.0.0/16, management: 192.168.20.0/24}
bgp: {spine_asn: 65000, leaf_asn: 65101}
oversubscription: {max_ratio: "%s", during_change: true}
"""


def test_a_16_spine_pod_holds_its_max_ratio_whatever_fabricgen_at_once_allows(tmp_path: Path) -> None:
    # Each leaf: 16 x 400G up (one per spine), 8 servers x 2 x 400G = 6400 Gbps down. At
    # max_ratio 1.1 a leaf needs 6400 / 1.1 = 5818 Gbps: 15 spines (6000) suffice, 14 (5600)
    # do not, so even without a per-pod limit (fabricgen_at_once 0) spines go one at a time.
    hostvars = _hostvars(tmp_path, SIXTEEN_SPINES % "1.1")
    spines = [f"p16-spine{i:02d}" for i in range(2, 17)]
    assert rollout.batch_sizes(spines, {}, 0, (5, 25), 20) == [1, 1, 4, 4, 4, 1]  # without the figures
    assert rollout.batch_sizes(spines, hostvars, 0, (5, 25), 20) == [1] * 15
    # At 1.5 a leaf needs 4267 Gbps: 5 spines may go at once (4400 left), 6 may not (4000).
    (tmp_path / "wide").mkdir()
    wide = _hostvars(tmp_path / "wide", SIXTEEN_SPINES % "1.5")
    assert max(rollout.batch_sizes(spines, wide, 0, (5, 50), 20)) == 5
    assert rollout.capacity_problems(spines, wide) == []


def test_a_max_ratio_that_forbids_two_spines_splits_the_batch_and_one_that_forbids_one_refuses(tmp_path: Path) -> None:
    # 4 spines, 2 x 400G to each: a leaf has 3200 Gbps up and 3200 down (8 servers x 400G).
    # max_ratio 1.4: it needs 2286; one spine down leaves 2400, two leave 1600.
    four = (
        SIXTEEN_SPINES.replace("count: 16", "count: 4")
        .replace("per_spine: 1", "per_spine: 2")
        .replace("ports_per_server: 2", "ports_per_server: 1")
    )
    hostvars = _hostvars(tmp_path, four % "1.4")
    spines = [f"p16-spine{i:02d}" for i in range(1, 5)]
    assert rollout.batch_sizes(spines, hostvars, 0, (50,), 20) == [1, 1, 1, 1]
    assert rollout.capacity_breaks(spines[:2], hostvars)[0] == (
        "p16-leaf01 keeps 1600 of 3200 Gbps uplink, below its 3200 Gbps downlink / max_ratio 1.4 = 2286 Gbps"
    )
    # 1:1 (non-blocking) held during the change: no spine can go down; the pre-flight names each.
    (tmp_path / "strict").mkdir()
    strict = _hostvars(tmp_path / "strict", four % "1:1")
    problems = rollout.capacity_problems(spines, strict)
    assert len(problems) == 4 and problems[0].startswith("p16-spine01 cannot go down in this window: p16-leaf01 keeps 2400 of 3200")
    # without during_change nothing is bounded nor refused
    (tmp_path / "off").mkdir()
    off = _hostvars(tmp_path / "off", four.replace("during_change: true", "during_change: false") % "1:1")
    assert rollout.capacity_problems(spines, off) == [] and rollout.batch_sizes(spines, off, 0, (50,), 20) == [1, 2, 1]
