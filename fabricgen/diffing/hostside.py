"""What a change does beyond the switches: the fabric-wide policy by inventory key, and the
host side (every server NIC's row of hosts.csv: address, gateway, routes, MTU, RoCE settings).

A DSCP change or a wider server pool rewrites every server's settings; listing 4,096 rows
would hide that, so host changes are grouped by (column, old value, new value) with the NICs
they touch: `tos: 106 -> 98 on 4096 NICs (cl1-p1-leaf01-srv01 nic1, ...)`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from fabricgen.artifacts.hosts import COLUMNS, host_rows
from fabricgen.core.model import Plan, RocePolicy
from fabricgen.core.units import format_ratio, format_size

MAX_NAMED = 3
"""NICs named per host change; the rest are counted."""

POLICY_KEYS: tuple[tuple[str, Callable[[RocePolicy], object]], ...] = (
    ("roce.no_drop_priority", lambda r: r.no_drop_priority),
    ("roce.dscp.data", lambda r: r.dscp_data),
    ("roce.dscp.cnp", lambda r: r.dscp_cnp),
    ("roce.cnp_traffic_class", lambda r: ", ".join(f"{k} {v}" for k, v in sorted(r.cnp_traffic_class.items()))),
    ("roce.ecn.enabled", lambda r: r.ecn_enabled),
    ("roce.ecn.min", lambda r: format_size(r.ecn_min_bytes)),
    ("roce.ecn.max", lambda r: format_size(r.ecn_max_bytes)),
    ("roce.ecn.probability", lambda r: r.ecn_probability),
    ("roce.pfc_watchdog.enabled", lambda r: r.pfc_watchdog),
    ("roce.pfc_watchdog.timeout_ms", lambda r: r.watchdog_timeout_ms),
    ("roce.pfc_watchdog.recovery_ms", lambda r: r.watchdog_recovery_ms),
    ("roce.pfc_watchdog.polling_ms", lambda r: r.watchdog_polling_ms),
    ("roce.bandwidth_percent", lambda r: r.bandwidth_percent),
    ("roce.mtu", lambda r: ", ".join(f"{k} {v}" for k, v in sorted(r.mtu.items()))),
    ("roce.dcbx", lambda r: r.dcbx),
    ("roce.load_balancing", lambda r: r.load_balancing),
)
"""The plan's RoCE policy by the inventory key that sets it."""


def _arrow(key: str, old: object, new: object) -> str:
    return f"{key}: {'-' if old in (None, '') else old} -> {'-' if new in (None, '') else new}"


def policy_changes(old: Plan, new: Plan) -> list[str]:
    """Fabric-wide settings that differ, by inventory key: `roce.dscp.data: 26 -> 24`."""
    changes = []
    if (old.roce is None) != (new.roce is None):
        changes.append(_arrow("roce", "on" if old.roce else "off", "on" if new.roce else "off"))
    elif old.roce is not None and new.roce is not None:
        for key, value in POLICY_KEYS:
            if value(old.roce) != value(new.roce):
                changes.append(_arrow(key, value(old.roce), value(new.roce)))
    old_pools = {p.key: p.prefix for p in old.pools}
    new_pools = {p.key: p.prefix for p in new.pools}
    for key in sorted(set(old_pools) | set(new_pools)):
        if old_pools.get(key) != new_pools.get(key):
            changes.append(_arrow(key, old_pools.get(key), new_pools.get(key)))
    if old.max_oversubscription != new.max_oversubscription:
        changes.append(_arrow("oversubscription.max_ratio", format_ratio(old.max_oversubscription), format_ratio(new.max_oversubscription)))
    if old.transport != new.transport:
        changes.append(_arrow("fabric.transport", old.transport, new.transport))
    return changes


def _value_class(column: str, value: object) -> object:
    """Per-NIC values (addresses) are summarised as 'changed'; shared ones (ToS) keep the value."""
    return value if column not in {"address", "gateway", "leaf_interface"} else None


def host_changes(old: Plan, new: Plan) -> tuple[list[str], list[str], list[str]]:
    """(changes grouped by column and values, NICs added, NICs removed)."""
    before, after = host_rows(old), host_rows(new)
    groups: dict[tuple[str, object, object], list[str]] = defaultdict(list)
    for key in sorted(set(before) & set(after)):
        was, now = before[key], after[key]
        if was == now:
            continue
        for column, a, b in zip(COLUMNS, was, now, strict=True):
            if a != b:
                groups[(column, _value_class(column, a), _value_class(column, b))].append(f"{key[0]} {key[1]}")
    changes = []
    for (column, a, b), nics in sorted(groups.items(), key=lambda item: (COLUMNS.index(item[0][0]), str(item[0][1]), str(item[0][2]))):
        named = ", ".join(nics[:MAX_NAMED]) + (f" and {len(nics) - MAX_NAMED} more" if len(nics) > MAX_NAMED else "")
        what = f"{column}: {a} -> {b}" if a is not None or b is not None else f"{column} changed"
        changes.append(f"{what} on {len(nics)} NIC{'s' if len(nics) != 1 else ''} ({named})")
    added = [f"{s} {n}" for s, n in sorted(set(after) - set(before))]
    removed = [f"{s} {n}" for s, n in sorted(set(before) - set(after))]
    return changes, added, removed
