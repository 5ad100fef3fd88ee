"""The change window's capacity rule, once: which switches run above a ratio while others are out.

A switch that is drained (it carries nothing) or down (its config is being replaced) takes the
bandwidth of its cables away from every switch below it. `oversubscription.during_change` is the
one ratio a change window must hold: `checks/drain.py` applies it to the plan's drains and
`push/rollout.py` to deploy.yml's batches and drain.yml's targets, both through `starved`, so
a drain `validate` accepts is a drain the playbooks accept.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from fabricgen.core.units import format_ratio


@dataclass(frozen=True, slots=True)
class Bandwidth:
    """A switch's downlink and uplink bandwidth, in Gbps."""

    downlink: int
    uplink: int


@dataclass(frozen=True, slots=True)
class Starved:
    """A switch left above the ratio, and the switches out whose cables it lost."""

    device: str
    downlink: int
    uplink: int
    left: int
    by: tuple[str, ...]

    def describe(self, ratio: float) -> str:
        """`pod1-leaf01 at 2:1 (12800G down, 6400G of 12800G up), above oversubscription.during_change 1.5:1`.

        >>> Starved("l1", 3200, 3200, 1600, ("s1", "s2")).describe(1.5)
        'l1 at 2:1 (3200G down, 1600G of 3200G up), above oversubscription.during_change 1.5:1'
        """
        now = format_ratio(self.downlink / self.left) if self.left > 0 else "no uplink left"
        return f"{self.device} at {now} ({self.downlink}G down, {self.left}G of {self.uplink}G up), above oversubscription.during_change {format_ratio(ratio)}"


def starved(out: Iterable[str], below: Mapping[str, Mapping[str, int]], bandwidth: Mapping[str, Bandwidth], ratio: float) -> list[Starved]:
    """Switches below the switches `out` that run above `ratio` (downlink:uplink) while those
    are out, or keep no uplink at all; a switch that is out itself needs nothing. `below` is each
    upper switch's bandwidth to each switch below it. Looks only at the cables of `out`.

    >>> below = {"s1": {"l1": 800}, "s2": {"l1": 800}}
    >>> bandwidth = {"l1": Bandwidth(3200, 3200)}
    >>> starved(["s1"], below, bandwidth, 1.5)
    []
    >>> [(s.device, s.left, s.by) for s in starved(["s1", "s2"], below, bandwidth, 1.5)]
    [('l1', 1600, ('s1', 's2'))]
    """
    gone = set(out)
    lost: dict[str, int] = defaultdict(int)
    by: dict[str, set[str]] = defaultdict(set)
    for upper in gone:
        for lower, gbps in (below.get(upper) or {}).items():
            lost[lower] += int(gbps)
            by[lower].add(upper)
    found = []
    for device in sorted(lost):
        have = bandwidth.get(device)
        if device in gone or have is None:
            continue
        left = have.uplink - lost[device]
        if left <= 0 or have.downlink / left > ratio + 1e-9:
            found.append(Starved(device, have.downlink, have.uplink, left, tuple(sorted(by[device]))))
    return found


def first_breaking(out: Iterable[str], below: Mapping[str, Mapping[str, int]], bandwidth: Mapping[str, Bandwidth], ratio: float) -> str:
    """The switch of `out`, in its order, whose addition first starves a switch below ("" if none):
    the one a refusal names.

    >>> first_breaking(["s1", "s2", "s3"], {"s1": {"l1": 800}, "s2": {"l1": 800}}, {"l1": Bandwidth(3200, 3200)}, 1.5)
    's2'
    """
    taken: list[str] = []
    for switch in out:
        taken.append(switch)
        if starved(taken, below, bandwidth, ratio):
            return switch
    return ""
