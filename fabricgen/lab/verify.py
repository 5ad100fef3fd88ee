"""`lab verify` checks 1-6 on a running lab, each polled until it holds or its deadline passes.

Expectations come from the plan's `LabTopology` (see `expect.py`), never from what the lab
shows; a check that still fails at its deadline names the device, port and reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from fabricgen.lab import expect
from fabricgen.lab.kernel import LabError, ecmp_width
from fabricgen.lab.lab import Lab
from fabricgen.lab.report import Check
from fabricgen.lab.topology import LabTopology

T = TypeVar("T")
R = TypeVar("R")
WORKERS = 8
"""Parallel queries (each is a vtysh/ip/lldpcli process: waiting, not computing)."""


def each(items: Iterable[T], query: Callable[[T], R]) -> list[tuple[T, R | LabError]]:
    """`query` on every item, in parallel; a LabError is returned in place of its result."""

    def guarded(item: T) -> R | LabError:
        try:
            return query(item)
        except LabError as exc:
            return exc

    items = list(items)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        return list(zip(items, pool.map(guarded, items), strict=True))


def poll(build: Callable[[], Check], timeout: float, interval: float = 1.0) -> Check:
    """Run a check until it passes or `timeout` seconds pass; the last result counts."""
    start = time.monotonic()
    while True:
        check = build()
        if check.passed or time.monotonic() - start >= timeout:
            check.seconds = time.monotonic() - start
            return check
        time.sleep(interval)


def check_bgp(lab: Lab, plan: LabTopology) -> Check:
    check = Check(1, "bgp", "BGP: every planned session Established with the planned remote ASN, none unplanned")
    sessions = 0
    for switch, summary in each(plan.switches, lambda s: lab.bgp_summary(s.name)):
        if isinstance(summary, LabError):
            check.fail(switch.name, str(summary))
            continue
        peers: dict[str, Any] = summary.get("peers", {}) if isinstance(summary, dict) else {}
        planned = {n.address: n for n in switch.neighbors}
        for address, neighbor in sorted(planned.items()):
            peer = peers.get(address)
            where = f"{neighbor.peer_node} {neighbor.peer_planned} ({address})"
            if peer is None:
                check.fail(switch.name, f"no session to {where}")
            elif peer.get("state") != "Established":
                check.fail(
                    switch.name, f"session to {where} is {peer.get('state')}, not Established (planned remote AS {neighbor.remote_asn})"
                )
            elif peer.get("remoteAs") != neighbor.remote_asn:
                check.fail(switch.name, f"session to {where} has remote AS {peer.get('remoteAs')}, planned {neighbor.remote_asn}")
            else:
                sessions += 1
        for address in sorted(set(peers) - set(planned)):
            check.fail(switch.name, f"unplanned BGP session to {address} ({peers[address].get('state')})")
    check.evidence.append(
        f"{sessions} of {sum(len(s.neighbors) for s in plan.switches)} planned sessions Established with the planned remote AS"
    )
    return check


def check_bfd(lab: Lab, plan: LabTopology) -> Check:
    slower = f"; planned {plan.bfd_planned_ms} ms, slowed for the lab's size" if plan.bfd_planned_ms else ""
    check = Check(2, "bfd", f"BFD up on every session ({plan.bfd_interval_ms} ms x {plan.bfd_multiplier}{slower})")
    if not plan.bfd:
        check.skipped = "the plan runs no BFD (bgp.bfd: false)"
        return check
    up = 0
    for switch, peers in each(plan.switches, lambda s: lab.bfd_peers(s.name)):
        if isinstance(peers, LabError):
            check.fail(switch.name, str(peers))
            continue
        state = {p.get("peer"): p for p in peers} if isinstance(peers, list) else {}
        for neighbor in switch.neighbors:
            peer = state.get(neighbor.address)
            where = f"{neighbor.peer_node} {neighbor.peer_planned} ({neighbor.address})"
            if peer is None:
                check.fail(switch.name, f"no BFD session to {where}")
            elif peer.get("status") != "up":
                check.fail(switch.name, f"BFD to {where} is {peer.get('status')}")
            elif (peer.get("detect-multiplier"), peer.get("transmit-interval")) != (plan.bfd_multiplier, plan.bfd_interval_ms):
                check.fail(
                    switch.name,
                    f"BFD to {where} runs {peer.get('transmit-interval')} ms x {peer.get('detect-multiplier')}, "
                    f"planned {plan.bfd_interval_ms} ms x {plan.bfd_multiplier}",
                )
            else:
                up += 1
    check.evidence.append(f"{up} BFD sessions up at the planned interval and multiplier")
    return check


def _lldp_seen(data: Any) -> dict[str, tuple[str, str]]:
    """lldpcli JSON -> {local port: (neighbour system name, neighbour port id)}."""
    seen: dict[str, tuple[str, str]] = {}
    entries = (data.get("lldp") or {}).get("interface") or [] if isinstance(data, dict) else []
    if isinstance(entries, dict):
        entries = [{name: value} for name, value in entries.items()]
    for entry in entries:
        for port, info in entry.items():
            chassis = info.get("chassis") or {}
            name = next(iter(chassis), "") if isinstance(chassis, dict) else ""
            seen[port] = (name, str(((info.get("port") or {}).get("id") or {}).get("value", "")))
    return seen


def check_lldp(lab: Lab, plan: LabTopology) -> Check:
    check = Check(3, "lldp", "LLDP: the neighbour on every switch port is the planned device and port")
    planned_name = {(s.name, p.kernel): p.planned for s in plan.switches for p in s.ports}
    switches = {s.name for s in plan.switches}
    matched = 0
    wrong: dict[tuple[str, str], tuple[str, str]] = {}
    for switch, data in each(plan.switches, lambda s: lab.lldp_neighbors(s.name)):
        if isinstance(data, LabError):
            check.fail(switch.name, str(data))
            continue
        seen = _lldp_seen(data)
        for port in switch.ports:
            if port.peer_node not in switches:
                continue  # servers run no LLDP agent in the lab
            got = seen.get(port.kernel)
            if got is None:
                check.fail(switch.name, f"{port.planned}: no LLDP neighbour (planned {port.peer_node} {port.peer_planned})")
                continue
            got_port = planned_name.get((got[0], got[1]), got[1])
            if (got[0], got_port) == (port.peer_node, port.peer_planned):
                matched += 1
            else:
                wrong[(switch.name, port.planned)] = (got[0], got_port)
                check.fail(switch.name, f"{port.planned}: sees {got[0]} {got_port}, planned {port.peer_node} {port.peer_planned}")
    for (device, local), (node, remote) in sorted(wrong.items()):
        if device < node and wrong.get((node, remote)) is not None:
            check.evidence.append(f"cable miswired: {device} {local} is cabled to {node} {remote}")
    check.evidence.insert(0, f"{matched} switch ports see their planned neighbour")
    return check


def check_ecmp(lab: Lab, plan: LabTopology, faults: expect.Faults = expect.NO_FAULTS, number: int = 4) -> Check:
    check = Check(number, "ecmp", "ECMP: every leaf's kernel route to every remote leaf prefix has the planned width")
    live = expect.graph(plan, faults)
    prefixes = expect.leaf_prefixes(plan)
    leaves = [s for s in plan.switches if s.role == "leaf" and s.name not in faults.switches]
    widths: set[int] = set()
    routes_checked = 0
    for leaf, table in each(leaves, lambda s: lab.routes(s.name)):
        if isinstance(table, LabError):
            check.fail(leaf.name, str(table))
            continue
        installed = {_dst(r): ecmp_width(r) for r in table}
        for other, owned in prefixes.items():
            if other == leaf.name:
                continue
            want = expect.ecmp_width(live, leaf, other)
            for prefix in owned:
                got = installed.get(prefix, 0)
                routes_checked += 1
                if got != want:
                    check.fail(leaf.name, f"route to {prefix} ({other}) has {got} next hop(s), planned {want}")
                widths.add(want)
    check.evidence.append(f"{routes_checked} routes on {len(leaves)} leaves at widths {sorted(widths)}")
    return check


def _dst(route: dict[str, Any]) -> str:
    dst = str(route.get("dst", ""))
    return dst if "/" in dst or dst == "default" else f"{dst}/32"


def check_advertised(lab: Lab, plan: LabTopology) -> Check:
    check = Check(5, "advertised", "Advertised: each switch originates exactly its planned loopback and server subnets")
    total = 0
    for switch, table in each(plan.switches, lambda s: lab.bgp_originated(s.name)):
        if isinstance(table, LabError):
            check.fail(switch.name, str(table))
            continue
        routes = table.get("routes", {}) if isinstance(table, dict) else {}
        local = {prefix for prefix, paths in routes.items() if any(p.get("peerId") == "(unspec)" for p in paths)}
        want = expect.originated(plan, switch)
        total += len(local & want)
        for prefix in sorted(want - local):
            check.fail(switch.name, f"does not advertise {prefix}")
        for prefix in sorted(local - want):
            check.fail(switch.name, f"advertises {prefix}, which the plan does not")
    check.evidence.append(f"{total} planned prefixes originated, nothing else")
    return check


def check_mtu(lab: Lab, plan: LabTopology) -> Check:
    """A link that cannot carry the host MTU is one failure; a DF ping that may have crossed it
    is counted against that link, not reported again (one cause, one message). A failed ping no
    short link explains is its own failure."""
    size = expect.largest_host_mtu(plan)
    check = Check(6, "mtu", f"MTU: DF pings of {size} bytes between servers on different leaves; every fabric link carries {size}")
    if not size:
        check.skipped = "no servers planned"
        return check
    short = _short_links(lab, plan, size, check)
    pairs = expect.ping_pairs(plan)
    failed = [pair for pair, passed in each(pairs, lambda p: lab.ping(p[0], p[1], p[3], size, count=2)) if passed is not True]
    explained = attribute_pings(plan, failed, set(short))
    for key, (message, node) in sorted(short.items()):
        pings = sum(1 for link in explained.values() if link == key)
        check.fail(node, message + (f"; {pings} DF ping(s) whose paths may cross it failed" if pings else ""))
    for server, src, dst_server, dst, leaf in failed:
        if (server, src, dst_server, dst, leaf) not in explained:
            check.fail(leaf, f"DF ping of {size} bytes {server} {src} -> {dst_server} {dst} failed")
    check.evidence.append(
        f"{len(pairs) - len(failed)} of {len(pairs)} DF pings of {size} bytes answered, covering {len({p[4] for p in pairs})} leaves"
    )
    return check


def _short_links(lab: Lab, plan: LabTopology, size: int, check: Check) -> dict[expect.CableKey, tuple[str, str]]:
    """Fabric links whose smaller end MTU is below `size`: cable -> (message, node to name)."""
    mtus = {}
    for node, links in each([*(s.name for s in plan.switches)], lab.interfaces):
        if isinstance(links, LabError):
            check.fail(node, str(links))
            continue
        mtus.update({(node, link["ifname"]): int(link.get("mtu", 0)) for link in links})
    short = {}
    for cable in expect.fabric_cables(plan):
        a, z = mtus.get((cable.a_node, cable.a_kernel), 0), mtus.get((cable.z_node, cable.z_kernel), 0)
        if min(a, z) < size:
            message = f"link {cable.a_node} {cable.a_planned} (MTU {a}) - {cable.z_node} {cable.z_planned} (MTU {z}) cannot carry {size}-byte packets"
            short[(cable.a_node, cable.a_kernel)] = (message, cable.a_node)
    return short


Ping = tuple[str, str, str, str, str]


def attribute_pings(plan: LabTopology, failed: list[Ping], short: set[expect.CableKey]) -> dict[Ping, expect.CableKey]:
    """Each failed ping whose possible paths cross a short link -> that link (the first, sorted)."""
    leaf_of = expect.leaf_of_address(plan)
    explained = {}
    for ping in failed:
        crossed = sorted(expect.path_cables(plan, ping[4], leaf_of.get(ping[3], "")) & short)
        if crossed:
            explained[ping] = crossed[0]
    return explained
