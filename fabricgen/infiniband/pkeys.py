"""Which P_Keys each HCA port holds, and at which index: shared by the host pages (NCCL_IB_PKEY
is an index into the port's P_Key table) and `ib verify` (which reads the tables back).

OpenSM (3.3.23, observed on ibsim) puts Default at index 0 and a port's other P_Keys after it
in ascending order of their 15-bit value, whatever the order of partitions.conf. It keeps an
index once assigned, so after later partition changes a live port may differ: the host pages
also give the sysfs lookup that finds the index on the host itself.
"""

from __future__ import annotations

from fabricgen.core.model import InfinibandPlan, Plan, SubnetManager


def planned_master(ib: InfinibandPlan) -> SubnetManager:
    """The SM that wins the election: highest priority, then lowest port GUID (IBA 14.4.1)."""
    return sorted(ib.subnet_managers, key=lambda s: (-s.priority, int(s.port_guid, 16)))[0]


def default_pkey(ib: InfinibandPlan) -> int:
    return 0xFFFF if ib.default_membership == "full" else 0x7FFF


def expected_pkeys(plan: Plan, sm: SubnetManager) -> dict[str, set[int]]:
    """Port GUID -> the P_Keys OpenSM must put in its table (membership bit included).

    The master SM's own port is a full member of Default and every partition (`SELF=full`)."""
    ib = plan.infiniband
    assert ib is not None
    default = default_pkey(ib)
    wanted = {n.port_guid: {default} for s in plan.servers for n in s.nics}
    wanted.update({other.port_guid: {default} for other in ib.subnet_managers if not other.server})
    for part in ib.partitions:
        for guid in part.port_guids:
            wanted.setdefault(guid, {default}).add(0x8000 | part.pkey if part.membership == "full" else part.pkey)
    wanted[sm.port_guid] = {0xFFFF} | {0x8000 | p.pkey for p in ib.partitions}
    return wanted


def table_order(keys: set[int]) -> list[int]:
    """The P_Key table as OpenSM fills it on a fresh port: Default first, then ascending.

    >>> [hex(k) for k in table_order({0x8A05, 0x7FFF, 0x0102, 0x8303})]
    ['0x7fff', '0x102', '0x8303', '0x8a05']
    """
    return sorted(keys, key=lambda k: (k & 0x7FFF != 0x7FFF, k & 0x7FFF))
