"""Whether each `jobs:` entry fits on the fabric: one rule, used by `validate` (a plan check) and
by `fabricgen analyze` (which places the job with it), so both refuse the same job with the
same words, and a job that cannot run is found before anyone analyses it.

A job needs ceil(gpus / gpus_per_server) whole servers (how a topology-aware scheduler packs
it); more than the plan has is an error. More GPUs per server than the server has NIC ports is
a warning: the GPUs share NICs, which some designs do on purpose, and `analyze` models it.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from fabricgen.core.diagnostics import Diagnostic, Severity
from fabricgen.core.model import JobInput, Plan
from fabricgen.core.records import record
from fabricgen.inventory.loader import SourceMap
from fabricgen.plan.inputs import Inputs


@record
class PlacementProblem:
    """One reason a job does not fit: the job key to change, the message, error or warning."""

    key: str
    message: str
    severity: Severity = Severity.ERROR


def placement_problems(gpus: int, gpus_per_server: int, servers: int, nic_ports: int) -> list[PlacementProblem]:
    """Why a job of `gpus` GPUs, `gpus_per_server` per server, does not fit `servers` servers of
    at least `nic_ports` NIC ports each.

    >>> [p.message for p in placement_problems(64, 8, 4, 8)]
    ['the job needs 8 servers of 8 GPUs; the plan has 4 (32 GPUs)']
    >>> [(p.key, p.severity.value) for p in placement_problems(16, 8, 4, 1)]
    [('gpus_per_server', 'warning')]
    >>> placement_problems(32, 8, 4, 8)
    []
    """
    found = []
    needed = -(-gpus // gpus_per_server)
    if needed > servers:
        found.append(
            PlacementProblem(
                "gpus",
                f"the job needs {needed} servers of {gpus_per_server} GPU{'s' if gpus_per_server != 1 else ''}; the plan has {servers} ({servers * gpus_per_server} GPUs)",
            )
        )
    if gpus_per_server > nic_ports:
        found.append(
            PlacementProblem(
                "gpus_per_server",
                f"{gpus_per_server} GPUs per server share {nic_ports} NIC port{'s' if nic_ports != 1 else ''}: "
                f"each GPU gets {Fraction(nic_ports, gpus_per_server)} of a NIC port's bandwidth",
                Severity.WARNING,
            )
        )
    return found


def _job_gpus(plan: Plan, job: JobInput) -> tuple[int, int]:
    """GPUs per server and GPUs of a job, with `analyze`'s defaults: GPUs per server = NIC
    ports per server, GPUs = every GPU."""
    gpus_per_server = int(job.settings.get("gpus_per_server") or len(plan.servers[0].nics))
    return gpus_per_server, int(job.settings.get("gpus") or len(plan.servers) * gpus_per_server)


def job_servers(plan: Plan, job: JobInput) -> int:
    """How many of the plan's first servers the job runs on (analyze's placement, in plan
    order), at most every server."""
    gpus_per_server, gpus = _job_gpus(plan, job)
    return min(len(plan.servers), -(-gpus // max(gpus_per_server, 1)))


def check_jobs(plan: Plan, inputs: Inputs, source: SourceMap) -> Iterable[Diagnostic]:
    """Each job's placement on the plan's servers, at the job's key (`jobs.<name>.gpus`), with
    the defaults `analyze` uses: GPUs per server = NIC ports per server, GPUs = every GPU."""
    if not plan.jobs:
        return
    servers = len(plan.servers)
    nic_ports = min((len(server.nics) for server in plan.servers), default=0)
    for job in plan.jobs:
        if not servers:
            yield source.diagnostic(("jobs", job.name), "the fabric has no servers to place the job on", key=True)
            continue
        gpus_per_server, gpus = _job_gpus(plan, job)
        for problem in placement_problems(gpus, gpus_per_server, servers, nic_ports):
            path = ("jobs", job.name, problem.key) if problem.key in job.settings else ("jobs", job.name)
            found = source.diagnostic(path, problem.message, key=path == ("jobs", job.name))
            yield Diagnostic(found.message, found.path, found.file, found.line, found.column, found.hint, problem.severity)
