"""iproute2 and /proc for the lab: namespaces, veths, addresses, routes, sysctls.

iproute2 (`ip -batch`, one process for many commands) is the netlink client: it is the tool a
user debugs the lab with, and batches keep a 300-switch lab to a handful of processes.
Nothing here touches a namespace whose name does not start with the lab's prefix.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

NETNS_DIR = "/run/netns"


class LabError(RuntimeError):
    """A command of the lab failed (the message says which and why)."""


def run(argv: Sequence[str], *, timeout: float = 60, check: bool = True, input_text: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, check=False, input=input_text)
    except subprocess.TimeoutExpired as exc:
        raise LabError(f"timed out after {timeout:g} s: {' '.join(argv)}") from exc
    if check and done.returncode != 0:
        raise LabError(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.strip() or done.stdout.strip()}")
    return done


def ip_batch(commands: Iterable[str], namespace: str | None = None, *, force: bool = False) -> None:
    """Run iproute2 commands in as few processes as fit (`ip [-n NS] -batch FILE`); `force`
    goes on past errors. Batches are cut so that no process runs out of file descriptors."""
    for chunk in batches(list(commands), netns_budget()):
        _run_batch(chunk, namespace, force)


def netns_budget() -> int:
    """`netns NAME` arguments one `ip -batch` process may take: iproute2 (6.1) opens
    /run/netns/NAME for each and keeps it open until the process exits, so past the
    descriptor limit the open fails and ip reports `Invalid "netns" value`."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return max(16, (soft if soft != resource.RLIM_INFINITY else 65536) - 64)


def batches(lines: list[str], budget: int) -> list[list[str]]:
    """`lines` cut into runs whose `netns` arguments stay within `budget`.

    >>> [len(b) for b in batches(["link add a netns x type veth peer name b netns y"] * 5, 4)]
    [2, 2, 1]
    >>> batches([], 4)
    []
    """
    out: list[list[str]] = []
    used = budget
    for line in lines:
        cost = line.split().count("netns")
        if not out or used + cost > budget:
            out.append([])
            used = 0
        out[-1].append(line)
        used += cost
    return out


def _run_batch(lines: list[str], namespace: str | None, force: bool) -> None:
    with tempfile.NamedTemporaryFile("w", prefix="fabricgen-lab-", suffix=".ip", delete=False) as handle:
        handle.write("\n".join(lines) + "\n")
        path = handle.name
    try:
        argv = ["ip", *(["-n", namespace] if namespace else []), *(["-force"] if force else []), "-batch", path]
        run(argv, timeout=300, check=not force)
    finally:
        os.unlink(path)


NEIGH_SYSCTL = Path("/proc/sys/net/ipv4/neigh/default")


def ensure_neighbour_capacity(entries: int) -> list[str]:
    """Raise the kernel's ARP table limits to hold `entries` neighbours; returns what changed.

    The IPv4 neighbour table is one table for all namespaces, and its limits (gc_thresh1-3,
    default 128/512/1024) count every namespace's entries: past gc_thresh3 the kernel refuses
    new neighbours (sendmsg: No buffer space available). A lab has two entries per cable, so
    a fabric of more than about 500 cables needs more. Limits are only ever raised."""
    changed = []
    for name, share in (("gc_thresh1", 4), ("gc_thresh2", 2), ("gc_thresh3", 1)):
        wanted = max(entries * 2 // share, 128)
        path = NEIGH_SYSCTL / name
        current = int(path.read_text().split()[0])
        if current < wanted:
            path.write_text(f"{wanted}\n")
            changed.append(f"net.ipv4.neigh.default.{name} {current} -> {wanted}")
    return changed


def existing_namespaces(prefix: str) -> list[str]:
    """The namespaces whose name starts with `prefix` (the lab's own)."""
    try:
        names = os.listdir(NETNS_DIR)
    except FileNotFoundError:
        return []
    return sorted(n for n in names if n.startswith(prefix))


def namespace_pids(namespace: str) -> list[int]:
    done = run(["ip", "netns", "pids", namespace], check=False)
    return [int(p) for p in done.stdout.split()]


def in_namespace(namespace: str, argv: Sequence[str], *, timeout: float = 30, check: bool = True) -> subprocess.CompletedProcess[str]:
    return run(["ip", "netns", "exec", namespace, *argv], timeout=timeout, check=check)


def sysctls(namespace: str, settings: dict[str, str]) -> None:
    """Write sysctls inside a namespace (one `sh` for all of them)."""
    script = "; ".join(f"echo {value} > /proc/sys/{key.replace('.', '/')}" for key, value in sorted(settings.items()))
    in_namespace(namespace, ["sh", "-ec", script])


ROUTES_TIMEOUT_S = 120
"""A leaf of the 32 x 64 lab holds about 2,100 routes of 32 next hops each (4 MB of JSON); on a
loaded 2-core machine a shorter limit cut some leaves' ECMP check short."""


def routes(namespace: str) -> list[dict[str, Any]]:
    """`ip -j route show` of a namespace (kernel routes, main table)."""
    done = run(["ip", "-n", namespace, "-j", "route", "show"], timeout=ROUTES_TIMEOUT_S)
    data: list[dict[str, Any]] = json.loads(done.stdout or "[]")
    return data


def links(namespace: str) -> list[dict[str, Any]]:
    done = run(["ip", "-n", namespace, "-j", "link", "show"], timeout=30)
    data: list[dict[str, Any]] = json.loads(done.stdout or "[]")
    return data


def ecmp_width(route: dict[str, Any]) -> int:
    """Next hops of one `ip -j route` entry: one per `nexthops` item, else one gateway.

    >>> ecmp_width({"dst": "10.0.0.1", "nexthops": [{"gateway": "a"}, {"gateway": "b"}]})
    2
    >>> ecmp_width({"dst": "10.0.0.1", "gateway": "a"})
    1
    """
    hops = route.get("nexthops")
    if hops:
        return len(hops)
    return 1 if route.get("gateway") or route.get("dev") else 0
