"""Whether the servers of each `jobs:` entry can talk to each other over InfiniBand partitions.

Limited members of a partition talk only to its full members (opensm(8), PARTITION
CONFIGURATION; IBTA Vol. 1 §10.9.1.2): two servers that are full members of no common
partition, Default included, drop each other's packets, so NCCL between them fails. A job runs
on the plan's first servers (the placement `analyze` and `checks/jobs.py` use), so those are
the servers checked; one warning per job names one such pair.
"""

from __future__ import annotations

from collections.abc import Iterable

from fabricgen.checks.jobs import job_servers
from fabricgen.core.diagnostics import Diagnostic
from fabricgen.core.model import Plan
from fabricgen.inventory.loader import SourceMap
from fabricgen.inventory.validation.common import warning
from fabricgen.plan.inputs import Inputs


def check_job_partitions(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """One warning per job whose servers include a pair with no full-member partition in common."""
    ib = plan.infiniband
    if ib is None or ib.default_membership == "full" or not plan.servers:
        return
    full: dict[str, set[str]] = {s.name: set() for s in plan.servers}
    for part in ib.partitions:
        if part.membership == "full":
            for host in part.hosts:
                full[host].add(part.name)
    for job in plan.jobs:
        pair = _pair_without_full_partition([s.name for s in plan.servers[: job_servers(plan, job)]], full)
        if pair:
            yield warning(
                source,
                ("jobs", job.name),
                f"servers {pair[0]} and {pair[1]} of the job share no partition as full members: limited-to-limited "
                "traffic is dropped (opensm(8), PARTITION CONFIGURATION), so NCCL between them fails",
                hint="make both full members of one partition (partitions[].membership: full), or set default_partition.membership: full",
                key=True,
            )


def _pair_without_full_partition(hosts: list[str], full: dict[str, set[str]]) -> tuple[str, str] | None:
    """The first pair of `hosts` (in plan order) that share no full-member partition, comparing
    one host per distinct set of partitions so a job of thousands of servers stays cheap.

    >>> _pair_without_full_partition(["a", "b", "c"], {"a": {"x"}, "b": {"x", "y"}, "c": {"y"}})
    ('a', 'c')
    >>> _pair_without_full_partition(["a", "b"], {"a": {"x"}, "b": {"x"}}) is None
    True
    """
    first: dict[frozenset[str], str] = {}
    for host in hosts:
        first.setdefault(frozenset(full[host]), host)
    groups = list(first.items())
    for i, (parts, host) in enumerate(groups):
        other = next((h for h in hosts if h != host), None)
        if not parts and other is not None:
            return (host, other) if hosts.index(host) < hosts.index(other) else (other, host)
        for other_parts, later in groups[i + 1 :]:
            if not parts & other_parts:
                return host, later
    return None
