"""Rollout order: canaries, batch sizes, and whether the commit timer outlasts a batch.

The canaries are the first switch of each tier (in the plan's tier order) that has something to
change: a canary with an empty diff proves nothing. The remaining switches go tier by tier in
batches that start small and grow (1, a few percent, then a larger share) but never exceed a cap,
so a bad change that slips through the canaries hits one switch, then a few, never a quarter of
a 5,000-switch fabric at once.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def canaries(tiers: Sequence[str], groups: Mapping[str, Sequence[str]], changing: Iterable[str]) -> list[str]:
    """First host with a non-empty diff in each tier group, in tier order.

    >>> canaries(["spines", "leaves"], {"spines": ["s1", "s2"], "leaves": ["l1", "l2"]}, ["s2", "l1", "l2"])
    ['s2', 'l1']
    """
    wanted = set(changing)
    picked = []
    for tier in tiers:
        first = next((host for host in groups.get(tier, ()) if host in wanted), None)
        if first is not None:
            picked.append(first)
    return picked


def rollout_order(tiers: Sequence[str], groups: Mapping[str, Sequence[str]], changing: Iterable[str], skip: Iterable[str]) -> list[str]:
    """Every changing host not in `skip`, tier by tier (a host in two tier groups comes once).

    >>> rollout_order(["spines", "leaves"], {"spines": ["s1", "s2"], "leaves": ["l1", "l2"]}, ["s1", "s2", "l2"], ["s1"])
    ['s2', 'l2']
    """
    wanted, seen = set(changing), set(skip)
    order = []
    for tier in tiers:
        for host in groups.get(tier, ()):
            if host in wanted and host not in seen:
                seen.add(host)
                order.append(host)
    return order


def serial_steps(hosts: int, percents: Sequence[float] = (1, 5, 25), cap: int = 50) -> list[int]:
    """Ansible `serial` list: one switch, then each percentage of `hosts` (at least 1, at most
    `cap`); Ansible repeats the last step until every host is done.

    >>> serial_steps(4)
    [1, 1, 1, 1]
    >>> serial_steps(1000, (1, 5, 25), 50)
    [1, 10, 50, 50]
    """
    steps = [1] + [min(cap, max(1, math.ceil(hosts * float(p) / 100))) for p in percents]
    return [int(step) for step in steps]


def seconds(timer: Any) -> int:
    """`hh:mm:ss` (EOS commit timer) or a number of seconds (NX-OS commit-timeout).

    >>> seconds("00:10:00"), seconds(600)
    (600, 600)
    """
    text = str(timer).strip()
    match = re.fullmatch(r"(\d+):(\d\d):(\d\d)", text)
    if match:
        return int(match.group(1)) * 3600 + int(match.group(2)) * 60 + int(match.group(3))
    return int(float(text))


def commit_window_problems(timer: Any, retries: int, delay: int, batch: int, forks: int, overhead: int = 60) -> list[str]:
    """Why the commit timer could expire before a switch of the largest batch is confirmed.

    Worst case for one switch: it waits for a fork behind `ceil(batch / forks) - 1` others, then
    polls its post-checks `retries x delay` seconds, plus `overhead` for the commands around them.

    >>> commit_window_problems("00:10:00", 30, 10, 50, 20)
    ['commit timer 600 s is shorter than the worst case of the largest batch (3 x (300 + 60) = 1080 s): lower the batch cap, raise forks or the timer']
    >>> commit_window_problems("00:10:00", 30, 10, 20, 20)
    []
    """
    rounds = max(1, math.ceil(int(batch) / max(1, int(forks))))
    worst = rounds * (int(retries) * int(delay) + int(overhead))
    limit = seconds(timer)
    if limit > worst:
        return []
    return [
        f"commit timer {limit} s is shorter than the worst case of the largest batch "
        f"({rounds} x ({int(retries) * int(delay)} + {overhead}) = {worst} s): lower the batch cap, raise forks or the timer"
    ]


def opensm_master(hosts: Sequence[str], hostvars: Mapping[str, Any]) -> str:
    """The SM host that should end up master: highest `opensm_priority`, first by name on a tie
    (OpenSM's own tie-break is the lowest port GUID; the plan gives the master a unique top
    priority).

    >>> opensm_master(["sm1", "sm2"], {"sm1": {"opensm_priority": 14}, "sm2": {"opensm_priority": 15}})
    'sm2'
    """
    ranked = sorted(hosts, key=lambda host: (-int(hostvars[host].get("opensm_priority", 0) or 0), host))
    return ranked[0] if ranked else ""


def sminfo_master(output: str, priority: Any) -> bool:
    """`sminfo` reports a MASTER SM with the planned master's priority.

    >>> sminfo_master("sminfo: sm lid 1 sm guid 0x30101, activity count 9 priority 15 state 3 SMINFO_MASTER", 15)
    True
    >>> sminfo_master("sminfo: sm lid 1 sm guid 0x30102, activity count 9 priority 5 state 3 SMINFO_MASTER", 15)
    False
    """
    match = re.search(r"priority (\d+) state \d+ SMINFO_MASTER", str(output))
    return bool(match) and int(match.group(1)) == int(priority)  # type: ignore[union-attr]


def opensm_mismatch(hosts: Sequence[str], hostvars: Mapping[str, Any], register: str, per_host: Iterable[str]) -> list[str]:
    """Files (other than the per-host ones) whose checksum differs between SM hosts that have a
    registered `find` result: `partitions.conf: sm1 != sm2`."""
    skip = set(per_host)
    seen: dict[str, tuple[str, str]] = {}
    problems = []
    for host in sorted(hosts):
        result = hostvars[host].get(register) if host in hostvars else None
        if not isinstance(result, Mapping):
            continue
        for entry in result.get("files", []):
            name = str(entry["path"]).rsplit("/", 1)[-1]
            if name in skip:
                continue
            first = seen.setdefault(name, (host, str(entry.get("checksum", ""))))
            if first[1] != str(entry.get("checksum", "")):
                problems.append(f"{name}: {first[0]} != {host}")
    return problems
