"""A UDP flow agent the traffic drills run inside one server namespace (`python -m fabricgen.lab.flows`).

It sends `--flows` flows to every peer, each from its own source port (a different 5-tuple, so
the switches' L4 ECMP hash spreads them), numbered packets at `--rate` per second per flow for
`--seconds`, and receives its peers' flows on `--port`. Sequence numbers count loss exactly; the
send time of every packet (CLOCK_MONOTONIC, shared by every namespace of the host) places a lost
packet in a drill phase. SIGTERM ends the sending early. It writes one JSON file: per flow the send
times and the numbers received.
Bounded by construction: only the addresses given, only for the time given.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import struct
import threading
import time
from collections.abc import Sequence
from pathlib import Path

PACKET = struct.Struct("!IId")
"""flow number, sequence number, send time: the whole payload."""
READY_S = 30.0
"""Longest wait for the go file before sending anyway."""
LINGER = 1.5
"""Seconds the receiver keeps listening after the last packet was sent (packets in flight)."""


def _receive(sock: socket.socket, until: list[float], received: dict[str, list[int]]) -> None:
    sock.settimeout(0.2)
    while time.monotonic() < until[0]:
        try:
            data, (address, port) = sock.recvfrom(64)
        except TimeoutError:
            continue
        if len(data) == PACKET.size:
            received.setdefault(f"{address}:{port}", []).append(PACKET.unpack(data)[1])


def _send(
    sockets: Sequence[tuple[socket.socket, tuple[str, int]]], rate: float, seconds: float, stop: threading.Event
) -> dict[int, list[float]]:
    sent: dict[int, list[float]] = {index: [] for index in range(len(sockets))}
    interval, start = 1.0 / rate, time.monotonic()
    tick = 0
    while (now := time.monotonic()) < start + seconds and not stop.is_set():
        for index, (sock, target) in enumerate(sockets):
            sequence = len(sent[index])
            sent[index].append(now)
            with contextlib.suppress(OSError):  # no route for a moment: the packet is lost, as on a switch
                sock.sendto(PACKET.pack(index, sequence, now), target)
        tick += 1
        stop.wait(max(0.0, start + tick * interval - time.monotonic()))
    return sent


def _ready(out: Path, deadline: float) -> None:
    """Say this agent listens (`<out>.ready`) and wait for the drill's `go` file beside it, so no
    agent sends before every peer listens (a packet to a closed port would count as lost)."""
    out.with_suffix(".ready").touch()
    go = out.parent / "go"
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.01)


def run(address: str, port: int, peers: Sequence[str], flows: int, rate: float, seconds: float, out: Path) -> None:
    """Send to and receive from `peers` for `seconds` once the drill says go, then write `out`."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    listener.bind((address, port))
    _ready(out, time.monotonic() + READY_S)
    received: dict[str, list[int]] = {}
    until = [time.monotonic() + seconds + LINGER + 5]
    thread = threading.Thread(target=_receive, args=(listener, until, received), daemon=True)
    thread.start()
    senders: list[tuple[socket.socket, tuple[str, int]]] = []
    for peer in (peer for peer in peers for _ in range(flows)):
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((address, port + 1 + len(senders)))
        senders.append((sock, (peer, port)))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    sent = _send(senders, rate, seconds, stop)
    until[0] = time.monotonic() + LINGER
    thread.join()
    flows_out = {
        f"{address}:{sock.getsockname()[1]}>{target[0]}": times for (sock, target), times in zip(senders, sent.values(), strict=True)
    }
    out.write_text(json.dumps({"sent": flows_out, "received": received}))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m fabricgen.lab.flows", description=__doc__)
    parser.add_argument("--address", required=True)
    parser.add_argument("--port", type=int, default=40000)
    parser.add_argument("--peer", action="append", default=[])
    parser.add_argument("--flows", type=int, default=4)
    parser.add_argument("--rate", type=float, default=25.0)
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    run(args.address, args.port, args.peer, args.flows, args.rate, args.seconds, args.out)


if __name__ == "__main__":
    main()
