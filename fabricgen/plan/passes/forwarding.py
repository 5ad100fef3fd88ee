"""Pass: how each switch spreads traffic over its equal-cost paths, and what it tells its hosts.

- The ECMP hash that includes the UDP source port (RoCEv2's flow entropy: one destination QP
  pair is one UDP source port), per silicon family: platform data `ecmp_hash`, keyed by the
  catalog's `queue_family` (`default` for every model of the platform). A family without an
  entry keeps the switch's default hash and gets no line.
- Dynamic (flowlet) load balancing on the switch-facing ports, the members of every ECMP group,
  when `roce.load_balancing: flowlet` and the platform has a mode for it (`dlb_modes`). The
  catalog says which models run it; `checks.check_load_balancing` refuses the others, so the
  plan never holds a request a switch cannot honour.
- IEEE DCBX on RoCE host ports when `roce.dcbx` is on and the platform has a per-port command
  (`dcbx_command`); the NICs then learn PFC and ETS from the switch instead of being told twice.
- The PFC headroom the switch's no-drop class needs (`Device.pfc_headroom`, the largest need of
  its RoCE ports: `headroom.switch_headroom`), decided here because this pass already visits
  every RoCE switch once with its platform's profile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from fabricgen.core.model import Device, Interface, Model, Platform, RocePolicy
from fabricgen.plan.passes.headroom import switch_headroom

SWITCH_FACING = frozenset({"uplink", "downlink"})
"""Interface roles of cables to another switch: the ports ECMP (and DLB) choose among."""
HOST_PORTS = frozenset({"server", "server-l2"})
"""Interface roles of cables to a server NIC."""


def with_forwarding(
    devices: tuple[Device, ...], roce: RocePolicy, catalog: Mapping[str, Model], platforms: Mapping[str, Platform]
) -> tuple[Device, ...]:
    """Every device with its ECMP hash, load-balancing mode and DCBX ports decided."""
    return tuple(_forwarding(device, roce, catalog[device.model], platforms[device.platform]) for device in devices)


def _forwarding(device: Device, roce: RocePolicy, model: Model, platform: Platform) -> Device:
    hashes = platform.ecmp_hash
    dlb_mode = platform.dlb_modes.get(roce.load_balancing, "") if model.dynamic_load_balancing else ""
    dlb = tuple(i.name for i in device.interfaces if i.role in SWITCH_FACING) if dlb_mode else ()
    interfaces = device.interfaces
    if roce.dcbx and platform.dcbx_command:
        interfaces = tuple(_with_dcbx(i) for i in interfaces)
    return dataclasses.replace(
        device,
        interfaces=interfaces,
        ecmp_hash=hashes.get(model.queue_family, hashes.get("default", "")),
        dlb_mode=dlb_mode,
        dlb_interfaces=dlb,
        pfc_headroom=switch_headroom(interfaces, roce.profiles[device.platform].data_traffic_class),
    )


def _with_dcbx(interface: Interface) -> Interface:
    """A RoCE host port runs DCBX; every other port is left as it is."""
    return dataclasses.replace(interface, dcbx=True) if interface.roce and interface.role in HOST_PORTS else interface
