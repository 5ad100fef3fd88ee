"""Settings that are each valid alone but wrong for the fabric: timers a switch refuses, cables
of no length, an MTU too small for RoCE, and fabrics or partitions that cannot carry traffic."""

from __future__ import annotations

from typing import Any

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.units import format_ratio, length_m
from fabricgen.inventory.loader import PathKey, SourceMap
from fabricgen.inventory.validation.common import warning

ROCE_MIN_MTU = 4156
"""A RoCEv2 packet with a 4096-byte payload (the largest RDMA path MTU, which AI NICs use) is
IPv4 20 + UDP 8 + BTH 12 + RETH 16 + payload 4096 + ICRC 4 = 4156 bytes at the IP layer
(InfiniBand Architecture Specification Vol. 1, Annex A17 RoCEv2, header sizes); a smaller
interface MTU drops or fragments them."""


def check_settings(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    return [
        *_pfc_watchdog(doc, source),
        *_cables(doc, source),
        *_mtu(doc, source),
        *_fabric_shape(doc, source),
        *_during_change(doc, source),
    ]


def _during_change(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    """`during_change: true` meant "hold max_ratio" before the key became the ratio itself."""
    if doc.get("oversubscription", {}).get("during_change") is not True:
        return []
    ratio = format_ratio(float(doc["oversubscription"].get("max_ratio", 1.0)))
    return [
        source.diagnostic(
            ("oversubscription", "during_change"),
            "during_change is the ratio a change window holds now, not a switch",
            hint=f"write during_change: {ratio} (your max_ratio, what true meant), a larger ratio, or false",
        )
    ]


def _pfc_watchdog(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    """EOS refuses a PFC watchdog polling interval above half of the shorter of timeout and
    recovery time (Arista EOS User Manual, "priority-flow-control pause watchdog", polling-interval)."""
    if doc["fabric"].get("transport", "roce") != "roce":
        return []
    watchdog = doc.get("roce", {}).get("pfc_watchdog", {})
    if not watchdog.get("enabled", True):
        return []
    timeout, recovery, polling = watchdog["timeout_ms"], watchdog["recovery_ms"], watchdog["polling_ms"]
    if polling * 2 <= min(timeout, recovery):
        return []
    return [
        source.diagnostic(
            ("roce", "pfc_watchdog", "polling_ms"),
            f"PFC watchdog polling interval {polling} ms is more than half of min(timeout {timeout} ms, recovery {recovery} ms): EOS refuses it",
            hint=f"use at most {min(timeout, recovery) // 2} ms",
        )
    ]


def _cables(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    cabling = doc.get("cabling", {})
    lengths: list[tuple[PathKey, str]] = [(("cabling", "length", kind), text) for kind, text in cabling.get("length", {}).items()]
    lengths += [(("cabling", "overrides", i, "length"), o["length"]) for i, o in enumerate(cabling.get("overrides", [])) if "length" in o]
    return [
        source.diagnostic(path, f"a cable of {text} has no length", hint="write the real run length, for example 3m")
        for path, text in lengths
        if length_m(text) == 0
    ]


def _mtu(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    mtu = doc.get("roce", {}).get("mtu")
    if doc["fabric"].get("transport", "roce") != "roce" or mtu is None or mtu >= ROCE_MIN_MTU:
        return []
    return [
        warning(
            source,
            ("roce", "mtu"),
            f"MTU {mtu} is below the {ROCE_MIN_MTU} bytes a RoCEv2 packet with a 4096-byte payload needs: NICs must fall back to a smaller RDMA MTU",
            hint="leave roce.mtu out to use the platform's jumbo MTU",
        )
    ]


def _fabric_shape(doc: dict[str, Any], source: SourceMap) -> list[Diagnostic]:
    found = []
    leaves = doc.get("leaves", {})
    if not leaves.get("count") and not leaves.get("nodes"):
        found.append(warning(source, ("leaves",), "the fabric has no leaves: no server can attach", hint="set leaves.count"))
    for position, partition in enumerate(doc.get("partitions") or []):
        if partition.get("membership") == "limited" and partition.get("members"):
            found.append(
                warning(
                    source,
                    ("partitions", position, "membership"),
                    f"every member of partition {partition['name']!r} is a limited member: limited members cannot talk to each other, only to full members",
                    hint="make the members full, or add the full members (storage, services) they should reach",
                )
            )
    return found
