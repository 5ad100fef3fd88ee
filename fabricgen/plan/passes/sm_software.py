"""Which subnet manager the InfiniBand fabric is planned for, and which one its links need.

The switches' lane rate names the link generation (50G HDR, 100G NDR, 200G XDR);
data/subnet_managers.yml gives the first upstream OpenSM that computes that generation's port
rates (none for XDR). `checks/ib_sm.py` refuses a plan whose stated SM is older.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.core.catalog import catalog_data
from fabricgen.core.model import Device, SmSoftware
from fabricgen.plan.inputs import OpensmInput


def sm_software(opensm: OpensmInput, devices: Iterable[Device], lane_rates: dict[str, int]) -> SmSoftware:
    """The stated SM and the generation of the fastest switch model in the plan (`lane_rates`:
    model name -> lane rate in Gb/s)."""
    generations = catalog_data("subnet_managers.yml")["generations"]
    rate = max((lane_rates.get(d.model, 0) for d in devices), default=0)
    known = [r for r in generations if r <= rate]
    entry = generations[max(known)] if known else {"name": "", "opensm": ""}
    return SmSoftware(
        implementation=opensm.implementation,
        version=opensm.version,
        generation=entry["name"],
        minimum_opensm=entry["opensm"] or "",
    )
