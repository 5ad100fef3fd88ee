"""Host (NIC) side of the RoCE policy: `hosts.csv` and `hosts/<server>.md`.

Every value comes from the same plan the switch configs come from (`plan.roce`, the server's
NIC addresses, the leaf port's MTU), so host and switch cannot disagree: ToS is
`RocePolicy.host_tos` (DSCP << 2 | ECT(0), 106 for DSCP 26), PFC flags enable exactly the
no-drop priority. Commands are what a ConnectX (mlx5) user runs; netdev and RDMA device names
differ per host, so the scripts take them from variables.
"""

from __future__ import annotations

from fabricgen.artifacts.common import csv_text
from fabricgen.context import RenderContext
from fabricgen.model import Plan, RocePolicy, Server, ServerNic

COLUMNS = (
    "server",
    "nic",
    "leaf",
    "leaf_interface",
    "speed",
    "address",
    "prefix_length",
    "gateway",
    "mtu",
    "trust",
    "pfc_priority",
    "pfc_flags",
    "dscp_data",
    "tos",
    "dscp_cnp",
)

ROUTE_TABLE_BASE = 100
"""Per-NIC routing tables (source routing for multi-rail hosts) are numbered 100 + NIC."""


def pfc_flags(priority: int) -> str:
    """`mlnx_qos --pfc` argument: 8 flags, 1 on the no-drop priority only."""
    return ",".join("1" if p == priority else "0" for p in range(8))


def nic_commands(nic: ServerNic, roce: RocePolicy, mtu: int, servers_prefix: str) -> list[str]:
    netdev, rdma = f"${{NIC{nic.nic}_NETDEV}}", f"${{NIC{nic.nic}_RDMA}}"
    table = ROUTE_TABLE_BASE + nic.nic
    lines = [
        f"# nic{nic.nic} -> {nic.leaf} {nic.leaf_interface} ({nic.speed}G)",
        f"ip link set dev {netdev} mtu {mtu}",
    ]
    if nic.address:
        lines.append(f"ip address replace {nic.address}/{nic.prefix_length} dev {netdev}")
    if servers_prefix and nic.gateway and nic.address:
        lines += [
            f"ip route replace {servers_prefix} via {nic.gateway} dev {netdev} table {table}",
            f"ip rule del priority {table} 2>/dev/null || true",
            f"ip rule add from {nic.address} table {table} priority {table}",
        ]
    lines += [
        f"mlnx_qos -i {netdev} --trust dscp",
        f"mlnx_qos -i {netdev} --pfc {pfc_flags(roce.no_drop_priority)}",
        f"cma_roce_tos -d {rdma} -t {roce.host_tos}",
        f"echo {roce.host_tos} > /sys/class/infiniband/{rdma}/tc/1/traffic_class",
        f"echo {roce.dscp_cnp} > /sys/class/net/{netdev}/ecn/roce_np/cnp_dscp",
    ]
    if roce.ecn_enabled:
        lines += [
            f"echo 1 > /sys/class/net/{netdev}/ecn/roce_np/enable/{roce.no_drop_priority}",
            f"echo 1 > /sys/class/net/{netdev}/ecn/roce_rp/enable/{roce.no_drop_priority}",
        ]
    return lines


def _server_page(server: Server, roce: RocePolicy, mtu: dict[tuple[str, str], int], servers_prefix: str) -> str:
    variables = [f': "${{NIC{n.nic}_NETDEV:?netdev of nic{n.nic}}}" "${{NIC{n.nic}_RDMA:?RDMA device of nic{n.nic}}}"' for n in server.nics]
    body: list[str] = []
    for nic in server.nics:
        body += [*nic_commands(nic, roce, mtu[(nic.leaf, nic.leaf_interface)], servers_prefix), ""]
    return (
        f"# {server.name}: NIC settings\n\n"
        f"Leaf {server.leaf}. RoCE data DSCP {roce.dscp_data} (ToS {roce.host_tos}), lossless priority {roce.no_drop_priority}, "
        f"CNP DSCP {roce.dscp_cnp}. Set `NCCL_IB_TC={roce.host_tos}` for NCCL jobs.\n\n"
        "Set `NICn_NETDEV` (e.g. `ens1f0np0`) and `NICn_RDMA` (e.g. `mlx5_0`) for each NIC, then run as root:\n\n"
        "```sh\nset -eu\n" + "\n".join(variables) + "\n\n" + "\n".join(body) + "```\n"
    )


def hosts(plan: Plan, context: RenderContext) -> dict[str, str]:
    roce = plan.roce
    if roce is None or not plan.servers:
        return {}
    servers_prefix = next((p.prefix for p in plan.pools if p.name == "servers"), "")
    leaves = {nic.leaf for s in plan.servers for nic in s.nics}  # rail attachment spreads a server over leaves
    mtu = {(d.name, i.name): i.mtu for d in plan.devices if d.name in leaves for i in d.interfaces}
    rows = [
        (
            server.name,
            f"nic{nic.nic}",
            nic.leaf,
            nic.leaf_interface,
            f"{nic.speed}G",
            nic.address,
            nic.prefix_length,
            nic.gateway,
            mtu[(nic.leaf, nic.leaf_interface)],
            "dscp",
            roce.no_drop_priority,
            pfc_flags(roce.no_drop_priority),
            roce.dscp_data,
            roce.host_tos,
            roce.dscp_cnp,
        )
        for server in plan.servers
        for nic in server.nics
    ]
    files = {"hosts.csv": csv_text(COLUMNS, rows)}
    for server in plan.servers:
        files[f"hosts/{server.name}.md"] = _server_page(server, roce, mtu, servers_prefix)
    return files
