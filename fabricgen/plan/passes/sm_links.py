"""Pass: the dedicated subnet-manager hosts' cables, as plan links of kind `sm-leaf`.

A dedicated OpenSM host (`subnet_managers[]` naming no planned server) is cabled to a free port
of a leaf (plan/passes/infiniband.py picks the leaf, the cage and the port in it: a free half of
a twin-port cage the servers use, or a free cage). Its cable is a link like any other: the media
pass chooses its medium from both ends (the host's HCA model, the leaf's cage, shared with the
servers' links when they are in the same cage: the same splitter cable or twin-port module), and
the cabling plan, the BOM, NetBox, the ibsim topology and `ib verify` read it from `plan.links`.
The leaf gets the port as an interface of role `sm`, so its port count and free-port hints see
it.

An SM host whose port is taken or does not exist is left uncabled here: the checks report it at
its `subnet_managers` entry (one finding, not also a port collision).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from fabricgen.core.model import (
    SM_LINK,
    SM_ROLE,
    Breakout,
    Device,
    Endpoint,
    InfinibandPlan,
    Interface,
    Link,
    Model,
    Platform,
    SubnetManager,
)

SM_NIC = "nic1"
"""The SM host's HCA port (one port, like a server's first NIC)."""


def cable_subnet_managers(
    infiniband: InfinibandPlan,
    devices: tuple[Device, ...],
    models: Mapping[str, Model],
    platforms: Mapping[str, Platform],
    speed: int,
    length_m: float,
) -> tuple[tuple[Device, ...], tuple[Link, ...]]:
    """Every leaf with its SM hosts' ports added, and the SM hosts' cables, in SM order."""
    by_leaf: dict[str, list[SubnetManager]] = {}
    for sm in infiniband.subnet_managers:
        if not sm.server:
            by_leaf.setdefault(sm.leaf, []).append(sm)
    links: list[Link] = []
    result = []
    for device in devices:
        hosts = by_leaf.get(device.name)
        if hosts:
            device = _with_sm_ports(device, hosts, models[device.model], platforms[device.platform], speed, length_m, links)
        result.append(device)
    return tuple(result), tuple(links)


def _with_sm_ports(
    leaf: Device, hosts: list[SubnetManager], model: Model, platform: Platform, speed: int, length_m: float, links: list[Link]
) -> Device:
    """`leaf` with a port per SM host on its planned port (`leaf_port`, logical port `leaf_sub`)."""
    per_cage = model.logical_ports(speed) or 1
    used = {(i.port, i.sub) for i in leaf.interfaces}
    interfaces = list(leaf.interfaces)
    breakouts = {b.port: b for b in leaf.breakouts}
    for sm in hosts:
        port = (sm.leaf_port, sm.leaf_sub)
        if port in used or not 1 <= sm.leaf_port <= leaf.ports_total or not 1 <= sm.leaf_sub <= per_cage:
            continue
        used.add(port)
        name = platform.port_name(sm.leaf_port, sm.leaf_sub, per_cage, model.lanes)
        pattern = platform.breakout_speed_format if per_cage > 1 else platform.speed_format
        setting = pattern.format(speed=speed, mbps=speed * 1000, lanes=max(model.lanes // per_cage, 1))
        interfaces.append(
            Interface(
                name,
                sm.leaf_port,
                sm.leaf_sub,
                speed,
                SM_ROLE,
                "",
                0,
                sm.host,
                SM_NIC,
                f"{sm.host} {SM_NIC}",
                leaf.mtu,
                False,
                speed_setting=setting,
            )
        )
        if per_cage > 1:
            breakouts.setdefault(sm.leaf_port, Breakout(sm.leaf_port, per_cage, speed))
        links.append(
            Link(SM_LINK, Endpoint(sm.host, SM_NIC, 1), Endpoint(leaf.name, name, sm.leaf_port), speed, "", "", "", length_m, mtu=leaf.mtu)
        )
    return dataclasses.replace(
        leaf,
        interfaces=tuple(sorted(interfaces, key=lambda i: (i.port, i.sub, i.name))),
        breakouts=tuple(sorted(breakouts.values(), key=lambda b: b.port)),
        ports_used=len({i.port for i in interfaces if i.port}),
    )
