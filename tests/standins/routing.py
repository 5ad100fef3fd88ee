"""Routing state for the STAND-IN devices, derived from their committed configs.

`ConfigRouting` is the default `RoutingState`: every link of the cabling plan is up; LLDP shows
the cabled far end; a BGP session is Established only when both ends' committed configs agree,
as the vendors' own parsers read them (tests/standins/parsers.py): the local interface on the
cabled link holds an address in the same subnet as the neighbor, the far end holds the neighbor
address on the far interface, the remote-as equals the far end's ASN, and the far end has the
mirror neighbor. A lab-backed source (FRR + lldpd in namespaces) implements the same four methods.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tests.standins import parsers

if TYPE_CHECKING:
    from tests.standins.device_api import StandinDevice


@dataclass
class ConfigRouting:
    devices: dict[str, StandinDevice] = field(default_factory=dict)

    def apply(self, device: StandinDevice) -> None:
        """Nothing to push: the state is read from the committed configs on demand."""

    def _view(self, device: StandinDevice) -> tuple[str, dict[str, str], dict[str, str]]:
        asn, neighbors = parsers.bgp(device.platform, device.running)
        return asn, neighbors, parsers.addresses(device.platform, device.running)

    def bgp(self, device: StandinDevice) -> dict[str, tuple[str, int, str]]:
        asn, neighbors, addresses = self._view(device)
        links = {local.lower(): (peer, far.lower()) for local, peer, far in device.cabling}
        sessions = {}
        for address, remote_as in neighbors.items():
            sessions[address] = (
                ("Established", 1, remote_as)
                if self._agree(device, asn, address, remote_as, addresses, links)
                else ("Active", 0, remote_as)
            )
        return sessions

    def _agree(
        self, device: StandinDevice, asn: str, address: str, remote_as: str, addresses: dict[str, str], links: dict[str, tuple[str, str]]
    ) -> bool:
        target = ipaddress.ip_address(address)
        for interface, cidr in addresses.items():
            network = ipaddress.ip_interface(cidr)
            if target not in network.network or interface not in links:
                continue
            peer_name, far = links[interface]
            peer = self.devices.get(peer_name)
            if peer is None:
                return False
            peer_asn, peer_neighbors, peer_addresses = self._view(peer)
            far_address = peer_addresses.get(far, "").split("/")[0]
            mine = str(network.ip)
            return far_address == address and peer_asn == remote_as and peer_neighbors.get(mine) == asn
        return False

    def lldp(self, device: StandinDevice) -> list[tuple[str, str, str]]:
        return [(local, peer, far) for local, peer, far in device.cabling if peer in self.devices]

    def interfaces(self, device: StandinDevice) -> dict[str, str]:
        return {local: "up" for local, peer, far in device.cabling}
