"""STAND-IN QoS state: what a switch's QoS would be in effect, derived from the config it holds.

Each Ethernet port's QoS policy, the priorities PFC pauses on it, and the queues that mark ECN
with their thresholds, read from the running config the stand-in holds, never a fixed answer:
a push that drops a port's service-policy, turns PFC off, pauses a second priority or changes
the ECN thresholds shows in the stand-in's answers and fails the post-check as it would on a
device. Thresholds stay in the config's own numbers and unit (the driver converts).

- EOS: the port's `service-profile` names a `qos profile`; PFC is on when the port or the
  profile says `priority-flow-control on`, pausing its `priority-flow-control priority N
  no-drop` priorities; a `uc-tx-queue N` of the profile with `random-detect ecn
  minimum-threshold ...` marks ECN.
- NX-OS: the port's `service-policy type qos input`; PFC is on with `priority-flow-control mode
  on` on the port and pauses the `pause pfc-cos` values of the network-qos policy `system qos`
  names; a class `c-out-8q-qN` (`-q-default`: 0) of the queuing policy `system qos` names with
  `random-detect ... ecn` marks ECN on every port.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Thresholds = tuple[int, int, str]
"""(minimum, maximum, unit) as the config writes them."""


@dataclass(frozen=True)
class PortQos:
    policy: str
    pfc_on: bool
    pfc_priorities: frozenset[int]
    ecn: dict[int, Thresholds] = field(default_factory=dict)


def sections(running: str) -> dict[str, list[list[str]]]:
    """Top-level line -> its first-level children, each with its deeper lines: [[child, ...], ...]."""
    found: dict[str, list[list[str]]] = {}
    head, depth = "", 0
    for line in running.splitlines():
        if not line.strip() or line.strip().startswith("!"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            head, depth = line.strip(), 0
            found[head] = []
        elif head and (not depth or indent <= depth):
            depth = indent
            found[head].append([line.strip()])
        elif head:
            found[head][-1].append(line.strip())
    return found


def _lines(children: list[list[str]]) -> list[str]:
    return [line for child in children for line in child]


_EOS_ECN = re.compile(r"random-detect ecn minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+)")
_NXOS_ECN = re.compile(r"random-detect minimum-threshold (\d+) (\S+) maximum-threshold (\d+) (\S+).* ecn$")


def _eos(config: dict[str, list[list[str]]], port: list[list[str]]) -> PortQos:
    own = [child[0] for child in port]
    policy = next((line.split()[1] for line in own if line.startswith("service-profile ")), "")
    profile = config.get(f"qos profile {policy}", []) if policy else []
    top = [child[0] for child in profile] + own
    priorities = frozenset(int(m.group(1)) for m in (re.fullmatch(r"priority-flow-control priority (\d) no-drop", x) for x in top) if m)
    on = "priority-flow-control on" in top
    ecn = {}
    for child in profile:
        queue = re.fullmatch(r"uc-tx-queue (\d)", child[0])
        match = next((m for m in map(_EOS_ECN.search, child[1:]) if m), None)
        if queue and match:
            ecn[int(queue.group(1))] = (int(match.group(1)), int(match.group(3)), match.group(2))
    return PortQos(policy, on, priorities if on else frozenset(), ecn)


def _nxos_system(config: dict[str, list[list[str]]]) -> tuple[frozenset[int], dict[int, Thresholds]]:
    """The PFC CoS values and the ECN queues `system qos` puts in effect on every port."""
    system = [child[0] for child in config.get("system qos", [])]
    network = next((x.split()[-1] for x in system if x.startswith("service-policy type network-qos ")), "")
    queuing = next((x.split()[-1] for x in system if x.startswith("service-policy type queuing output ")), "")
    pause = [x for x in _lines(config.get(f"policy-map type network-qos {network}", [])) if x.startswith("pause pfc-cos ")]
    priorities = frozenset(int(v) for x in pause for v in x.split()[2:] if v.isdigit())
    ecn = {}
    for child in config.get(f"policy-map type queuing {queuing}", []):
        queue = re.fullmatch(r"class type queuing c-out-8q-q(\d|-default)", child[0])
        match = next((m for m in map(_NXOS_ECN.search, child[1:]) if m), None)
        if queue and match:
            tc = 0 if queue.group(1) == "-default" else int(queue.group(1))
            ecn[tc] = (int(match.group(1)), int(match.group(3)), match.group(2))
    return priorities, ecn


def port_qos(platform: str, running: str) -> dict[str, PortQos]:
    """{Ethernet port: its QoS in effect} as the config the stand-in holds says it."""
    config = sections(running)
    ports = {head.split()[1]: children for head, children in config.items() if re.match(r"interface (Ethernet|Eth)\S+$", head)}
    if platform == "eos":
        return {name: _eos(config, children) for name, children in ports.items()}
    priorities, ecn = _nxos_system(config)
    found = {}
    for name, children in ports.items():
        own = [child[0] for child in children]
        policy = next((x.split()[-1] for x in own if x.startswith("service-policy type qos input ")), "")
        on = "priority-flow-control mode on" in own
        found[name] = PortQos(policy, on, priorities if on else frozenset(), dict(ecn))
    return found
