"""A switch whose OS runs FRR itself (SONiC): the lab runs the switch's own rendered files.

`lab:` in the platform's platform.yml names them (docs/sonic.md, "In the lab"): `frr_config`,
the FRR config the switch loads, which the lab writes byte for byte and hands to `vtysh -f`
instead of rendering templates/frr; and `config_db`, SONiC's config_db.json, read for the
kernel side SONiC's own daemons build from it (portmgrd: the port names and MTUs of PORT;
intfmgrd: the addresses of INTERFACE and LOOPBACK_INTERFACE). zebra then learns the addresses
from the kernel, as it does on the switch. The files come from the code `fabricgen render` runs
(`configs.devices.render_devices`), so what the lab runs is what render writes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from fabricgen import platforms as registry
from fabricgen.configs.devices import render_devices
from fabricgen.core.model import Device, Plan
from fabricgen.render.context import RenderContext


class NativeConfigError(ValueError):
    """A rendered file the lab cannot read as the platform's config (reported as bad input)."""


@dataclass(frozen=True, slots=True)
class NativeConfig:
    """What the lab runs for one switch of such a platform."""

    frr_config: str
    """The rendered FRR config, run unmodified."""
    frr_path: str
    """Where `fabricgen render` writes it, under the output folder (`configs/<name>/frr.conf`)."""
    addresses: tuple[tuple[str, str], ...]
    """(kernel interface, address/length) from INTERFACE and LOOPBACK_INTERFACE, sorted."""
    mtus: tuple[tuple[str, int], ...]
    """(port, MTU) from PORT."""
    loopbacks: tuple[str, ...]
    """Interfaces of LOOPBACK_INTERFACE: dummy interfaces in the kernel, as on the switch."""
    port_pattern: str
    """Glob of the platform's port names (`lab.port_pattern`): the ports lldpd runs on."""


def lab_settings(platform: str) -> dict[str, Any]:
    """The platform's `lab:` section (empty: the lab renders templates/frr for its switches)."""
    return dict(registry.entry(platform).get("lab") or {})


def native_config(plan: Plan, device: Device) -> NativeConfig | None:
    """The switch's own files, when its platform names them; None otherwise."""
    settings = lab_settings(device.platform)
    if not settings:
        return None
    rendered = render_devices((plan, RenderContext(), (device,)), 0, 1)
    frr_path = f"configs/{str(settings['frr_config']).format(name=device.name)}"
    db_path = f"configs/{str(settings['config_db']).format(name=device.name)}"
    missing = [path for path in (frr_path, db_path) if path not in rendered]
    if missing:
        raise NativeConfigError(f"{device.name}: platform {device.platform} renders no {', '.join(missing)} (its `lab:` names them)")
    try:
        db = json.loads(rendered[db_path])
    except json.JSONDecodeError as exc:
        raise NativeConfigError(f"{device.name}: {db_path} is not JSON: {exc}") from exc
    addresses, loopbacks = kernel_addresses(db, device.name)
    pattern = str(settings["port_pattern"])
    return NativeConfig(rendered[frr_path], frr_path, addresses, port_mtus(db, device.name), loopbacks, pattern)


def _table(db: Any, name: str, device: str) -> dict[str, Any]:
    table = db.get(name, {}) if isinstance(db, dict) else None
    if not isinstance(table, dict):
        raise NativeConfigError(f"{device}: config_db {name} is not a table of entries")
    return table


def kernel_addresses(db: Any, device: str) -> tuple[tuple[tuple[str, str], ...], tuple[str, ...]]:
    """The addresses SONiC's intfmgrd puts on the kernel's interfaces: INTERFACE and
    LOOPBACK_INTERFACE keys `<interface>|<address>/<length>` (a key without `|` is the
    interface's own entry and carries no address).

    >>> kernel_addresses({"INTERFACE": {"Ethernet0": {}, "Ethernet0|10.0.0.1/31": {}},
    ...                   "LOOPBACK_INTERFACE": {"Loopback0|10.1.0.1/32": {}}}, "x")
    ((('Ethernet0', '10.0.0.1/31'), ('Loopback0', '10.1.0.1/32')), ('Loopback0',))
    """
    found: list[tuple[str, str]] = []
    loopbacks: set[str] = set()
    for table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        for key in _table(db, table, device):
            interface, bar, cidr = str(key).partition("|")
            if bar and "/" in cidr:
                found.append((interface, cidr))
            elif bar:
                raise NativeConfigError(f"{device}: config_db {table} key {key!r} has no prefix length")
            if table == "LOOPBACK_INTERFACE":
                loopbacks.add(interface)
    return tuple(sorted(found)), tuple(sorted(loopbacks))


def port_mtus(db: Any, device: str) -> tuple[tuple[str, int], ...]:
    """PORT `mtu` of every port (portmgrd sets it on the kernel's interface).

    >>> port_mtus({"PORT": {"Ethernet8": {"mtu": "9100"}, "Ethernet0": {"mtu": "9216"}}}, "x")
    (('Ethernet0', 9216), ('Ethernet8', 9100))
    """
    mtus = []
    for port, entry in _table(db, "PORT", device).items():
        value = entry.get("mtu") if isinstance(entry, dict) else None
        if not str(value or "").isdigit():
            raise NativeConfigError(f"{device}: config_db PORT {port} has no numeric mtu ({value!r})")
        mtus.append((str(port), int(str(value))))
    return tuple(sorted(mtus))
