"""Pass: PFC buffer headroom of every lossless port, from its cable (docs/render.md, "PFC headroom").

After a port sends PFC PAUSE it still receives what was on the wire and what the sender emits
before it reacts; the ingress buffer must hold those bytes or the "lossless" class drops them.
Per port and no-drop priority (Cisco PFC white paper c11-542809, IEEE 802.1Qbb):

- two maximum frames: the one this port is sending when it decides to pause (the PAUSE waits for
  it) and the one the peer is sending when the PAUSE arrives (it is finished);
- the PFC frame itself;
- the cable round trip: the PAUSE travels up the cable while data keeps coming down it;
- the peer's response time: how long its MAC/PHY take to stop after receiving the PAUSE.

The peer's response time is platform data (`pfc_response_ns` in platforms/<os>/platform.yml); the cable's
length, speed and MTU come from the cable. The wiring passes give each port its stage's figure
(`cable_headroom`, computed once per distinct cable: a stage's cables share length, speed, MTU
and platforms); after the cabling pass, `port_headroom` works out the figures of the cables whose
length `cabling.overrides` changed, and the device pass sets them on those ports.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

from fabricgen.core.model import ClassHeadroom, Interface, Link, Platform

NS_PER_METRE = 5.13
"""Signal delay in fibre: 513 ns per 100 m of single-mode fibre (Cisco white paper c11-542809;
copper is faster at 476 ns per 100 m, so the fibre figure bounds both)."""
FRAME_OVERHEAD = 18 + 20
"""Bytes a maximum frame adds to the IP MTU: Ethernet header and FCS (18), preamble, start
delimiter and inter-frame gap (20)."""
PFC_FRAME = 64 + 20
"""A PFC frame on the wire: a minimum-size frame plus preamble and gap."""


def pfc_headroom_bytes(length_m: float, speed_gbps: int, mtu: int, response_ns: int) -> int:
    """Bytes a port must still accept after it sends PAUSE, rounded up.

    400G over 100 m at MTU 9214 with a 1,160 ns response: 2 x 9,252 + 84 bytes of frames,
    100 m x 2 x 5.13 ns x 50 bytes/ns = 51,300 bytes on the cable, 1,160 ns x 50 = 58,000
    bytes while the peer reacts:

    >>> pfc_headroom_bytes(100, 400, 9214, 1160)
    127888
    >>> pfc_headroom_bytes(3, 400, 9214, 1160) < pfc_headroom_bytes(150, 400, 9214, 1160)
    True
    """
    bytes_per_ns = speed_gbps / 8
    frames = 2 * (mtu + FRAME_OVERHEAD) + PFC_FRAME
    cable = 2 * length_m * NS_PER_METRE * bytes_per_ns
    response = response_ns * bytes_per_ns
    return math.ceil(frames + cable + response)


def cable_headroom(length_m: float, speed_gbps: int, mtu: int, response_ns: int) -> int:
    """`pfc_headroom_bytes`, computed once per distinct cable: the wiring passes ask for every
    cable end, and the cables of a stage share their length, speed, MTU and platforms."""
    key = (length_m, speed_gbps, mtu, response_ns)
    figure = _FIGURES.get(key)
    if figure is None:
        figure = _FIGURES[key] = pfc_headroom_bytes(*key)
    return figure


_FIGURES: dict[tuple[float, int, int, int], int] = {}


def port_headroom(links: Iterable[Link], platform_of: Mapping[str, str], platforms: Mapping[str, Platform]) -> dict[str, dict[str, int]]:
    """switch -> interface -> the PFC headroom of that cable end; the device pass sets it on the
    end's interface when it carries RoCE. Each figure uses the response time of the platform at
    the other end of the cable (the one that keeps sending), or the end's own platform's when
    the other end is a server (`platform_of` names only switches). The figure depends on a few
    values that most cables share: `cable_headroom` computes it once per distinct combination. Keyed by
    device first: the device pass looks up its own table once, then each port by name.

    >>> from fabricgen.core.catalog import models_for, platforms
    >>> from fabricgen.core.model import Endpoint
    >>> cable = Link(kind="leaf-spine", a=Endpoint("l1", "Ethernet1/1", 1), z=Endpoint("s1", "Ethernet9/1", 9), speed=400,
    ...              subnet="", a_address="", z_address="", length_m=100.0, mtu=9214)
    >>> name = models_for({})["arista-7060dx5-64s"].platforms[0]  # the OS of both ends
    >>> sends = platforms()[name].pfc_response_ns
    >>> port_headroom([cable], {"l1": name, "s1": name}, platforms())["s1"] == {"Ethernet9/1": pfc_headroom_bytes(100.0, 400, 9214, sends)}
    True
    """
    response = {name: platforms[platform].pfc_response_ns for name, platform in platform_of.items()}
    headroom: dict[str, dict[str, int]] = {name: {} for name in platform_of}
    for link in links:
        a, z = link.a, link.z
        a_sends, z_sends = response.get(a.device), response.get(z.device)
        if a_sends is not None:
            far = a_sends if z_sends is None else z_sends
            headroom[a.device][a.interface] = cable_headroom(link.length_m, link.speed, link.mtu, far)
        if z_sends is not None:
            far = z_sends if a_sends is None else a_sends
            headroom[z.device][z.interface] = cable_headroom(link.length_m, link.speed, link.mtu, far)
    return headroom


def switch_headroom(interfaces: Iterable[Interface], traffic_class: int) -> tuple[ClassHeadroom, ...]:
    """The PFC headroom the no-drop `traffic_class` needs on one switch: the largest need of its
    RoCE ports, and the first port that needs it. A platform that sizes the no-drop buffer per
    class for every port (NX-OS's input queuing policy) must hold this much; it is the switch's
    intent whether or not its config carries a buffer line. Empty when no port is lossless.

    >>> from fabricgen.core.model import Interface
    >>> def port(name, need):
    ...     return Interface(name=name, port=1, sub=1, speed=400, role="uplink", address="", prefix_length=31, peer_device="",
    ...                      peer_interface="", description="", mtu=9214, roce=need > 0, pfc_headroom_bytes=need)
    >>> switch_headroom([port("e1", 91982), port("e2", 153538), port("e3", 153538), port("e4", 0)], 3)
    (ClassHeadroom(traffic_class=3, headroom_bytes=153538, port='e2'),)
    >>> switch_headroom([port("e4", 0)], 3)
    ()
    """
    worst: Interface | None = None
    for interface in interfaces:
        if interface.roce and (worst is None or interface.pfc_headroom_bytes > worst.pfc_headroom_bytes):
            worst = interface
    if worst is None or not worst.pfc_headroom_bytes:
        return ()
    return (ClassHeadroom(traffic_class, worst.pfc_headroom_bytes, worst.name),)
