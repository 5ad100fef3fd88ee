"""An NDR or XDR fabric planned for a subnet manager that cannot run it.

OpenSM before 3.3.24 has no NDR case in its port-rate computation (upstream commit bf850acd,
"Support NDR devices"), and multicast joins are refused when a port's rate is below the
group's (`validate_port_caps`): tenant IPoIB groups may not come up. No upstream release has
XDR; NVIDIA MLNX OpenSM and UFM run both. The rule is data (data/subnet_managers.yml); an
inventory that names no version runs the distribution's OpenSM (Debian 12: 3.3.23).
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.catalog import catalog_data
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.inputs import Inputs


def version_tuple(version: str) -> tuple[int, ...]:
    """'3.3.24' -> (3, 3, 24), so versions compare as numbers ('3.3.9' < '3.3.24').

    >>> version_tuple("3.3.9") < version_tuple("3.3.24")
    True
    """
    return tuple(int(part) for part in version.split("."))


def check_sm_software(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Refuse the stated (or the distribution's) upstream OpenSM when it predates the links."""
    ib = plan.infiniband
    if ib is None:
        return
    sm = ib.sm_software
    data = catalog_data("subnet_managers.yml")
    if not sm.generation or sm.implementation in data["nvidia"]:
        return
    stated = f"OpenSM {sm.version}" if sm.version else f"an unstated OpenSM version (Debian 12's is {data['distribution_default']})"
    version = sm.version or data["distribution_default"]
    if not sm.minimum_opensm:
        message = f"an {sm.generation} fabric needs NVIDIA MLNX OpenSM or UFM: no upstream OpenSM release supports {sm.generation}; the inventory plans {stated}"
        hint = "set opensm.implementation: mlnx-opensm or ufm (with opensm.version)"
    elif version_tuple(version) < version_tuple(sm.minimum_opensm):
        message = (
            f"an {sm.generation} fabric needs OpenSM {sm.minimum_opensm} or later, or NVIDIA MLNX OpenSM / UFM"
            f"; the inventory plans {stated}, which has no {sm.generation} port rates: OpenSM refuses "
            "multicast joins of ports slower than the group (validate_port_caps), so tenant IPoIB may not come up"
        )
        hint = f'install OpenSM {sm.minimum_opensm}+ on the SM hosts and set opensm.version: "{sm.minimum_opensm}", or opensm.implementation: mlnx-opensm / ufm'
    else:
        return
    yield source.diagnostic(("opensm", "version"), message, hint=hint)
