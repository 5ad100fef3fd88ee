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
from fabricgen.push import baseline, rollout
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
    login = Login(name, "netops", "ansible.netcommon.httpapi")
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
    return baseline.switch_problems(before, after, NEIGHBORS, done, ["Ethernet1"], [], [])


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
    # spine1's half of an ASN change lands first: the session to the leaf (which changes later in
    # this run) may drop; the same drop towards a far end that does not change is a regression.
    before = {"bgp": _eos_bgp({"10.0.0.0": ("Established", 5), "10.0.0.2": ("Established", 5)})}
    after = {"bgp": _eos_bgp({"10.0.0.0": ("Active", 0), "10.0.0.2": ("Established", 5)})}
    waiting = baseline.switch_problems(before, after, NEIGHBORS, (), [], [], [], ("spine1",))
    assert waiting == []
    assert baseline.switch_problems(before, after, NEIGHBORS, (), [], [], [], ("spine2",)) == [
        "bgp: 10.0.0.0 was Established before the change, now Active"
    ]
    hostvars = {
        "spine1": {"fabricgen_switch_changes": True, "fabricgen_switch_on_new_config": False},
        "spine2": {"fabricgen_switch_changes": True, "fabricgen_switch_on_new_config": True},
        "other": {"fabricgen_switch_changes": True},
    }
    assert baseline.peers_changing_later(NEIGHBORS, hostvars) == ["spine1"]


def test_an_optic_dead_before_the_change_does_not_block_but_a_new_failure_does() -> None:
    status = {"interfaceStatuses": {"Ethernet1": {"linkStatus": "notconnect"}, "Ethernet2": {"linkStatus": "connected"}}}
    assert _problems({"interfaces": status}, {"interfaces": status}) == []
    broken = {"interfaceStatuses": {"Ethernet1": {"linkStatus": "notconnect"}, "Ethernet2": {"linkStatus": "notconnect"}}}
    assert _problems({"interfaces": status}, {"interfaces": broken}) == ["interfaces: ethernet2 was up before the change, now notconnect"]


def test_lldp_must_match_the_cabling_plan() -> None:
    plan = [{"interface": "Ethernet1", "peer": "spine1", "peer_interface": "Ethernet9"}]
    good = {"lldpNeighbors": [{"port": "Ethernet1", "neighborDevice": "spine1.example.net", "neighborPort": "Ethernet9"}]}
    swapped = {"TABLE_nbor": {"ROW_nbor": {"l_port_id": "Eth1", "chassis_id": "spine2", "port_id": "Ethernet9"}}}
    assert baseline.switch_problems({}, {"lldp": good}, lldp_plan=plan) == []
    assert baseline.switch_problems({}, {"lldp": swapped}, lldp_plan=plan) == [
        "lldp: Ethernet1 sees spine2 ethernet9, the cabling plan says spine1 Ethernet9"
    ]
    assert baseline.switch_problems({"lldp": good}, {"lldp": {"lldpNeighbors": []}}, lldp_plan=plan) == [
        "lldp: Ethernet1 saw spine1 before the change, nothing now"
    ]


def test_watchdog_drops_and_errors_must_not_grow() -> None:
    before = {
        "watchdog": {"interfaces": {"Et1": {"txQueues": {"3": {"droppedPackets": 4}}}}},
        "errors": {"TABLE_interface": {"ROW_interface": {"interface": "Eth1/1", "eth-fcs-err": 0}}},
    }
    same = dict(before)
    assert baseline.switch_problems(before, same) == []
    grown = {
        "watchdog": {"interfaces": {"Et1": {"txQueues": {"3": {"droppedPackets": 9}}}}},
        "errors": {"TABLE_interface": {"ROW_interface": {"interface": "Eth1/1", "eth-fcs-err": 2}}},
    }
    assert baseline.switch_problems(before, grown) == [
        "errors: TABLE_interface/ROW_interface/eth-fcs-err grew from 0 to 2",
        "watchdog: interfaces/Et1/txQueues/3/droppedPackets grew from 4 to 9",
    ]


def test_peers_on_new_config_reads_only_the_planned_peers() -> None:
    hostvars = {"spine1": {"fabricgen_switch_on_new_config": True}, "spine2": {}, "other": {"fabricgen_switch_on_new_config": True}}
    assert baseline.peers_on_new_config(NEIGHBORS, hostvars) == ["spine1"]


# --- rollout and rescue --------------------------------------------------------------------------


def test_canaries_and_batches() -> None:
    groups = {"superspines": ["ss1", "ss2"], "spines": ["s1", "s2"], "leaves": ["l1", "l2", "l3"]}
    tiers = ["superspines", "spines", "leaves"]
    assert rollout.canaries(tiers, groups, ["ss2", "s1", "l3"]) == ["ss2", "s1", "l3"]
    assert rollout.rollout_order(tiers, groups, ["ss1", "ss2", "l2", "l3"], ["ss2", "l3"]) == ["ss1", "l2"]
    assert rollout.serial_steps(5000, (5, 25), 20) == [1, 20, 20]
    assert rollout.serial_steps(40, (5, 25), 20) == [1, 2, 10]


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
