"""What the wiring passes decide for one end of a cable, before the device is assembled.

`connect` and `attach_servers` decide every port's name, address and peer and build its final
`Interface` (the platform's `speed` setting of the stage's cage split, the PFC headroom of the
stage's cable): a 5,000-switch fabric has 330,000 of them, and building each once, without a
draft, is a sixth of the planning time less (measured with `time.process_time`). A cable whose
length `cabling.overrides` changes gets its ends' headroom again in the device pass.

BGP neighbors are built final by the wiring as well (`connect` decides which peer groups carry
the remote AS). Cables are `Link`s from the start, each pass giving their fields by name (its
own `records.builder`); their `media` is None until the media pass chooses it.

`PortSlots` names the ports of a kind of device once, for all devices of that kind.
"""

from __future__ import annotations

from fabricgen.core.model import Model, Platform
from fabricgen.plan import allocate
from fabricgen.plan.passes.expand import TierNode

Port = tuple[int, int, str]
"""(cage, sub-port, interface name) of one logical slot of a device."""


class PortSlots(dict[int, Port]):
    """The port of each logical slot (0-based) of one kind of device (platform, model, cage
    split, first cage), named on first use: every device of that kind shares it, so a
    5,000-switch fabric names a million ports from a few hundred distinct slots."""

    def __init__(self, node: TierNode, per_cage: int, first: int) -> None:
        super().__init__()
        self.node, self.per_cage, self.first = node, per_cage, first

    def __missing__(self, slot: int) -> Port:
        cage, sub = allocate.split_slot(slot, self.per_cage, self.first)
        port = self[slot] = (cage, sub, self.node.platform.port_name(cage, sub, self.per_cage, self.node.model.lanes))
        return port


SlotsByKind = dict[tuple[str, str, int, int], PortSlots]
"""PortSlots by (platform, model, logical ports per cage, first cage)."""


def port_slots(known: SlotsByKind, node: TierNode, per_cage: int, first: int) -> PortSlots:
    """The slots of `node`'s kind of device, shared through `known`."""
    key = (node.platform.name, node.model.name, per_cage, first)
    slots = known.get(key)
    if slots is None:
        slots = known[key] = PortSlots(node, per_cage, first)
    return slots


def speed_setting(speed: int, platform: Platform, model: Model, per_cage: int) -> str:
    """What follows `speed` on a port of `model` run at `speed` with `per_cage` logical ports per
    cage (a broken-out cage when more than one): platform data decides the format. A few distinct
    values, formatted once each, for a million ports at scale.

    >>> from types import SimpleNamespace
    >>> toy = SimpleNamespace(speed_format="", breakout_speed_format="{speed}g-{lanes}")
    >>> eight_lanes = SimpleNamespace(lanes=8)
    >>> speed_setting(400, toy, eight_lanes, 1), speed_setting(100, toy, eight_lanes, 4)
    ('', '100g-2')
    """
    split = per_cage > 1
    pattern = platform.breakout_speed_format if split else platform.speed_format
    key = (pattern, speed, max(model.lanes // per_cage if split else model.lanes, 1))
    setting = _SPEED_SETTINGS.get(key)
    if setting is None:
        setting = _SPEED_SETTINGS[key] = pattern.format(speed=key[1], mbps=key[1] * 1000, lanes=key[2])
    return setting


_SPEED_SETTINGS: dict[tuple[str, int, int], str] = {}
"""Formatted speed settings by (pattern, speed, lanes)."""
