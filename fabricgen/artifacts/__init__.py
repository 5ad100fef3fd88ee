"""Review and planning artifacts: what people otherwise build by hand in spreadsheets.

Each module holds one producer `(plan, context) -> {path: text}`; `fabricgen/producers.py`
lists them after the device configs. They only read the plan (and catalog data), never each other's
output, so each can be tested alone.
"""

from __future__ import annotations

from fabricgen.artifacts.bom import bom
from fabricgen.artifacts.cabling import cabling
from fabricgen.artifacts.gitattributes import gitattributes
from fabricgen.artifacts.hosts import hosts
from fabricgen.artifacts.lab import lab
from fabricgen.artifacts.netbox import netbox
from fabricgen.artifacts.readme import fabric_readme

ARTIFACT_PRODUCERS = (fabric_readme, cabling, bom, netbox, hosts, lab, gitattributes)

__all__ = ["ARTIFACT_PRODUCERS", "bom", "cabling", "fabric_readme", "gitattributes", "hosts", "lab", "netbox"]
