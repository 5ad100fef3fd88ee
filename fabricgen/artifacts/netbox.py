"""NetBox bulk-import files: everything `cabling.csv` names, so an import in order needs no hand work.

One CSV per NetBox import form, with exactly that form's columns (NetBox rejects unknown
headers), imported in this order (docs/artifacts.md):

1. `netbox-manufacturers.csv`   DCIM > Manufacturers > Import
2. `netbox-device-roles.csv`    DCIM > Device Roles > Import
3. `netbox-sites.csv`           DCIM > Sites > Import (one site named after the fabric)
4. `netbox-device-types.csv`    DCIM > Device Types > Import (switch models and the server type,
                                without interface templates: interfaces.csv creates every port)
5. `devices.csv`                DCIM > Devices > Import (switches, servers and dedicated
                                subnet-manager hosts)
6. `interfaces.csv`             DCIM > Interfaces > Import (every cabled port, breakout halves
                                such as `Ethernet1/5`, server NICs `nic1`... and SM hosts' `nic1`)
7. `cabling.csv`                DCIM > Cables > Import (fabricgen/artifacts/cabling.py)

NetBox's cable import form takes one termination per side, so a breakout or splitter cable (one
physical cable, one shared cage to several ports) cannot be a CSV row; NetBox's Cable model
accepts several terminations of one type per side, through its REST API. Those cables are in
`netbox-breakout-cables.json`, one object per physical cable with its terminations by device and
interface name.
"""

from __future__ import annotations

import json

from fabricgen.artifacts.common import csv_text, metres, natural_key, natural_order
from fabricgen.core.model import SM_LINK, Cable, Plan, SubnetManager
from fabricgen.render.context import RenderContext

MANUFACTURER_COLUMNS = ("name", "slug")
ROLE_COLUMNS = ("name", "slug", "color")
SITE_COLUMNS = ("name", "slug", "status")
DEVICE_TYPE_COLUMNS = ("manufacturer", "model", "slug", "u_height")
DEVICE_COLUMNS = ("name", "role", "manufacturer", "device_type", "status", "site", "serial", "description")
INTERFACE_COLUMNS = ("device", "name", "type", "enabled", "description")

SERVER_MANUFACTURER = "Generic"
SERVER_DEVICE_TYPE = "GPU server"
"""Servers are not catalog models: one generic device type holds them (rename it in NetBox)."""
SM_DEVICE_TYPE = "Subnet manager host"
SM_ROLE = "subnet-manager"
"""Dedicated OpenSM hosts (InfiniBand `subnet_managers` naming no server): their own role and type."""
ROLE_COLOURS = {"leaf": "2196f3", "spine": "4caf50", "superspine": "9c27b0", "server": "9e9e9e", SM_ROLE: "ff9800"}


def slug(text: str) -> str:
    """NetBox slugs: lower case, letters, digits, dashes.

    >>> slug("DCS-7060DX5-64S-F"), slug("GPU server")
    ('dcs-7060dx5-64s-f', 'gpu-server')
    """
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")


def _switch_types(plan: Plan) -> dict[str, tuple[str, str]]:
    """Catalog model -> (NetBox manufacturer, device type)."""
    return {m.name: (m.netbox.get("manufacturer", m.vendor), m.netbox.get("device_type", m.name)) for m in plan.models}


def _heights(plan: Plan) -> dict[tuple[str, str], str]:
    types = _switch_types(plan)
    return {types[m.name]: m.netbox.get("u_height", "1") for m in plan.models}


def _interfaces(plan: Plan) -> list[tuple[str, str, str, str, str]]:
    """Every cabled interface: switch ports (with their logical breakout names) and server NICs."""
    types = {m.name: m.netbox_interface_types for m in plan.models}
    rows = [
        (device.name, interface.name, kinds.get(interface.speed, "other"), "true", interface.description)
        for device in plan.devices
        for kinds in (types[device.model],)
        for interface in device.interfaces
        if interface.port
    ]
    nic_types = {n.name: n.netbox_interface_types.get(plan.transport, "other") for n in plan.nics}
    for server in plan.servers:
        kind = nic_types.get(server.nic_model, "other")
        rows.extend((server.name, f"nic{nic.nic}", kind, "true", f"{nic.leaf} {nic.leaf_interface}") for nic in server.nics)
    hosts = {sm.host: sm for sm in _sm_hosts(plan)}
    for link in plan.links if hosts else ():  # most fabrics have no dedicated SM host: no scan
        if link.kind == SM_LINK and link.a.device in hosts:
            kind = nic_types.get(hosts[link.a.device].nic_model, "other")
            rows.append((link.a.device, link.a.interface, kind, "true", f"{link.z.device} {link.z.interface}"))
    return [rows[i] for i in natural_order([row[0] for row in rows], [row[1] for row in rows])]


def _devices(plan: Plan) -> list[tuple[str, ...]]:
    types = _switch_types(plan)
    rows = [(d.name, d.role, *types[d.model], "planned", plan.name, d.serial, d.model) for d in plan.devices]
    rows += [(s.name, "server", SERVER_MANUFACTURER, SERVER_DEVICE_TYPE, "planned", plan.name, "", s.nic_model) for s in plan.servers]
    rows += [(h.host, SM_ROLE, SERVER_MANUFACTURER, SM_DEVICE_TYPE, "planned", plan.name, "", h.nic_model) for h in _sm_hosts(plan)]
    return sorted(rows, key=lambda r: natural_key(r[0]))


def _sm_hosts(plan: Plan) -> list[SubnetManager]:
    """Dedicated subnet-manager hosts that are cabled (their `sm-leaf` link is in the plan); the
    links are read only when there is such a host (an InfiniBand fabric's few)."""
    dedicated = [sm for sm in (plan.infiniband.subnet_managers if plan.infiniband else ()) if not sm.server]
    cabled = {link.a.device for link in plan.links if link.kind == SM_LINK} if dedicated else set()
    return [sm for sm in dedicated if sm.host in cabled]


def _breakout_json(plan: Plan, cables: list[Cable]) -> str:
    """One REST API cable object per physical breakout/splitter cable, terminations by name."""
    grouped: dict[tuple[str, ...], list[Cable]] = {}
    for cable in cables:
        grouped.setdefault(cable.items.cable, []).append(cable)
    objects = []
    for members in grouped.values():
        first = members[0]
        a_ends = sorted({(c.link.a.device, c.link.a.interface) for c in members}, key=lambda e: (natural_key(e[0]), natural_key(e[1])))
        z_ends = sorted({(c.link.z.device, c.link.z.interface) for c in members}, key=lambda e: (natural_key(e[0]), natural_key(e[1])))
        objects.append(
            {
                "type": first.choice.netbox_type,
                "status": "planned",
                "label": "+".join(f"{d}:{i}" for d, i in a_ends) + "--" + "+".join(f"{d}:{i}" for d, i in z_ends),
                "length": float(metres(first.link.length_m)),
                "length_unit": "m",
                "description": f"{first.link.speed}G {first.choice.variant}: {first.choice.cable_part}",
                "a_terminations": [{"object_type": "dcim.interface", "device": d, "name": i} for d, i in a_ends],
                "b_terminations": [{"object_type": "dcim.interface", "device": d, "name": i} for d, i in z_ends],
            }
        )
    objects.sort(key=lambda o: natural_key(str(o["label"])))
    return json.dumps({"fabric": plan.name, "cables": objects}, indent=2, sort_keys=True) + "\n"


def netbox(plan: Plan, context: RenderContext) -> dict[str, str]:
    types = _switch_types(plan)
    sm_hosts = _sm_hosts(plan)
    manufacturers = sorted({m for m, _ in types.values()} | ({SERVER_MANUFACTURER} if plan.servers or sm_hosts else set()))
    roles = sorted({d.role for d in plan.devices} | ({"server"} if plan.servers else set()) | ({SM_ROLE} if sm_hosts else set()))
    heights = _heights(plan)
    device_types = sorted({(m, t, slug(t), heights[(m, t)]) for m, t in types.values()})
    if plan.servers:
        device_types.append((SERVER_MANUFACTURER, SERVER_DEVICE_TYPE, slug(SERVER_DEVICE_TYPE), "2"))
    if sm_hosts:
        device_types.append((SERVER_MANUFACTURER, SM_DEVICE_TYPE, slug(SM_DEVICE_TYPE), "1"))
    files = {
        "netbox-manufacturers.csv": csv_text(MANUFACTURER_COLUMNS, [(m, slug(m)) for m in manufacturers]),
        "netbox-device-roles.csv": csv_text(ROLE_COLUMNS, [(r, slug(r), ROLE_COLOURS.get(r, "9e9e9e")) for r in roles]),
        "netbox-sites.csv": csv_text(SITE_COLUMNS, [(plan.name, slug(plan.name), "planned")]),
        "netbox-device-types.csv": csv_text(DEVICE_TYPE_COLUMNS, device_types),
        "devices.csv": csv_text(DEVICE_COLUMNS, _devices(plan)),
        "interfaces.csv": csv_text(INTERFACE_COLUMNS, _interfaces(plan)),
    }
    broken = [c for c in plan.cables if c.breakout]
    if broken:
        files["netbox-breakout-cables.json"] = _breakout_json(plan, broken)
    return files
