"""Render producer for InfiniBand fabrics: per subnet-manager host the OpenSM files
(`opensm/<host>/...`), the ibsim topology of the plan (`ib/ibsim.net`) and the servers' host
pages (`hosts/<server>.md`, `ib-hosts.csv`: P_Key index and SL for NCCL, see hosts.py).

Every SM host gets the same routing, partition and QoS files (a standby must route the same
way when it takes over); only `opensm.conf` (port GUID and priority) and `default-opensm` (the
planned port in PORTS=, installed as /etc/default/opensm) differ.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabricgen.core.model import Plan
from fabricgen.render.templating import environment

if TYPE_CHECKING:
    from fabricgen.render.context import RenderContext

SHARED_FILES = ("root_guids.conf", "cn_guids.conf", "partitions.conf", "node-name-map")
PER_HOST_FILES = ("opensm.conf", "default-opensm")


def opensm_files(plan: Plan, context: RenderContext) -> dict[str, str]:
    """`opensm/<sm host>/{opensm.conf,default-opensm,root_guids.conf,cn_guids.conf,partitions.conf,qos-policy.conf,node-name-map}`."""
    ib = plan.infiniband
    if ib is None:
        return {}
    # Imported here: every render lists this producer, most fabrics are Ethernet (the ibsim
    # and host modules cost a RoCE render about 5 ms of start-up).
    from fabricgen.infiniband.hosts import ib_hosts
    from fabricgen.infiniband.topology import net_file

    env = environment(context.user_template_dirs)
    names = (*SHARED_FILES, "qos-policy.conf") if ib.qos_enabled else SHARED_FILES
    shared = {name: env.get_template(f"opensm/{name}.j2").render(plan=plan, ib=ib) for name in names}
    per_host = {name: env.get_template(f"opensm/{name}.j2") for name in PER_HOST_FILES}
    files: dict[str, str] = {}
    for sm in ib.subnet_managers:
        for name, template in per_host.items():
            files[f"opensm/{sm.host}/{name}"] = template.render(plan=plan, ib=ib, sm=sm)
        for name, text in shared.items():
            files[f"opensm/{sm.host}/{name}"] = text
    files["ib/ibsim.net"] = net_file(plan)
    files.update(ib_hosts(plan, context))
    return files
