"""Rollout order: canaries, batches, and whether the commit timer outlasts a batch.

Tiers are barriers: deploy.yml finishes one tier (its canaries, then its batches) before the
next starts. Within a tier the canaries are the first switch of each platform and model that has
something to change (a canary with an empty diff proves nothing). The rest go in batches that
start small and grow (1, a few percent, a larger share) under a cap, and never take more than
`per_group` switches of one pod or plane at once: by default one spine at a time and one
super-spine per plane, so a bad change that slips through the canaries costs a leaf one uplink
share, never a quarter of the fabric. Hosts carry `fabricgen_model` and
`fabricgen_redundancy_group` (pod or plane) in the rendered inventory.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def _kind(host: str, hostvars: Mapping[str, Any]) -> tuple[str, str]:
    facts = hostvars.get(host) or {}
    return (str(facts.get("ansible_network_os", "")), str(facts.get("fabricgen_model", "")))


def _group(host: str, hostvars: Mapping[str, Any]) -> str:
    """The switch's redundancy group: its pod (spines, leaves) or plane (super-spines)."""
    return str((hostvars.get(host) or {}).get("fabricgen_redundancy_group", ""))


def canaries(hosts: Sequence[str], changing: Iterable[str], hostvars: Mapping[str, Any]) -> list[str]:
    """One canary per platform and model among a tier's changing hosts, in the tier's order: a
    change that breaks only one model's software is caught before that model's batches.

    >>> hv = {"s1": {"fabricgen_model": "a"}, "s2": {"fabricgen_model": "a"}, "s3": {"fabricgen_model": "b"}}
    >>> canaries(["s1", "s2", "s3"], ["s2", "s3"], hv)
    ['s2', 's3']
    """
    wanted, seen = set(changing), set()
    picked = []
    for host in hosts:
        kind = _kind(host, hostvars)
        if host in wanted and kind not in seen:
            seen.add(kind)
            picked.append(host)
    return picked


def rollout_order(hosts: Sequence[str], changing: Iterable[str], skip: Iterable[str], hostvars: Mapping[str, Any]) -> list[str]:
    """A tier's changing hosts not in `skip`, interleaved over their redundancy groups (one of
    each pod or plane in turn), so a batch spreads over groups instead of emptying one.

    >>> hv = {h: {"fabricgen_redundancy_group": h[0]} for h in ("a1", "a2", "b1", "b2")}
    >>> rollout_order(["a1", "a2", "b1", "b2"], ["a1", "a2", "b1", "b2"], ["a1"], hv)
    ['a2', 'b1', 'b2']
    """
    wanted, skipped = set(changing), set(skip)
    queues: dict[str, list[str]] = {}
    for host in hosts:
        if host in wanted and host not in skipped:
            queues.setdefault(_group(host, hostvars), []).append(host)
    order = []
    while any(queues.values()):
        for queue in queues.values():
            if queue:
                order.append(queue.pop(0))
    return order


def batch_sizes(
    hosts: Sequence[str], hostvars: Mapping[str, Any], per_group: int, percents: Sequence[float] = (5, 25), cap: int = 20
) -> list[int]:
    """Ansible `serial` for a tier's rollout group, in its order: batches grow (1, then each
    percentage of the tier, at most `cap`) and never hold more than `per_group` switches of one
    pod or plane (0: no per-group limit). Covers every host exactly.

    >>> hv = {f"s{i:02d}": {"fabricgen_redundancy_group": "pod1"} for i in range(16)}
    >>> batch_sizes(sorted(hv), hv, 1)
    [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]
    >>> batch_sizes([f"l{i}" for i in range(40)], {}, 0)
    [1, 2, 10, 10, 10, 7]
    """
    steps = serial_steps(len(hosts), percents, cap)
    sizes: list[int] = []
    index = 0
    while index < len(hosts):
        target = steps[min(len(sizes), len(steps) - 1)]
        taken: dict[str, int] = {}
        size = 0
        while index + size < len(hosts) and size < target:
            group = _group(hosts[index + size], hostvars)
            if per_group and taken.get(group, 0) >= per_group:
                break
            taken[group] = taken.get(group, 0) + 1
            size += 1
        sizes.append(size)
        index += size
    return sizes or [1]


def rollout_plan(
    tiers: Sequence[str], groups: Mapping[str, Sequence[str]], changing: Iterable[str], hostvars: Mapping[str, Any]
) -> list[dict[str, str]]:
    """`add_host` items for deploy.yml: per tier, its canaries (`fabricgen_canaries_<tier>`), then
    the rest (`fabricgen_rollout_<tier>`), in order; a host in two tier groups comes once.

    >>> plan = rollout_plan(["spines", "leaves"], {"spines": ["s1", "s2"], "leaves": ["l1"]}, ["s1", "s2", "l1"], {})
    >>> [(i["host"], i["group"]) for i in plan]
    [('s1', 'fabricgen_canaries_spines'), ('s2', 'fabricgen_rollout_spines'), ('l1', 'fabricgen_canaries_leaves')]
    """
    done: set[str] = set()
    items = []
    wanted = set(changing)
    for tier in tiers:
        hosts = [h for h in groups.get(tier, ()) if h not in done]
        firsts = canaries(hosts, wanted, hostvars)
        for group, members in (
            (f"fabricgen_canaries_{tier}", firsts),
            (f"fabricgen_rollout_{tier}", rollout_order(hosts, wanted, firsts, hostvars)),
        ):
            items += [{"host": host, "group": group} for host in members]
            done.update(members)
    return items


def unknown_tiers(tiers: Sequence[str], known: Sequence[str]) -> list[str]:
    """Tier groups deploy.yml has no plays for: the run must stop, not skip them.

    >>> unknown_tiers(["superspines", "spines", "borders"], ["superspines", "spines", "leaves"])
    ['borders']
    """
    return [tier for tier in tiers if tier not in known]


def restore_order(tiers: Sequence[str], groups: Mapping[str, Sequence[str]], targeted: Iterable[str], files: Iterable[str]) -> list[str]:
    """The switches rollback.yml restores: exactly those targeted (`--limit`) that have a file in
    the chosen backup folder (`files`: paths or names ending in `.cfg`), in reverse rollout order
    (leaves first, the top tier last), each once.

    >>> restore_order(["spines", "leaves"], {"spines": ["s1", "s2"], "leaves": ["l1", "l2"]},
    ...               ["s1", "s2", "l1", "l2"], ["/b/CHG1/l2.cfg", "/b/CHG1/s1.cfg"])
    ['l2', 's1']
    """
    have = {str(path).rsplit("/", 1)[-1].removesuffix(".cfg") for path in files}
    wanted = set(targeted) & have
    order: list[str] = []
    for tier in reversed(list(tiers)):
        for host in reversed(list(groups.get(tier, ()))):
            if host in wanted and host not in order:
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
