"""The scheduler in effect, derived from each rendered config by the vendor's own rule, against
the plan's intent: strict priority only for CNP and network control (DSCP CS6/CS7), every other
DSCP in a round-robin queue with its share, and no DSCP left to a switch default.

The interpreters below are independent of the templates and of the plan's queue list: they
start from the switch's documented defaults and apply the config's lines the way the switch
does (docs/render.md, "Queue scheduling", cites the sources):

- EOS (Trident/Tomahawk): every transmit queue is strict priority by default; `no priority` on
  queue N makes queues 0..N round-robin and leaves the queues above N strict, whatever else
  they say; the default DSCP map sends DSCP 8d..8d+7 to traffic class d, except 0-7 -> 1 and
  8-15 -> 0; `qos map dscp ... to traffic-class T` overrides it per DSCP.
- NX-OS: the first class of the ingress `policy-map type qos` whose class-map matches the DSCP
  sets the qos-group, else `class-default` (qos-group 0 when it sets none); a queuing class is
  strict with `priority level`, otherwise DWRR by `bandwidth remaining percent`.

Expected values come from the inventory's policy numbers (plan.roce's raw fields), never from
the plan's queue list or DSCP map."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from fabricgen.core.catalog import platforms
from fabricgen.core.model import Device, Plan, RocePolicy
from tests.render_cases import device_configs, inventory_ids, rendered

NETWORK_CONTROL = (48, 56)
"""CS6 and CS7 (RFC 4594): the DSCPs besides CNP's that the plan runs strict."""
NETWORK_CONTROL_CLASS = 7


@dataclass(frozen=True)
class Effective:
    """What the switch does with one DSCP: its traffic class, strict or not, and the weight."""

    traffic_class: int
    strict: bool
    weight: int


def blocks(text: str) -> dict[str, list[str]]:
    """Top-level line -> the lines indented under it (stripped), `!` lines dropped."""
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        if not line[0].isspace():
            current = out.setdefault(line, [])
        elif current is not None:
            current.append(line.strip())
    return out


def eos_default_dscp_map() -> dict[int, int]:
    """EOS default DSCP -> traffic class (Trident/Tomahawk, Arista EOS User Manual, QoS chapter)."""
    table = {d: d // 8 for d in range(64)}
    table.update(dict.fromkeys(range(8), 1))
    table.update(dict.fromkeys(range(8, 16), 0))
    return table


def eos_effective(config: str) -> dict[int, Effective]:
    dscp_to_tc = eos_default_dscp_map()
    for line in config.splitlines():
        match = re.fullmatch(r"qos map dscp ([0-9 ]+) to traffic-class (\d)", line)
        if match:
            dscp_to_tc.update(dict.fromkeys(map(int, match.group(1).split()), int(match.group(2))))
    queues = eos_queue_settings(config)
    round_robin_top = max((q for q, lines in queues.items() if "no priority" in lines), default=-1)
    scheduler: dict[int, tuple[bool, int]] = {}
    for queue in range(8):
        lines = queues.get(queue, [])
        strict = queue > round_robin_top
        if not strict and "priority strict" in lines:
            raise AssertionError(f"queue {queue} says `priority strict` but `no priority` on {round_robin_top} makes it round-robin")
        weights = [int(line.split()[-1]) for line in lines if re.fullmatch(r"bandwidth percent \d+", line)]
        scheduler[queue] = (strict, 0 if strict else sum(weights))
    return {d: Effective(tc, *scheduler[tc]) for d, tc in dscp_to_tc.items()}


def eos_queue_settings(config: str) -> dict[int, list[str]]:
    """The RoCE ports' profile: queue number -> its lines. Fails on any line it does not know."""
    tree = blocks(config)
    (profile,) = {line.split()[-1] for lines in tree.values() for line in lines if line.startswith("service-profile ")}
    queues: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in tree[f"qos profile {profile}"]:
        match = re.fullmatch(r"(?:uc-)?tx-queue (\d)", line)
        if match:
            current = queues.setdefault(int(match.group(1)), [])
        elif line.startswith(("qos trust", "priority-flow-control")):
            current = None
        elif current is not None and re.match(r"(no priority|priority strict|bandwidth percent \d+|random-detect )", line):
            current.append(line)
        else:
            raise AssertionError(f"unknown line in qos profile {profile}: {line!r}")
    return queues


def nxos_effective(config: str) -> dict[int, Effective]:
    tree = blocks(config)
    matches = {}
    for head, lines in tree.items():
        if head.startswith("class-map type qos match-any "):
            dscps = {int(d) for line in lines for d in re.split(r"[ ,]+", line.removeprefix("match dscp ").strip())}
            matches[head.split()[-1]] = dscps
    (classify,) = {line.split()[-1] for lines in tree.values() for line in lines if line.startswith("service-policy type qos input ")}
    order, groups, current = [], {"class-default": 0}, ""
    for line in blocks_under(config, f"policy-map type qos {classify}"):
        if line.startswith("class "):
            current = line.split()[-1]
            order.append(current)
        elif line.startswith("set qos-group "):
            groups[current] = int(line.split()[-1])
    dscp_to_group = {}
    for dscp in range(64):
        cls = next((c for c in order if c != "class-default" and dscp in matches[c]), "class-default")
        dscp_to_group[dscp] = groups[cls]
    scheduler = nxos_queuing(config)
    return {d: Effective(g, *scheduler[g]) for d, g in dscp_to_group.items()}


def blocks_under(config: str, head: str) -> list[str]:
    return blocks(config)[head]


def nxos_queuing(config: str) -> dict[int, tuple[bool, int]]:
    tree = blocks(config)
    (output,) = [line.split()[-1] for line in tree["system qos"] if line.startswith("service-policy type queuing output ")]
    scheduler, queue = {}, -1
    for line in tree[f"policy-map type queuing {output}"]:
        match = re.fullmatch(r"class type queuing c-out-8q-q(\d|-default)", line)
        if match:
            queue = 0 if match.group(1) == "-default" else int(match.group(1))
            scheduler[queue] = (False, 0)
        elif line.startswith("priority level"):
            scheduler[queue] = (True, 0)
        elif line.startswith("bandwidth remaining percent "):
            scheduler[queue] = (scheduler[queue][0], int(line.split()[-1]))
        elif not line.startswith("random-detect "):
            raise AssertionError(f"unknown queuing line {line!r}")
    assert sorted(scheduler) == list(range(8)), "every 8q-mode class must be listed (unlisted ones keep a default)"
    return scheduler


def intended(roce: RocePolicy, platform: str) -> dict[int, Effective]:
    """The plan's intent per DSCP, from the policy's numbers: RoCE and default traffic weighted,
    CNP and network control strict, nothing else anywhere."""
    best_effort = int(platforms()[platform].qos.get("best_effort_tc", 0))
    cnp = roce.cnp_traffic_class[platform]
    out = {}
    for dscp in range(64):
        if dscp == roce.dscp_data:
            out[dscp] = Effective(roce.no_drop_priority, False, roce.bandwidth_percent)
        elif dscp == roce.dscp_cnp:
            out[dscp] = Effective(cnp, True, 0)
        elif dscp in NETWORK_CONTROL:
            out[dscp] = Effective(NETWORK_CONTROL_CLASS, True, 0)
        else:
            out[dscp] = Effective(best_effort, False, 100 - roce.bandwidth_percent)
    return out


def assert_scheduler_as_planned(plan: Plan, device: Device, config: str) -> None:
    assert plan.roce is not None
    effective = eos_effective(config) if device.platform == "eos" else nxos_effective(config)
    wrong = {d: (effective[d], want) for d, want in intended(plan.roce, device.platform).items() if effective[d] != want}
    assert not wrong, f"{device.name}: DSCP -> (in effect, planned): {wrong}"


def _one_per_platform(inventory: str) -> list[tuple[Device, str]]:
    seen: dict[tuple[str, str], tuple[Device, str]] = {}
    for device, text in device_configs(inventory):
        seen.setdefault((device.platform, device.role), (device, text))
    return list(seen.values())


CASES = [(inventory, device.name) for inventory in inventory_ids() for device, _ in _one_per_platform(inventory)]


@pytest.mark.parametrize(("inventory", "name"), CASES)
def test_scheduler_in_effect_is_the_plan(inventory: str, name: str) -> None:
    plan, _ = rendered(inventory)
    device, text = next((d, c) for d, c in device_configs(inventory) if d.name == name)
    assert_scheduler_as_planned(plan, device, text)


EOS_BEFORE = """\
qos profile ROCE-LOSSLESS
   qos trust dscp
   !
   uc-tx-queue 1
      no priority
      bandwidth percent 50
   !
   uc-tx-queue 3
      no priority
      bandwidth percent 50
   !
   uc-tx-queue 6
      priority strict
!
interface Ethernet1/1
   service-profile ROCE-LOSSLESS
!
qos map dscp 26 to traffic-class 3
qos map dscp 48 to traffic-class 6
"""


def test_the_eos_interpreter_sees_what_the_old_profile_did() -> None:
    """The profile fabricgen rendered before: `no priority` on 3 at most, so queues 4, 5 and 7
    stayed strict above RoCE (any AF4x/EF/CS5 marking pre-empted it) and 0 and 2 had no share."""
    effective = eos_effective(EOS_BEFORE)
    assert effective[34] == Effective(4, True, 0)  # AF41
    assert effective[46] == Effective(5, True, 0)  # EF
    assert effective[26] == Effective(3, False, 50)
    assert effective[16] == Effective(2, False, 0)
    assert effective[8] == Effective(0, False, 0)


def test_the_eos_interpreter_applies_the_round_robin_boundary() -> None:
    """`priority strict` below the highest `no priority` queue is a contradiction, not strict."""
    text = EOS_BEFORE.replace("uc-tx-queue 1\n      no priority", "uc-tx-queue 1\n      priority strict")
    with pytest.raises(AssertionError, match="queue 1 says `priority strict`"):
        eos_effective(text)
    moved = EOS_BEFORE.replace("uc-tx-queue 6\n      priority strict", "uc-tx-queue 6\n      no priority")
    assert eos_effective(moved)[48] == Effective(6, False, 0)
    assert eos_effective(moved)[56] == Effective(7, True, 0)


def test_the_nxos_interpreter_falls_back_to_class_default() -> None:
    text = """\
class-map type qos match-any ROCE
  match dscp 26
policy-map type qos Q
  class ROCE
    set qos-group 3
  class class-default
    set qos-group 0
policy-map type queuing OUT
  class type queuing c-out-8q-q7
    priority level 1
  class type queuing c-out-8q-q6
    bandwidth remaining percent 0
  class type queuing c-out-8q-q5
    bandwidth remaining percent 0
  class type queuing c-out-8q-q4
    bandwidth remaining percent 0
  class type queuing c-out-8q-q3
    bandwidth remaining percent 60
  class type queuing c-out-8q-q2
    bandwidth remaining percent 0
  class type queuing c-out-8q-q1
    bandwidth remaining percent 0
  class type queuing c-out-8q-q-default
    bandwidth remaining percent 40
system qos
  service-policy type queuing output OUT
interface Ethernet1/1
  service-policy type qos input Q
"""
    effective = nxos_effective(text)
    assert effective[26] == Effective(3, False, 60)
    assert effective[56] == Effective(0, False, 40)  # network control not classified: weighted
