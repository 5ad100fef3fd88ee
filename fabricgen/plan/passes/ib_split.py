"""Pass: the InfiniBand switch ports that must be split, per switch (`InfinibandPlan.switch_splits`).

NVIDIA's InfiniBand switches do not sense split cables: a port that carries two narrower links
(HDR100 on a QM8790 port, NDR200 on a port of a QM9700 twin-port cage) must be split in the
switch's OS before the cable works (NVIDIA "InfiniBand Cluster Bring-up Procedure", "Configuring a
Split Port"). A cage is split when it runs more logical ports than it has natively (one port,
or two on a twin-port cage); every native port of such a cage is split, since both ports of a
twin-port module are the same kind. Runs after the SM hosts are cabled, whose ports may open a
cage of their own.
"""

from __future__ import annotations

from collections.abc import Mapping

from fabricgen.core.model import Device, Model, Platform, SplitLeg, SwitchSplit


def switch_splits(devices: tuple[Device, ...], models: Mapping[str, Model], platforms: Mapping[str, Platform]) -> tuple[SwitchSplit, ...]:
    """Every switch with split cages: the ports to split (named as before the split) and the split
    ports with what is cabled to them."""
    result = []
    for device in devices:
        model = models[device.model]
        native = 2 if model.twin_port else 1
        split = [b for b in device.breakouts if b.count > native]
        if not split:
            continue
        platform = platforms[device.platform]
        peers = {(i.port, i.sub): i.description for i in device.interfaces}
        ports, legs = [], []
        for breakout in split:
            per_port = breakout.count // native
            ports += [platform.port_name(breakout.port, half, native, model.lanes) for half in range(1, native + 1)]
            legs += [
                SplitLeg(platform.port_name(breakout.port, sub, breakout.count, model.lanes), peers.get((breakout.port, sub), ""))
                for sub in range(1, native * per_port + 1)
            ]
        result.append(SwitchSplit(device.name, device.model, tuple(ports), tuple(legs)))
    return tuple(result)
