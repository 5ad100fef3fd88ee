"""Analytical cost model: gradient all-reduce time against compute time for one training step.

Pure functions over two small records: the training `Job` and the `Network` a GPU of that job
gets from the plan. The formulas are the textbook alpha-beta models (docs/analyze.md lists each
one with its source) so a reviewer can redo any number by hand:

- ring all-reduce over n ranks: 2(n-1)/n * S / B + 2(n-1) * alpha
- hierarchical: reduce-scatter inside the server over NVLink, a ring all-reduce of the 1/g
  shard between servers over the fabric (every GPU on its own NIC, in parallel), all-gather back
- compute: 6 * params * tokens / (GPUs * peak * MFU), one third forward, two thirds backward

All times are seconds, bandwidths bytes/s unless a name says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

# Documented defaults (docs/analyze.md gives the source of each).
DEFAULT_EFFICIENCY = {"infiniband": 0.92, "roce": 0.83}
DEFAULT_LATENCY_NETWORK_US = 9.6
DEFAULT_LATENCY_NVLINK_US = 3.4
FORWARD_SHARE = 1.0 / 3.0
"""Forward pass share of the 6*N*D FLOPs (2*N*D forward, 4*N*D backward)."""


@dataclass(frozen=True, slots=True)
class Job:
    """One training job. `data_parallel` * `tensor_parallel` * `pipeline_parallel` == `gpus`."""

    name: str
    params: float
    bytes_per_gradient: int
    gpus: int
    gpus_per_server: int
    nvlink_gbytes_per_s: float
    data_parallel: int
    tensor_parallel: int
    pipeline_parallel: int
    tokens_per_step: float
    peak_tflops: float
    mfu: float

    @property
    def model_parallel(self) -> int:
        return self.tensor_parallel * self.pipeline_parallel

    @property
    def gradient_bytes(self) -> float:
        """Bytes one GPU all-reduces per step: its 1/(TP*PP) share of the gradients."""
        return self.params * self.bytes_per_gradient / self.model_parallel

    @property
    def dp_local(self) -> int:
        """Data-parallel peers of a GPU inside its own server (tensor parallelism is innermost,
        as Megatron-LM orders ranks; pipeline stages are outermost)."""
        if self.tensor_parallel >= self.gpus_per_server:
            return 1
        return max(1, min(self.data_parallel, self.gpus_per_server // self.tensor_parallel))

    @property
    def dp_servers(self) -> int:
        """Servers one data-parallel group spans."""
        return max(1, -(-self.data_parallel // self.dp_local))


@dataclass(frozen=True, slots=True)
class Network:
    """What the fabric gives one GPU. `line_gbps`: NIC line rate per GPU (the server's NIC ports
    times their speed, divided by its GPUs); `share`: the leaf's uplink share under its
    oversubscription (min(1, uplink/downlink), 1 when the job stays on one leaf);
    `efficiency`: fraction of line rate a large collective achieves (transport, protocol)."""

    transport: str
    line_gbps: float
    share: float
    efficiency: float
    latency_network_us: float = DEFAULT_LATENCY_NETWORK_US
    latency_nvlink_us: float = DEFAULT_LATENCY_NVLINK_US
    path_slowdown: float = 1.0
    """Divides the bandwidth: collisions of flows on fabric links (from the ECMP simulation)."""

    @property
    def gpu_gbps(self) -> float:
        """Effective per-GPU network bandwidth in Gbit/s."""
        return self.line_gbps * self.share * self.efficiency / self.path_slowdown

    @property
    def gpu_bytes_per_s(self) -> float:
        return self.gpu_gbps * 1e9 / 8


@dataclass(frozen=True, slots=True)
class Estimate:
    """The model's answer for one job on one network."""

    gradient_bytes: float
    ring_s: float
    hierarchical_s: float
    compute_s: float
    forward_s: float
    backward_s: float
    dp_local: int
    dp_servers: int
    gpu_gbps: float

    @property
    def allreduce_s(self) -> float:
        """The faster algorithm, as NCCL's tuner would pick it."""
        return min(self.ring_s, self.hierarchical_s)

    @property
    def algorithm(self) -> str:
        return "ring" if self.ring_s <= self.hierarchical_s else "hierarchical"

    @property
    def ratio(self) -> float:
        """Communication / computation."""
        return self.allreduce_s / self.compute_s if self.compute_s else float("inf")

    @property
    def step_no_overlap_s(self) -> float:
        return self.compute_s + self.allreduce_s

    @property
    def exposed_overlap_s(self) -> float:
        """All-reduce time left over when it overlaps the backward pass (bucketed, as DDP does)."""
        return max(0.0, self.allreduce_s - self.backward_s)

    @property
    def step_overlap_s(self) -> float:
        return self.compute_s + self.exposed_overlap_s

    @property
    def busy_no_overlap(self) -> float:
        """Fraction of the step the GPUs compute."""
        return self.compute_s / self.step_no_overlap_s if self.step_no_overlap_s else 1.0

    @property
    def busy_overlap(self) -> float:
        return self.compute_s / self.step_overlap_s if self.step_overlap_s else 1.0

    @property
    def ratio_overlap(self) -> float:
        """Exposed communication / computation with overlap."""
        return self.exposed_overlap_s / self.compute_s if self.compute_s else float("inf")

    @property
    def network_bound(self) -> bool:
        """The issue's verdict: the all-reduce takes longer than forward + backward."""
        return self.allreduce_s > self.compute_s

    @property
    def hidden(self) -> bool:
        """The all-reduce fits under the backward pass."""
        return self.allreduce_s <= self.backward_s

    @property
    def verdict(self) -> str:
        if self.network_bound:
            return "network-bound"
        return "compute-bound" if self.hidden else "compute-bound, communication partly exposed"


def ring_allreduce_s(size_bytes: float, ranks: int, bytes_per_s: float, alpha_s: float) -> float:
    """Ring all-reduce (reduce-scatter + all-gather): 2(n-1)/n * S / B + 2(n-1) * alpha."""
    if ranks <= 1 or size_bytes <= 0:
        return 0.0
    if bytes_per_s <= 0:
        return float("inf")
    return 2 * (ranks - 1) / ranks * size_bytes / bytes_per_s + 2 * (ranks - 1) * alpha_s


def ring_phase_s(size_bytes: float, ranks: int, bytes_per_s: float, alpha_s: float) -> float:
    """One ring reduce-scatter or all-gather: (n-1)/n * S / B + (n-1) * alpha."""
    if ranks <= 1 or size_bytes <= 0:
        return 0.0
    if bytes_per_s <= 0:
        return float("inf")
    return (ranks - 1) / ranks * size_bytes / bytes_per_s + (ranks - 1) * alpha_s


def hierarchical_allreduce_s(
    size_bytes: float,
    local: int,
    servers: int,
    nvlink_bytes_per_s: float,
    net_bytes_per_s: float,
    alpha_nvlink_s: float,
    alpha_net_s: float,
) -> float:
    """Reduce-scatter over NVLink among `local` GPUs, ring all-reduce of each 1/local shard
    among `servers` (the local GPUs do this in parallel, each on its own NIC), all-gather back."""
    intra = ring_phase_s(size_bytes, local, nvlink_bytes_per_s, alpha_nvlink_s)
    inter = ring_allreduce_s(size_bytes / local, servers, net_bytes_per_s, alpha_net_s)
    return 2 * intra + inter


def compute_s(job: Job) -> float:
    """6 * params * tokens / (GPUs * peak * MFU): forward + backward of a dense transformer."""
    return 6 * job.params * job.tokens_per_step / (job.gpus * job.peak_tflops * 1e12 * job.mfu)


def estimate(job: Job, network: Network) -> Estimate:
    """All-reduce and compute time of one step of `job` on `network`."""
    size = job.gradient_bytes
    nvlink = job.nvlink_gbytes_per_s * 1e9
    net = network.gpu_bytes_per_s
    alpha_net = network.latency_network_us * 1e-6
    alpha_nvl = network.latency_nvlink_us * 1e-6
    local, servers = job.dp_local, job.dp_servers
    # A flat ring over every data-parallel rank runs at its slowest hop: the NIC once it leaves the server.
    flat_bw, flat_alpha = (net, alpha_net) if servers > 1 else (nvlink, alpha_nvl)
    ring = ring_allreduce_s(size, job.data_parallel, flat_bw, flat_alpha)
    hier = hierarchical_allreduce_s(size, local, servers, nvlink, net, alpha_nvl, alpha_net)
    total = compute_s(job)
    forward = total * FORWARD_SHARE
    return Estimate(size, ring, hier, total, forward, total - forward, local, servers, network.gpu_gbps)
