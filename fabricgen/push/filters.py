"""Every function the playbooks use as a filter: `playbooks/filter_plugins/fabricgen.py` loads
this mapping, so the logic stays in typed, tested Python rather than in Jinja."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fabricgen.push import baseline, rollout
from fabricgen.push.bgp_identity import two_ended_sessions
from fabricgen.push.opensm import opensm_conf_with_keys, opensm_key_problems, opensm_version_problem
from fabricgen.push.ownership import owned_text, redact
from fabricgen.push.postchecks import ansible_filters as postcheck_filters
from fabricgen.push.reachability import controller_address
from fabricgen.push.rescue import rescue_report
from fabricgen.push.stage import Login, drift, lockout_problems, staged_config


def _lockout(
    staged: str, running: str, platform: str, device: str, user: str, connection: str, address: str = "", controller: str = ""
) -> list[str]:
    """`lockout_problems`; `controller` is `fabricgen_controller_address` when the inventory sets
    it, else the source address this machine's routing picks for `address` (`ansible_host`)."""
    host = str(address or "")
    return lockout_problems(
        platform, staged, running, Login(device, user, connection, host, controller_address(host, str(controller or "")))
    )


def commit_windows_problems(hosts: list[str], hostvars: Mapping[str, Any], batch: int, forks: int) -> list[str]:
    """`rollout.commit_window_problems` for every commit window among `hosts`: each platform's
    group variables give its role's timer and post-check polling as `fabricgen_commit_window`,
    so the playbook names no platform. A host without one fails: its window would go unchecked."""
    windows = set()
    for host in hosts:
        window = hostvars[host].get("fabricgen_commit_window")
        if not window:
            raise ValueError(f"{host}: no fabricgen_commit_window (its platform's ansible.group_vars in platform.yml)")
        windows.add((str(window["timer"]), int(window["retries"]), int(window["delay"])))
    problems: list[str] = []
    for timer, retries, delay in sorted(windows):
        problems.extend(p for p in rollout.commit_window_problems(timer, retries, delay, batch, forks) if p not in problems)
    return problems


def ansible_filters() -> dict[str, Any]:
    filters = dict(postcheck_filters())
    filters.update(
        {
            "fabricgen_staged_config": lambda rendered, running, overlay, platform, keep=True: staged_config(
                platform, rendered, running, overlay, keep
            ),
            "fabricgen_lockout_problems": _lockout,
            "fabricgen_drift": lambda running, reference, platform: drift(platform, running, reference),
            "fabricgen_owned_config": lambda text, platform: owned_text(platform, text),
            "fabricgen_redact": lambda text, platform: redact(platform, text),
            "fabricgen_switch_problems": baseline.switch_problems,
            "fabricgen_peers_on_new_config": baseline.peers_on_new_config,
            "fabricgen_two_ended_sessions": two_ended_sessions,
            "fabricgen_rollout_plan": rollout.rollout_plan,
            "fabricgen_batch_sizes": rollout.batch_sizes,
            "fabricgen_capacity_problems": rollout.capacity_problems,
            "fabricgen_unknown_tiers": rollout.unknown_tiers,
            "fabricgen_restore_order": rollout.restore_order,
            "fabricgen_serial_steps": rollout.serial_steps,
            "fabricgen_commit_windows_problems": commit_windows_problems,
            "fabricgen_rescue_report": rescue_report,
            "fabricgen_opensm_master": rollout.opensm_master,
            "fabricgen_sminfo_master": rollout.sminfo_master,
            "fabricgen_opensm_mismatch": rollout.opensm_mismatch,
            "fabricgen_opensm_version_problem": opensm_version_problem,
            "fabricgen_opensm_key_problems": opensm_key_problems,
            "fabricgen_opensm_conf_with_keys": opensm_conf_with_keys,
        }
    )
    return filters
