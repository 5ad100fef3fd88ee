"""M_Key protection of an InfiniBand fabric: what the tenant isolation relies on.

`part_enforce` keeps a port's traffic in the partitions of its P_Key table, but with `m_key` 0
any host's root can write a port's P_Key table (SubnSet(P_KeyTable)) and undo it. OpenSM
(opensm(8), MKEY CONFIGURATION; opensm/osm_subnet.c) also rewrites a lease period that is not
above `sweep_interval`, and turns sweeping back on when it is 0: the plan must say what runs.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.common import warning
from fabricgen.plan.inputs import Inputs

LEASE = ("opensm", "protection", "m_key_lease_period")


def check_sm_protection(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Refuse a lease period OpenSM would rewrite; warn when tenants have no M_Key protection or
    a lost M_Key could never be recovered (lease 0)."""
    ib = plan.infiniband
    if ib is None:
        return
    protection = ib.protection
    if not protection.enabled:
        if ib.partitions:
            yield warning(
                source,
                ("opensm", "protection", "enabled"),
                "without M_Key protection (m_key 0) root on any host can rewrite its port's P_Key table and leave its tenant partitions",
                hint="keep opensm.protection.enabled: true and supply the keys at push time (docs/infiniband.md)",
            )
        return
    lease, sweep = protection.m_key_lease_period, ib.sweep_interval
    if lease == 0:
        yield warning(
            source,
            LEASE,
            "m_key_lease_period 0: a port whose M_Key is lost never drops its protection, so only a reset of each device recovers it",
            hint="a few sweep intervals, e.g. 60 (opensm(8), MKey Lease Period)",
        )
    elif sweep == 0:
        yield source.diagnostic(
            ("opensm", "sweep_interval"),
            f"sweep_interval 0 with an M_Key lease: OpenSM turns sweeping back on at {lease - 1} s (osm_subnet.c), not what the plan says",
            hint="set opensm.sweep_interval below m_key_lease_period",
        )
    elif lease <= sweep:
        yield source.diagnostic(
            LEASE,
            f"m_key_lease_period {lease} is not above sweep_interval {sweep}: OpenSM raises it to {sweep + 1} at start (osm_subnet.c)",
            hint=f"a few sweep intervals, e.g. {sweep * 6} (opensm(8), MKey Lease Period)",
        )
