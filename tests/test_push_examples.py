"""The push's examples with a real platform's tables, moved out of the generic modules'
docstrings (fabricgen/push/ownership.py, stage.py): those modules name no platform
(tests/test_platform_names.py), so what each platform's ownership.yml makes of a config is
shown here, with the values the docstrings used to print. And the deploy's commit-window check,
which reads each platform's window from its group variables."""

from __future__ import annotations

import pytest

from fabricgen.platforms import ansible_group_vars, drivers
from fabricgen.push.drain import drained_config, is_drained
from fabricgen.push.filters import commit_windows_problems
from fabricgen.push.ownership import owned_text, ownership, redact
from fabricgen.push.stage import Login, drift, lockout_problems, staged_config


def test_ownership_is_found_by_platform_name_or_ansible_network_os() -> None:
    assert ownership("arista.eos.eos").platform == "eos"
    assert ownership("cisco.nxos.nxos").platform == "nxos"


def test_owned_text_keeps_owned_sections_without_defaults() -> None:
    text = "username a secret x\nhostname s1\ninterface Ethernet1\n   no shutdown\n   mtu 9214\n"
    assert owned_text("eos", text) == "hostname s1\ninterface Ethernet1\n   mtu 9214\n"


def test_redact_hides_hashes_and_keys() -> None:
    text = "username a privilege 15 secret sha512 $6$abc\ntacacs-server host 10.0.0.1 key 7 0A1B\n"
    assert redact("eos", text) == "username a privilege 15 secret sha512 <redacted>\ntacacs-server host 10.0.0.1 key 7 <redacted>\n"


def test_staged_config_takes_rendered_owned_overlay_and_the_device_hotfix() -> None:
    staged = staged_config(
        "eos",
        "hostname new\nmanagement api http-commands\n   no shutdown\n",
        "hostname old\nusername ops secret x\nip access-list HOTFIX\n   10 deny ip any any\n",
        "username fabricgen privilege 15 role network-admin secret y\n",
    )
    assert staged == (
        "hostname new\nmanagement api http-commands\n   no shutdown\n"
        "username fabricgen privilege 15 role network-admin secret y\n"
        "username ops secret x\nip access-list HOTFIX\n   10 deny ip any any\n"
    )


def test_a_staged_config_without_the_login_user_is_a_lockout() -> None:
    login = Login("leaf1", "ops", "ansible.netcommon.httpapi")
    problems = lockout_problems("eos", "hostname a\n", "username ops role network-admin secret x\n", login)
    assert problems[0] == "leaf1: the staged config has no 'username ops': the push would lock out the login user"


def test_drift_lists_owned_lines_missing_and_added_on_the_device() -> None:
    running = "hostname a\ninterface Ethernet1\n   mtu 1500\n   mtu 9000\n"
    reference = "hostname a\ninterface Ethernet1\n   mtu 9214\n"
    assert drift("eos", running, reference) == ["- interface Ethernet1 / mtu 9214", "+ interface Ethernet1 / mtu 9000"]


def test_the_commit_window_of_every_platform_in_the_play_is_checked() -> None:
    # Each platform's group variables give its role's window; the playbook names no platform.
    hostvars = {
        "s1": {"fabricgen_commit_window": {"timer": "00:10:00", "retries": "30", "delay": "10"}},
        "l1": {"fabricgen_commit_window": {"timer": 600, "retries": 30, "delay": 10}},
        "l2": {"fabricgen_commit_window": {"timer": 3600, "retries": 30, "delay": 10}},
    }
    assert commit_windows_problems(["s1", "l2"], hostvars, 20, 20) == []
    # 50 hosts on 20 forks: 3 rounds of 360 s; both 600 s windows say so once, 3600 s is enough
    assert commit_windows_problems(["s1", "l1", "l2"], hostvars, 50, 20) == [
        "commit timer 600 s is shorter than the worst case of the largest batch (3 x (300 + 60) = 1080 s): "
        "lower the batch cap, raise forks or the timer"
    ]
    with pytest.raises(ValueError, match="x1: no fabricgen_commit_window"):
        commit_windows_problems(["s1", "x1"], {**hostvars, "x1": {}}, 20, 20)


def test_every_switch_platform_gives_its_commit_window_to_its_group() -> None:
    for platform in drivers():
        window = ansible_group_vars()[platform]["fabricgen_commit_window"]
        assert set(window) == {"timer", "retries", "delay"}, platform


DRAIN_CFG = "hostname s1\nrouter bgp 65000\n  router-id 10.0.0.1\n  neighbor 10.1.0.1 remote-as 65101\n"


def test_nxos_drain_lines_go_under_router_bgp_after_the_router_id() -> None:
    drained = drained_config(DRAIN_CFG, "nxos", True)
    assert drained == (
        "hostname s1\nrouter bgp 65000\n  router-id 10.0.0.1\n  graceful-shutdown activate\n  neighbor 10.1.0.1 remote-as 65101\n"
    )
    assert drained_config(drained, "nxos", False) == DRAIN_CFG
    assert is_drained("router bgp 1\n  router-id 1.1.1.1\n  graceful-shutdown activate\n", "nxos")


def test_eos_drain_is_a_top_level_maintenance_block_after_router_bgp() -> None:
    assert drained_config(DRAIN_CFG, "eos", True) == DRAIN_CFG + "maintenance\n   unit System\n      quiesce\n"
