"""Addresses and prefixes, read strictly and checked against each other.

The schema only checks the shape `a.b.c.d/n`. Here every prefix is parsed by hand so that a
mistake gets a located error instead of reaching the planner: an octet above 255, a prefix
length above 32, a leading zero (`010.1.0.0`: some tools read it as octal, 8), or host bits
set (`10.1.0.1/22`, whose intended network is 10.1.0.0/22).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.common import warning
from fabricgen.inventory.validation.special import PRIVATE_RANGES, is_private, special_range

POOLS = ("loopbacks", "fabric", "servers", "management")
FABRIC_POOLS = ("loopbacks", "fabric", "servers")
"""Pools whose every address the plan hands to switch or server interfaces. (The management pool
keeps its first addresses for infrastructure, so an NTP server there is normal.)"""


def prefix_problem(text: str) -> tuple[str, str]:
    """(problem, hint) for a prefix written as `a.b.c.d/n`; ('', '') when it is a network.

    >>> prefix_problem("10.1.0.0/22")
    ('', '')
    >>> prefix_problem("10.1.300.0/22")
    ('octet 300 is above 255', '')
    >>> prefix_problem("10.1.0.0/33")
    ('prefix length 33 is above 32', '')
    >>> prefix_problem("010.1.0.0/22")
    ("octet '010' has a leading zero (some tools read it as octal)", 'write 10.1.0.0/22')
    >>> prefix_problem("10.1.0.1/22")
    ('10.1.0.1/22 has host bits set', 'the network is 10.1.0.0/22')
    """
    address, _, length = text.partition("/")
    octets = address.split(".")
    for octet in octets:
        if int(octet) > 255:
            return f"octet {int(octet)} is above 255", ""
    for octet in octets:
        if len(octet) > 1 and octet.startswith("0"):
            fixed = ".".join(str(int(o)) for o in octets) + f"/{int(length)}"
            return f"octet {octet!r} has a leading zero (some tools read it as octal)", f"write {fixed}"
    if int(length) > 32 or (len(length) > 1 and length.startswith("0")):
        return (
            (f"prefix length {int(length)} is above 32", "") if int(length) > 32 else (f"prefix length {length!r} has a leading zero", "")
        )
    network = ipaddress.IPv4Network(text, strict=False)
    if str(network) != text:
        return f"{text} has host bits set", f"the network is {network}"
    return "", ""


def check_addresses(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    """Prefixes, the server pool routed servers need, the management gateway, pinned
    management addresses and services inside fabric pools."""
    addressing = doc.get("addressing") or {}
    found: list[Diagnostic] = []
    pools: dict[str, ipaddress.IPv4Network] = {}
    for name in POOLS:
        if name in addressing:
            problem, hint = prefix_problem(addressing[name])
            if problem:
                found.append(source.diagnostic(("addressing", name), problem, hint=hint))
            else:
                pools[name] = ipaddress.IPv4Network(addressing[name])
                found += _check_pool_range(name, pools[name], source)
    transport = doc["fabric"].get("transport", "roce")
    if transport == "roce" and doc.get("servers", {}).get("per_leaf", 0) and "servers" not in addressing and "addressing" in doc:
        found.append(
            source.diagnostic(
                ("addressing",),
                f"servers are attached ({doc['servers']['per_leaf']} per leaf) and routed, but addressing.servers is missing: their ports would have no address",
                hint="add addressing.servers, for example 10.2.0.0/16",
                key=True,
            )
        )
    found += _check_gateway(addressing, pools.get("management"), source)
    found += _check_pinned_management(doc, pools.get("management"), source)
    found += _check_pinned_special(doc, source)
    found += _check_services(doc, pools, source)
    found += _check_allowed_sources(doc, pools, source)
    return found


def _check_allowed_sources(doc: dict[str, Any], pools: dict[str, ipaddress.IPv4Network], source: SourceMap) -> list[Diagnostic]:
    """`management.allowed_sources`: prefixes read as strictly as the pools, none in a
    special-purpose range, none overlapping a pool the plan hands to switch or server ports
    (the ACL would let GPU hosts or fabric links reach the switches' management)."""
    found = []
    for position, text in enumerate((doc.get("management") or {}).get("allowed_sources", [])):
        path = ("management", "allowed_sources", position)
        problem, hint = prefix_problem(text)
        if problem:
            found.append(source.diagnostic(path, problem, hint=hint))
            continue
        prefix = ipaddress.IPv4Network(text)
        special = special_range(prefix)
        if special:
            found.append(source.diagnostic(path, f"{prefix} overlaps the special-purpose range {special}"))
            continue
        inside = next((name for name in FABRIC_POOLS if name in pools and prefix.overlaps(pools[name])), None)
        if inside:
            found.append(
                source.diagnostic(
                    path,
                    f"{prefix} overlaps addressing.{inside} ({pools[inside]}): switch or server ports there would reach the switches' management",
                    hint="allow the management network or the operators' hosts only",
                )
            )
    return found


def _check_pinned_special(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    """A pinned loopback or management address in a special-purpose range, refused as a pool
    there is: a pin bypasses the pools, not the registry."""
    found = []
    for key in ("spines", "leaves", "superspines"):
        for position, node in enumerate(doc.get(key, {}).get("nodes", [])):
            for field in ("loopback", "management"):
                if field in node:
                    special = special_range(ipaddress.IPv4Network(node[field]))
                    if special:
                        path = (key, "nodes", position, field)
                        found.append(
                            source.diagnostic(path, f"pinned {field} address {node[field]} is in the special-purpose range {special}")
                        )
    return found


def _check_pool_range(name: str, pool: ipaddress.IPv4Network, source: SourceMap) -> list[Diagnostic]:
    """A pool in a special-purpose range (special.py) is refused with the range's name; a public
    pool is a warning, since some operators address their fabric from their own public space."""
    path = ("addressing", name)
    special = special_range(pool)
    if special:
        return [
            source.diagnostic(
                path,
                f"{pool} overlaps the special-purpose range {special}",
                hint="use private space: 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16",
            )
        ]
    if not is_private(pool):
        private = ", ".join(f"{prefix}" for prefix, _ in PRIVATE_RANGES)
        return [
            warning(
                source,
                path,
                f"{pool} is public address space, outside the private-use ranges {private} (RFC 1918, RFC 6598)",
                hint="fine if your organisation holds it; otherwise use private space",
            )
        ]
    return []


def _check_gateway(addressing: dict[str, Any], pool: ipaddress.IPv4Network | None, source: SourceMap) -> list[Diagnostic]:
    gateway_text = addressing.get("management_gateway")
    if not gateway_text or pool is None:
        return []
    gateway = ipaddress.IPv4Address(gateway_text)
    path = ("addressing", "management_gateway")
    if gateway not in pool:
        return [source.diagnostic(path, f"gateway {gateway} is outside the management pool {pool}", hint="the switches could not reach it")]
    if pool.prefixlen <= 30 and gateway in (pool.network_address, pool.broadcast_address):
        what = "network" if gateway == pool.network_address else "broadcast"
        return [source.diagnostic(path, f"gateway {gateway} is the {what} address of the management pool {pool}")]
    return []


def _check_pinned_management(doc: dict[str, Any], pool: ipaddress.IPv4Network | None, source: SourceMap) -> list[Diagnostic]:
    if pool is None:
        return []
    found = []
    for key in ("spines", "leaves", "superspines"):
        for position, node in enumerate(doc.get(key, {}).get("nodes", [])):
            address = node.get("management")
            # an address in a special-purpose range is refused by _check_pinned_special: one message
            if address and ipaddress.IPv4Address(address) not in pool and not special_range(ipaddress.IPv4Network(address)):
                found.append(
                    warning(
                        source,
                        (key, "nodes", position, "management"),
                        f"pinned management address {node['management']} is outside the management pool {pool}",
                        hint="fine if the switch really sits in another management network; its gateway is still addressing.management_gateway",
                    )
                )
    return found


def _check_services(doc: dict[str, Any], pools: dict[str, ipaddress.IPv4Network], source: SourceMap) -> list[Diagnostic]:
    found = []
    for service in ("ntp", "syslog", "dns"):
        for position, text in enumerate(doc.get("services", {}).get(service, [])):
            address = ipaddress.IPv4Address(text)
            inside = next((name for name in FABRIC_POOLS if name in pools and address in pools[name]), None)
            if inside:
                found.append(
                    warning(
                        source,
                        ("services", service, position),
                        f"{service} server {address} is inside the fabric pool addressing.{inside} ({pools[inside]}): the plan hands those addresses to switch and server ports",
                    )
                )
    return found
