"""The fabric as arrays: what the cost model and the flow simulation need, and nothing of the plan.

`planview.fabric_of(plan)` builds a `Fabric` from a plan; everything here works on the arrays
only, so a change in the plan's shape touches the adapter, not the analysis. Two or three tiers
(leaf, spine, super-spine), servers on one leaf or spread over rail leaves.

Directed fabric links are numbered by the adapter; the tables say which link a hop takes:

- `leaf_up[l, j, p]`: leaf l up to the j-th spine of its pod over parallel cable p
- `spine_down[s, i, p]`: spine s down to the i-th leaf of its pod over cable p
- `spine_up[s, k, q]`: spine s up to the k-th super-spine of its plane over cable q
- `ss_down[x, pod, q]`: super-spine x down to the spine of `pod` in its plane over cable q
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class TopologyError(ValueError):
    """The plan is not a shape this analysis understands."""


@dataclass(frozen=True, slots=True)
class Fabric:
    """Leaves, spines, super-spines and server NIC ports of a plan, indexed from 0 in plan order."""

    transport: str
    leaves: tuple[str, ...]
    spines: tuple[str, ...]
    superspines: tuple[str, ...]
    link_gbps: FloatArray
    """Capacity of each directed fabric link."""
    leaf_pod: IntArray
    leaf_local: IntArray
    """Index of each leaf among the leaves of its pod."""
    spine_pod: IntArray
    leaf_up: IntArray
    leaf_up_spine: IntArray
    """(L, Sp): global index of the j-th spine of leaf l's pod."""
    spine_down: IntArray
    spine_up: IntArray
    spine_up_ss: IntArray
    ss_down: IntArray
    ss_down_spine: IntArray
    port_leaf: IntArray
    """Leaf of every server NIC port (servers in plan order, NICs in order)."""
    port_key: IntArray
    """Position of each port among its leaf's server ports: the key ftree spreads routes by."""
    server_first_port: IntArray
    server_nics: IntArray
    server_nic_gbps: FloatArray
    """Sum of each server's NIC port speeds."""
    leaf_share: FloatArray
    """min(1, uplink / downlink) per leaf."""
    spine_share: FloatArray
    """min(1, uplink / downlink) per spine (1 without super-spines)."""
    rails: int = 0
    """Rail leaves per scalable unit when servers attach by rail; 0 otherwise."""

    @property
    def n_links(self) -> int:
        return int(self.link_gbps.shape[0])

    @property
    def tiers(self) -> int:
        if not len(self.spines):
            return 1
        return 3 if len(self.superspines) else 2

    @property
    def pods(self) -> int:
        return int(self.leaf_pod.max()) + 1 if len(self.leaf_pod) else 0

    @property
    def servers(self) -> int:
        return int(self.server_nics.shape[0])

    def job_ports(self, servers: int, rails: int) -> IntArray:
        """(servers, rails) port numbers of the first `servers` servers' first `rails` NICs."""
        rail = np.arange(rails, dtype=np.int64)
        first = self.server_first_port[:servers, None]
        return first + rail[None, :] % self.server_nics[:servers, None]


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a job's GPUs sit: the first `servers` servers of the plan, in plan order."""

    servers: int
    gpus_per_server: int
    line_gbps: float
    """NIC line rate per GPU of the slowest server used."""
    nics_per_gpu: float
    leaves: int
    """Distinct leaves the job's NIC ports are cabled to."""
    pods: int
    rail_attached: bool

    def describe(self) -> str:
        """The placement line of the report, true for rail jobs as for one-leaf servers."""
        text = f"first {self.servers} servers in plan order, NIC ports on {self.leaves} leaves"
        if self.pods > 1:
            text += f" in {self.pods} pods"
        if self.rail_attached:
            text += " (rail-attached: each server spans its unit's rail leaves)"
        return text


def place(fabric: Fabric, gpus: int, gpus_per_server: int) -> Placement:
    """Place `gpus` on whole servers in plan order (how a topology-aware scheduler packs a job)."""
    needed = -(-gpus // gpus_per_server)
    if needed > fabric.servers:
        raise TopologyError(
            f"the job needs {needed} servers of {gpus_per_server} GPUs; the plan has {fabric.servers} ({fabric.servers * gpus_per_server} GPUs)"
        )
    ports = fabric.job_ports(needed, int(fabric.server_nics[:needed].max()))
    leaves = np.unique(fabric.port_leaf[ports])
    line = float((fabric.server_nic_gbps[:needed] / gpus_per_server).min())
    pods = len(np.unique(fabric.leaf_pod[leaves])) if len(fabric.leaf_pod) else 1
    nics_per_gpu = float(fabric.server_nics[:needed].min()) / gpus_per_server
    return Placement(needed, gpus_per_server, line, nics_per_gpu, len(leaves), pods, fabric.rails > 0)
