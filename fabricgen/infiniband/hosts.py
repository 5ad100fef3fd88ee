"""Host pages of InfiniBand servers: what a training job needs to use its tenant.

NCCL uses P_Key index 0 and SL 0 unless told otherwise (NCCL environment variables
`NCCL_IB_PKEY`, `NCCL_IB_SL`; UCX `UCX_IB_SL`), so without these settings a tenant's jobs run
in Default at SL 0: the planned partition and QoS never reach them, and two limited members of
Default cannot talk at all. Per server: `hosts/<server>.md` with the HCA list for
`NCCL_IB_HCA`, per tenant the P_Key index, the SL, the IPoIB child interface; and one
`ib-hosts.csv` row per server, NIC and partition for scripts. Everything comes from the plan
(partitions, QoS SL2VL, the master SM) through `pkeys`, which `ib verify` checks against the
P_Key tables OpenSM programs.
"""

from __future__ import annotations

from fabricgen.artifacts.common import csv_text
from fabricgen.core.model import InfinibandPlan, Partition, Plan, Server
from fabricgen.infiniband.pkeys import default_pkey, expected_pkeys, planned_master, table_order
from fabricgen.render.context import RenderContext

COLUMNS = (
    "server",
    "nic",
    "rdma_device",
    "leaf",
    "leaf_port",
    "port_guid",
    "partition",
    "pkey",
    "membership",
    "pkey_index",
    "sl",
    "ipoib_child",
)


def _tenants(ib: InfinibandPlan, server: Server) -> list[Partition]:
    return [p for p in ib.partitions if server.name in p.hosts]


def _key(part: Partition) -> int:
    return 0x8000 | part.pkey if part.membership == "full" else part.pkey


def _rows(plan: Plan, ib: InfinibandPlan, wanted: dict[str, set[int]]) -> list[tuple[object, ...]]:
    """One row per HCA port and P_Key it holds: Default first (index 0), then each tenant."""
    rows: list[tuple[object, ...]] = []
    for server in plan.servers:
        for nic in server.nics:
            order = table_order(wanted[nic.port_guid])
            port = (server.name, f"nic{nic.nic}", nic.device, nic.leaf, nic.leaf_interface, nic.port_guid)
            keys = [("Default", order[0], 0, "")]
            for part in _tenants(ib, server):
                key = 0x8000 | part.pkey if 0x8000 | part.pkey in order else part.pkey
                keys.append((part.name, key, part.traffic_sl, f"{key:04x}" if part.ipoib else ""))
            for name, key, sl, child in keys:
                membership = "full" if key & 0x8000 else "limited"
                rows.append((*port, name, f"0x{key:04x}", membership, order.index(key), sl, child))
    return rows


def _page(plan: Plan, ib: InfinibandPlan, server: Server, wanted: dict[str, set[int]], sm_port: str) -> str:
    hca = ",".join(f"{n.device}:1" for n in server.nics)
    lines = [
        f"# {server.name}: InfiniBand settings",
        "",
        "| NIC | RDMA device | leaf | leaf port | port GUID |",
        "| --- | --- | --- | --- | --- |",
        *(f"| nic{n.nic} | {n.device} | {n.leaf} | {n.leaf_interface} | {n.port_guid} |" for n in server.nics),
        "",
        "RDMA devices as the plan names the adapters (node-name-map, NIC n = mlx5_(n-1)); a host with",
        "other mlx5 devices numbers them differently: compare `ibstat -p` with the port GUIDs above.",
        "Set `NICn_NETDEV` (e.g. `ibp1s0`, the IPoIB interface of NIC n) for the IPoIB lines. For every NCCL job:",
        "",
        "```sh",
        f'export NCCL_IB_HCA="={hca}"',
        "```",
        "",
    ]
    if any(n.port_guid == sm_port for n in server.nics):
        lines += [f"The master subnet manager runs on this server: its port {sm_port} is a full member of every partition.", ""]
    tenants = _tenants(ib, server)
    if not tenants:
        lines += [f"In no tenant partition: Default only (P_Key 0x{default_pkey(ib):04x}, index 0, SL 0), NCCL's defaults apply.", ""]
    for part in tenants:
        indexes = sorted(
            {table_order(wanted[n.port_guid]).index(k) for n in server.nics for k in wanted[n.port_guid] if k & 0x7FFF == part.pkey}
        )
        key = _key(part)
        sl = part.traffic_sl
        lines += [
            f"## Tenant {part.name}: P_Key 0x{key:04x} ({part.membership} member), SL {sl}",
            "",
            "```sh",
            f"export NCCL_IB_PKEY={indexes[0]}    # index of 0x{key:04x} in the port's P_Key table (Default is index 0)",
            f"export NCCL_IB_SL={sl}",
            f"export UCX_IB_SL={sl}",
            f"# confirm the index on this host: grep -l 0x{key:04x} /sys/class/infiniband/{server.nics[0].device}/ports/1/pkeys/* | xargs -n1 basename",
        ]
        if len(indexes) > 1:
            lines.append(f"# NICs differ (indexes {', '.join(map(str, indexes))}): the SM's own port holds every partition")
        if part.ipoib:
            lines += [f"# IPoIB child interface ${{NICn_NETDEV}}.{key:04x}:"]
            lines += [f"echo 0x{key:04x} > /sys/class/net/${{NIC{n.nic}_NETDEV}}/create_child" for n in server.nics]
        lines += ["```", ""]
    return "\n".join(lines)


def ib_hosts(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`ib-hosts.csv` and `hosts/<server>.md` for the servers of an InfiniBand fabric."""
    ib = plan.infiniband
    if ib is None or not plan.servers:
        return {}
    sm = planned_master(ib)
    wanted = expected_pkeys(plan, sm)
    files = {"ib-hosts.csv": csv_text(COLUMNS, _rows(plan, ib, wanted))}
    for server in plan.servers:
        files[f"hosts/{server.name}.md"] = _page(plan, ib, server, wanted, sm.port_guid)
    return files
