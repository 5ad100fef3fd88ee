"""Routing state for the STAND-IN devices from the real lab (FRR + lldpd in network namespaces,
`fabricgen lab`): the `RoutingState` the stand-ins use when a lab runs.

Whenever a stand-in's running config changes (commit, rollback, an expired commit timer), the
routing part of that config, as the vendors' own parsers read it (tests/standins/parsers.py:
interface addresses, local ASN, BGP neighbors and their remote-as), replaces that switch's FRR
config in the lab. The stand-in's `show ip bgp summary`, `show lldp neighbors` and
`show interfaces` then answer from FRR, lldpd and the kernel, not from the plan.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from fabricgen.lab.configs import frr_config
from fabricgen.lab.lab import Lab
from fabricgen.lab.topology import LabNeighbor, LabSwitch, LabTopology
from tests.standins import parsers

if TYPE_CHECKING:
    from tests.standins.device_api import StandinDevice


class LabRouting:
    def __init__(self, lab: Lab, topology: LabTopology) -> None:
        self.lab = lab
        self.topology = topology
        self.devices: dict[str, StandinDevice] = {}  # filled by the test fixture, as for ConfigRouting

    def switch_for(self, device: StandinDevice) -> LabSwitch:
        """The planned lab switch with the routing part of the device's committed config."""
        planned = self.topology.switch(device.name)
        asn, neighbors = parsers.bgp(device.platform, device.running)
        addresses = parsers.addresses(device.platform, device.running)
        ports = []  # only the ports the config addresses: the others carry no IP in FRR
        for port in planned.ports:
            cidr = addresses.get(port.planned.lower(), "")
            if cidr:
                address, _, length = cidr.partition("/")
                ports.append(dataclasses.replace(port, address=address, prefix_length=int(length or 32)))
        by_address = {n.address: n for n in planned.neighbors}
        lab_neighbors = []
        for address, remote_as in sorted(neighbors.items()):
            if not remote_as:
                continue  # no remote-as: the switch would not start the session either
            known = by_address.get(address)
            group = known.peer_group if known else (planned.peer_groups[0].name if planned.peer_groups else "FABRIC")
            lab_neighbors.append(
                LabNeighbor(
                    address,
                    int(remote_as or 0),
                    group,
                    known.description if known else address,
                    False,
                    known.peer_node if known else "",
                    known.peer_planned if known else "",
                )
            )
        groups = tuple(dataclasses.replace(g, remote_asn=0) for g in planned.peer_groups)
        return dataclasses.replace(
            planned, asn=int(asn or planned.asn), ports=tuple(ports), neighbors=tuple(lab_neighbors), peer_groups=groups
        )

    def apply(self, device: StandinDevice) -> None:
        switch = self.switch_for(device)
        work = self.lab.node_work(device.name)
        self.lab.replace_frr_config(device.name, frr_config(self.topology, switch, self.lab.timers, str(work / "frr.log")))

    def bgp(self, device: StandinDevice) -> dict[str, tuple[str, int, str]]:
        summary = self.lab.bgp_summary(device.name)
        peers: dict[str, Any] = summary.get("peers", {}) if isinstance(summary, dict) else {}
        return {
            address: (str(peer.get("state", "unknown")), int(peer.get("pfxRcd", 0) or 0), str(peer.get("remoteAs", "")))
            for address, peer in peers.items()
        }

    def _planned_names(self, device: StandinDevice) -> dict[str, str]:
        return {port.kernel: port.planned for port in self.topology.switch(device.name).ports}

    def lldp(self, device: StandinDevice) -> list[tuple[str, str, str]]:
        data = self.lab.lldp_neighbors(device.name)
        names = self._planned_names(device)
        entries = (data.get("lldp") or {}).get("interface") or [] if isinstance(data, dict) else []
        if isinstance(entries, dict):
            entries = [{name: value} for name, value in entries.items()]
        seen = []
        for entry in entries:
            for port, info in entry.items():
                chassis = info.get("chassis") or {}
                system = next(iter(chassis), "") if isinstance(chassis, dict) else ""
                far = str(((info.get("port") or {}).get("id") or {}).get("value", ""))
                far_planned = {p.kernel: p.planned for s in self.topology.switches if s.name == system for p in s.ports}.get(far, far)
                seen.append((names.get(port, port), system, far_planned))
        return seen

    def interfaces(self, device: StandinDevice) -> dict[str, str]:
        names = self._planned_names(device)
        return {
            names[link["ifname"]]: "up" if link.get("operstate") == "UP" else str(link.get("operstate", "down")).lower()
            for link in self.lab.interfaces(device.name)
            if link.get("ifname") in names
        }
