"""Pass: the inventory facts consumers need with their source positions: device pins and
`fabricgen analyze` jobs. Checks and `analyze` read them from the plan, so they never load the
inventory again, and a finding points at the pinned key (`leaves.nodes[0].asn`), not at the
tier's default.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fabricgen.core.model import JobInput, Pin
from fabricgen.inventory.loader import SourceMap, format_path
from fabricgen.plan.passes.expand import TierNode

PIN_KEYS = ("name", "model", "platform", "asn", "loopback", "management", "serial", "guid")
"""Keys of a `nodes:` entry that pin a device's value."""


def pins_of(nodes: Iterable[TierNode], source: SourceMap) -> tuple[Pin, ...]:
    """Every pinned value of every device, in device order.

    >>> from fabricgen.core.catalog import models_for, platforms
    >>> model = models_for({})["arista-7060dx5-64s"]
    >>> node = TierNode("leaf", 1, "l1", model, platforms()[model.platforms[0]], asn=65555, pin=("leaves", "nodes", 0))
    >>> pins_of([node], SourceMap("f.yml", {("leaves", "nodes", 0, "asn"): (9, 27)}))
    (Pin(device='l1', key='asn', path='leaves.nodes[0].asn', line=9, column=27),)
    """
    pins = []
    for node in nodes:
        if not node.pin:
            continue
        for key in PIN_KEYS:
            path = (*node.pin, key)
            if path in source.values:
                line, column = source.values[path]
                pins.append(Pin(node.name, key, format_path(path), line, column))
    return tuple(pins)


def jobs_of(jobs: Mapping[str, Any], source: SourceMap) -> tuple[JobInput, ...]:
    """The `jobs:` section, by name, with each job's key positions."""
    positions: dict[str, dict[str, tuple[int, int]]] = {name: {} for name in jobs}
    for path, where in source.values.items():
        if len(path) >= 2 and path[0] == "jobs" and path[1] in positions:
            positions[str(path[1])][".".join(str(p) for p in path[2:])] = where
    return tuple(JobInput(name, dict(jobs[name]), positions[name]) for name in sorted(jobs))


def job_source(file: str, jobs: Iterable[JobInput]) -> SourceMap:
    """A SourceMap of just the jobs' keys, for the analyzer's diagnostics."""
    values = {("jobs", job.name, *(key.split(".") if key else ())): where for job in jobs for key, where in job.positions.items()}
    return SourceMap(file, values)
