"""Rollout order: canaries, batches, and whether the commit timer outlasts a batch.

Tiers are barriers: deploy.yml finishes one tier (its canaries, then its batches) before the
next starts. Within a tier the canaries are the first switch of each platform and model that has
something to change (a canary with an empty diff proves nothing). The rest go in batches that
start small and grow (1, a few percent, a larger share) under a cap, and never take more than
`per_group` switches of one pod or plane at once: by default one spine at a time and one
super-spine per plane, so a bad change that slips through the canaries costs a leaf one uplink
share, never a quarter of the fabric. Nor more than one leaf of a rail group (leaves sharing
servers), nor switches whose absence leaves a switch below above
`oversubscription.during_change` (core/capacity.py; a switch that alone would is refused at the
pre-flight). Hosts carry `fabricgen_model`,
`fabricgen_redundancy_group` (pod or plane) and those figures in the rendered inventory
(`configs/rollout_bounds.py`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from fabricgen.core.capacity import Bandwidth, first_breaking, starved


def _kind(host: str, hostvars: Mapping[str, Any]) -> tuple[str, str]:
    facts = hostvars.get(host) or {}
    return (str(facts.get("ansible_network_os", "")), str(facts.get("fabricgen_model", "")))


def _group(host: str, hostvars: Mapping[str, Any]) -> str:
    """The switch's redundancy group: its pod (spines, leaves) or plane (super-spines)."""
    return str((hostvars.get(host) or {}).get("fabricgen_redundancy_group", ""))


def _rail(host: str, hostvars: Mapping[str, Any]) -> str:
    """The leaf's rail group (leaves that share servers), "" for a switch in none."""
    return str((hostvars.get(host) or {}).get("fabricgen_rail_group", ""))


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
    """A tier's changing hosts not in `skip`, interleaved over their redundancy groups and rail
    groups (one of each pod or plane, and of each set of leaves sharing servers, in turn), so a
    batch spreads over groups instead of emptying one.

    >>> hv = {h: {"fabricgen_redundancy_group": h[0]} for h in ("a1", "a2", "b1", "b2")}
    >>> rollout_order(["a1", "a2", "b1", "b2"], ["a1", "a2", "b1", "b2"], ["a1"], hv)
    ['a2', 'b1', 'b2']
    """
    wanted, skipped = set(changing), set(skip)
    queues: dict[tuple[str, str], list[str]] = {}
    for host in hosts:
        if host in wanted and host not in skipped:
            queues.setdefault((_group(host, hostvars), _rail(host, hostvars)), []).append(host)
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
    percentage of the tier, at most `cap`) and end early at the first switch that would break
    redundancy (`_joins`): more than `per_group` switches of one pod or plane (0: no such
    limit), a second leaf of one rail group, or a switch below losing more uplink than the
    inventory's `oversubscription.during_change` allows. Covers every host exactly.

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
        batch = [hosts[index]]
        while index + len(batch) < len(hosts) and len(batch) < target and _joins(batch, hosts[index + len(batch)], hostvars, per_group):
            batch.append(hosts[index + len(batch)])
        sizes.append(len(batch))
        index += len(batch)
    return sizes or [1]


def _joins(batch: Sequence[str], host: str, hostvars: Mapping[str, Any], per_group: int) -> bool:
    """Whether `host` may go down together with `batch`."""
    group = _group(host, hostvars)
    if per_group and sum(1 for member in batch if _group(member, hostvars) == group) >= per_group:
        return False
    rail = _rail(host, hostvars)
    if rail and any(_rail(member, hostvars) == rail for member in batch):
        return False
    return not capacity_breaks([*batch, host], hostvars)


def _capacity(hostvars: Mapping[str, Any]) -> tuple[dict[str, dict[str, int]], dict[str, Bandwidth], float]:
    """The capacity figures of the rendered inventory (present unless `during_change` is false)."""
    below: dict[str, dict[str, int]] = {}
    bandwidth: dict[str, Bandwidth] = {}
    ratio = 0.0
    for host, facts in hostvars.items():
        facts = facts or {}
        ratio = ratio or float(facts.get("fabricgen_change_ratio") or 0)
        if facts.get("fabricgen_below_gbps"):
            below[str(host)] = {str(k): int(v) for k, v in facts["fabricgen_below_gbps"].items()}
        if "fabricgen_uplink_gbps" in facts:
            bandwidth[str(host)] = Bandwidth(int(facts["fabricgen_downlink_gbps"]), int(facts["fabricgen_uplink_gbps"]))
    return below, bandwidth, ratio


def capacity_breaks(batch: Sequence[str], hostvars: Mapping[str, Any]) -> list[str]:
    """Switches below `batch` left above `oversubscription.during_change` while it is down
    (`core/capacity.py`, the rule `validate` applies to drains; the rendered inventory carries
    the figures unless during_change is false).

    >>> hv = {"s1": {"fabricgen_below_gbps": {"l1": 800}}, "s2": {"fabricgen_below_gbps": {"l1": 800}},
    ...       "l1": {"fabricgen_downlink_gbps": 3200, "fabricgen_uplink_gbps": 3200, "fabricgen_change_ratio": "1.5"}}
    >>> capacity_breaks(["s1"], hv)
    []
    >>> capacity_breaks(["s1", "s2"], hv)
    ['l1 at 2:1 (3200G down, 1600G of 3200G up), above oversubscription.during_change 1.5:1']
    """
    below, bandwidth, ratio = _capacity(hostvars)
    if not ratio:
        return []
    return [f"{item.describe(ratio)}" for item in starved(batch, below, bandwidth, ratio)]


def capacity_problems(hosts: Sequence[str], hostvars: Mapping[str, Any]) -> list[str]:
    """Switches that alone, in a batch of one, break `oversubscription.during_change`: no batch
    can take them down in this window, so the run stops at the pre-flight, naming them.

    >>> hv = {"s1": {"fabricgen_below_gbps": {"l1": 1600}},
    ...       "l1": {"fabricgen_downlink_gbps": 3200, "fabricgen_uplink_gbps": 3200, "fabricgen_change_ratio": "1"}}
    >>> capacity_problems(["s1"], hv)
    ['s1 cannot go down in this window: l1 at 2:1 (3200G down, 1600G of 3200G up), above oversubscription.during_change 1:1']
    """
    return [f"{host} cannot go down in this window: {'; '.join(breaks)}" for host in hosts if (breaks := capacity_breaks([host], hostvars))]


def drain_problems(hosts: Sequence[str], hostvars: Mapping[str, Any]) -> list[str]:
    """Why drain.yml must not drain `hosts` together (its pre-flight): the switch, in the limit's
    order, that first leaves a switch below above `oversubscription.during_change`, and what it
    starves. The same rule as `fabricgen validate --drain` (core/capacity.py).

    >>> hv = {"s1": {"fabricgen_below_gbps": {"l1": 800}}, "s2": {"fabricgen_below_gbps": {"l1": 800}},
    ...       "l1": {"fabricgen_downlink_gbps": 3200, "fabricgen_uplink_gbps": 3200, "fabricgen_change_ratio": "1.5"}}
    >>> drain_problems(["s1", "s2"], hv)
    ['draining s1, s2: s2 would break it: l1 at 2:1 (3200G down, 1600G of 3200G up), above oversubscription.during_change 1.5:1']
    """
    below, bandwidth, ratio = _capacity(hostvars)
    if not ratio:
        return []
    breaking = first_breaking(hosts, below, bandwidth, ratio)
    if not breaking:
        return []
    found = starved(hosts, below, bandwidth, ratio)
    return [f"draining {', '.join(hosts)}: {breaking} would break it: " + "; ".join(f"{item.describe(ratio)}" for item in found)]


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
