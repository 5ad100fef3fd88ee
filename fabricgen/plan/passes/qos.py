"""Pass: the RoCE policy (PFC, ECN, DSCP, scheduler) and its per-platform QoS profiles.

One `RocePolicy` for the fabric and one `QosProfile` per RoCE platform: which egress queues
its configuration lists, their names and scheduler shares. Queue naming conventions are
platform data (`platforms/<os>/platform.yml: qos`); the templates only print the profile.
"""

from __future__ import annotations

from collections.abc import Mapping

from fabricgen.core.model import DscpClass, Platform, QosClass, QosProfile, QosQueue, RocePolicy, WatchdogTimers
from fabricgen.core.units import size_bytes
from fabricgen.plan.inputs import RoceInput
from fabricgen.plan.passes.watchdog import effective_watchdog

QUEUES = 8
"""Egress queues (traffic classes 0-7) of the RoCE profile on every Ethernet platform."""
DSCPS = 64
NETWORK_CONTROL_DSCP = (48, 56)
"""Class selectors CS6 (network control, routing protocols) and CS7 (reserved for it), RFC 4594
section 3.1 / RFC 2474: the only DSCPs besides CNP's that a strict queue carries."""


def roce_policy(roce: RoceInput, all_platforms: Mapping[str, Platform]) -> RocePolicy:
    """The fabric's RoCE policy from the (defaulted) `roce:` section."""
    ecn, watchdog = roce.ecn, roce.pfc_watchdog
    roce_platforms = {name: p for name, p in all_platforms.items() if p.transport == "roce"}
    cnp_tc = roce.cnp_traffic_class
    return RocePolicy(
        no_drop_priority=roce.no_drop_priority,
        dscp_data=roce.dscp_data,
        dscp_cnp=roce.dscp_cnp,
        cnp_traffic_class={name: (cnp_tc if cnp_tc is not None else p.cnp_traffic_class_default) for name, p in roce_platforms.items()},
        ecn_enabled=ecn.enabled,
        ecn_min_bytes=size_bytes(ecn.min),
        ecn_max_bytes=size_bytes(ecn.max),
        ecn_probability=ecn.probability,
        pfc_watchdog=watchdog.enabled,
        watchdog_timeout_ms=watchdog.timeout_ms,
        watchdog_recovery_ms=watchdog.recovery_ms,
        watchdog_polling_ms=watchdog.polling_ms,
        bandwidth_percent=roce.bandwidth_percent,
        mtu={name: roce.mtu or p.mtu_default for name, p in roce_platforms.items()},
        ecn_min=_threshold(size_bytes(ecn.min)),
        ecn_max=_threshold(size_bytes(ecn.max)),
        dcbx=roce.dcbx,
        load_balancing=roce.load_balancing,
        profiles={
            name: _qos_profile(p, roce.no_drop_priority, cnp_tc if cnp_tc is not None else p.cnp_traffic_class_default, roce, ecn.enabled)
            for name, p in roce_platforms.items()
        },
    )


def _threshold(size: int) -> str:
    """A buffer threshold in the unit the switches print: kbytes (1 KB = 1000 bytes) when exact.

    >>> _threshold(150000), _threshold(1500)
    ('150 kbytes', '1500 bytes')
    """
    return f"{size // 1000} kbytes" if size % 1000 == 0 else f"{size} bytes"


def dscp_map(roce: RoceInput, data_tc: int, cnp_tc: int, control_tc: int, default_tc: int) -> tuple[DscpClass, ...]:
    """Every DSCP to a class on purpose: RoCE's, CNP's, network control (CS6/CS7 unless RoCE or
    CNP use them) strict with CNP, and everything else default traffic, round-robin.

    >>> from types import SimpleNamespace as N
    >>> [(c.purpose, c.dscps[:3], c.traffic_class) for c in dscp_map(N(dscp_data=26, dscp_cnp=48), 3, 6, 7, 1)]
    [('default', (0, 1, 2), 1), ('roce', (26,), 3), ('cnp', (48,), 6), ('network-control', (56,), 7)]
    """
    control = tuple(d for d in NETWORK_CONTROL_DSCP if d not in (roce.dscp_data, roce.dscp_cnp))
    named = {roce.dscp_data, roce.dscp_cnp, *control}
    classes = [
        DscpClass("default", tuple(d for d in range(DSCPS) if d not in named), default_tc),
        DscpClass("roce", (roce.dscp_data,), data_tc),
        DscpClass("cnp", (roce.dscp_cnp,), cnp_tc),
    ]
    if control:
        classes.append(DscpClass("network-control", control, control_tc))
    return tuple(sorted(classes, key=lambda c: (c.traffic_class, c.dscps)))


CLASS_NAME_KEYS = {"roce": "qos_class_data", "cnp": "qos_class_cnp", "network-control": "qos_class_control"}
"""Purpose -> the platform `names` key of its classifier class, in the order the config lists them."""


def classifier(names: Mapping[str, str], mapped: tuple[DscpClass, ...]) -> tuple[QosClass, ...]:
    """The named classifier classes of a class-map platform: one per purpose of the DSCP map that
    the platform names (RoCE, CNP, network control when it has DSCPs of its own), in
    `CLASS_NAME_KEYS` order; default traffic is the platform's class-default. A platform that
    names none (EOS classifies by `qos map dscp`) gets none.

    >>> from types import SimpleNamespace as N
    >>> names = {"qos_class_data": "ROCE", "qos_class_cnp": "CNP", "qos_class_control": "NC"}
    >>> [(c.name, c.dscps, c.traffic_class) for c in classifier(names, dscp_map(N(dscp_data=26, dscp_cnp=48), 3, 7, 7, 0))]
    [('ROCE', (26,), 3), ('CNP', (48,), 7), ('NC', (56,), 7)]
    >>> classifier({}, dscp_map(N(dscp_data=26, dscp_cnp=48), 3, 7, 7, 0))
    ()
    """
    by_purpose = {entry.purpose: entry for entry in mapped}
    return tuple(
        QosClass(names[key], by_purpose[purpose].dscps, by_purpose[purpose].traffic_class)
        for purpose, key in CLASS_NAME_KEYS.items()
        if key in names and purpose in by_purpose
    )


def _watchdog(platform: Platform, roce: RoceInput) -> WatchdogTimers | None:
    """The watchdog timers `platform` runs, or None when the watchdog is off."""
    asked = roce.pfc_watchdog
    if not asked.enabled:
        return None
    return effective_watchdog(asked.timeout_ms, asked.recovery_ms, asked.polling_ms, platform.pfc_watchdog)


def _qos_profile(platform: Platform, data_tc: int, cnp_tc: int, roce: RoceInput, ecn: bool) -> QosProfile:
    """The RoCE policy in one platform's terms: which queues its config lists, their names and
    scheduling. RoCE and default traffic (the traffic class of DSCP 0 on this platform) share the
    port round-robin, RoCE by bandwidth_percent and default traffic the rest; CNP and network
    control are strict; every other queue is round-robin with no share (no DSCP reaches it)."""
    conv = platform.qos
    best_effort = int(conv.get("best_effort_tc", 0))
    control_tc = int(conv.get("network_control_tc", QUEUES - 1))
    strict = {cnp_tc, control_tc}
    shares = dict.fromkeys(range(QUEUES), 0)
    shares[best_effort] += 100 - roce.bandwidth_percent
    shares[data_tc] += roce.bandwidth_percent
    for tc in strict:
        shares[tc] = 0

    def queue(tc: int, pattern: str, default: str) -> QosQueue:
        name = (default if tc == 0 else pattern).format(tc=tc)
        return QosQueue(tc, name, shares[tc], tc in strict, ecn and tc == data_tc, tc == data_tc)

    order = {"all": range(QUEUES - 1, -1, -1), "all-ascending": range(QUEUES)}
    listed = order.get(str(conv.get("queues")), sorted({best_effort, data_tc, cnp_tc}))
    queues = tuple(queue(tc, conv.get("queue_name", "{tc}"), conv.get("default_queue_name", "{tc}")) for tc in listed)
    pause: tuple[QosQueue, ...] = ()
    if conv.get("pause_name"):
        pause = tuple(queue(tc, conv["pause_name"], conv["default_pause_name"]) for tc in dict.fromkeys((data_tc, 0)))
    mapped = dscp_map(roce, data_tc, cnp_tc, control_tc, best_effort)
    return QosProfile(
        platform=platform.name,
        names=dict(platform.names),
        data_traffic_class=data_tc,
        cnp_traffic_class=cnp_tc,
        mtu=roce.mtu or platform.mtu_default,
        queues=queues,
        pause_queues=pause,
        queues_default_strict=bool(conv.get("queues_default_strict", False)),
        best_effort_traffic_class=best_effort,
        ecn_counters=bool(conv.get("ecn_counters", False)),
        load_interval=int(conv.get("load_interval", 0)),
        watchdog=_watchdog(platform, roce),
        network_control_traffic_class=control_tc,
        dscp_map=mapped,
        classifier=classifier(platform.names, mapped),
    )
