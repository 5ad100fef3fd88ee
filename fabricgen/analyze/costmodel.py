"""Analytical cost model of the gradient all-reduce as NCCL runs it, against the compute of a step.

Pure functions over small typed records (`Job`, `Network`); nothing here reads a plan, so the
plan-reading adapter (`planview`) can change without touching the formulas. docs/analyze.md gives
the source of every formula and default; a reviewer can redo any number by hand:

- ring (NCCL's ring: a channel per NIC, so a server's NICs work together):
  2(n-1)/n * S / busbw + per bucket 2(n-1) step latencies; busbw = NVLink per GPU inside a
  server, min(NVLink, local GPUs of the group x network per GPU) once the ring leaves it
- tree (NCCL's double binary tree): 2 * S / busbw + per bucket 2((l-1) intra + log2(s) inter)
- SHARP (in-network reduction, InfiniBand only, an option): reduce-scatter and all-gather over
  NVLink, each GPU's 1/l shard sent to the switch and received once: S/(l*B_net)
- a network step waits for its own previous step and its neighbour's (NCCL's dependencies are
  neighbour to neighbour, not a barrier): k dependent steps over P participants add
  jitter * min(k * H_P, 2(k-1) + H_P) (last-passage bound, checked by simulation in the tests)
- overlap as training runs: with gradient accumulation only the last micro-batch's backward
  pass hides the all-reduce (DDP `no_sync`, Megatron); the rest of it is exposed
- mixture of experts: 4 all-to-alls (dispatch, combine; forward, backward) per MoE layer and
  micro-batch, the share for other servers at the NIC's rate over the all-to-all path factor,
  the share inside the server on NVLink; on the critical path (exposed)

All times are seconds, bandwidths bytes/s unless a name says otherwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# Documented defaults (docs/analyze.md gives the source of each).
DEFAULT_EFFICIENCY = {"infiniband": 0.94, "roce": 0.90}
DEFAULT_JITTER_US = {"infiniband": 0.5, "roce": 2.0}
DEFAULT_LATENCY_NETWORK_US = 14.0
"""NCCL 2.30.7 `src/graph/tuning.cc`: hwLat[NET][Ring][Simple] = hwLat[NET][Tree][Simple] = 14 us."""
DEFAULT_LATENCY_NVLINK_US = 3.4
DEFAULT_NVLINK_GBYTES = 370.0
"""H100 NVLink 4 as NCCL achieves it (450 GB/s line rate less ~20 % protocol: nccl-tests#212)."""
EXPOSED_LIMIT = 0.05
"""The one threshold of every verdict: the network may expose at most 5 % of the step."""
NETWORK_BOUND_SHARE = 0.5
"""Network-bound when the exposed all-reduce is half the step or more."""
DEFAULT_CHANNELS_PER_NIC = 2
DEFAULT_QPS_PER_CONNECTION = 1
OPTIMIZER_BYTES_PER_PARAM = 12
"""fp32 master weights, Adam m and v (ZeRO paper's K = 12), besides bf16 weights and gradients."""
FORWARD_SHARE = 1.0 / 3.0
"""Forward pass share of the 6*N*D FLOPs (2*N*D forward, 4*N*D backward)."""
EULER_GAMMA = 0.5772156649015329


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
    gpu_memory_gb: float = 80.0
    bucket_mb: float = 25.0
    optimizer_sharding: bool = True
    sequence_length: int = 4096
    micro_batch_size: int = 1
    hidden_size: int = 0
    """0: derived from `params` (see `hidden`)."""
    experts: int = 0
    """Experts per MoE layer; 0: a dense model (no all-to-all)."""
    expert_parallel: int = 1
    experts_per_token: int = 2
    """Top-k routing: experts each token is sent to."""
    moe_layers: int = 0
    """0: every layer of the model is an MoE layer (see `layers`)."""

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

    @property
    def dp_groups(self) -> int:
        """Data-parallel groups all-reducing at the same time (one per model-parallel rank)."""
        return max(1, self.gpus // max(self.data_parallel, 1))

    @property
    def micro_batches(self) -> int:
        """Micro-batches per optimizer step and data-parallel rank (gradient accumulation, and the
        pipeline's micro-batches): global batch / (sequence length x micro-batch size x DP)."""
        per_pass = self.sequence_length * self.micro_batch_size * self.data_parallel
        return max(1, math.ceil(self.tokens_per_step / per_pass))

    @property
    def hidden(self) -> int:
        """Model width: `hidden_size`, or from params = 12 L h^2 with L = h / 128 layers (Llama 3
        8B 4096/32, 70B 8192/80, 405B 16384/126): h = (params * 128 / 12) ** (1/3)."""
        return self.hidden_size or round((self.params * 128 / 12) ** (1 / 3))

    @property
    def layers(self) -> int:
        """Transformer layers, from the width as `hidden` assumes them: L = h / 128."""
        return max(1, round(self.hidden / 128))

    @property
    def moe_layers_per_stage(self) -> int:
        """MoE layers one GPU runs: `moe_layers` (or every layer) over the pipeline stages."""
        return -(-(self.moe_layers or self.layers) // self.pipeline_parallel) if self.experts else 0

    @property
    def ep_local(self) -> int:
        """Expert-parallel peers of a GPU inside its own server (the group is formed from
        data-parallel ranks next to the tensor-parallel ones, so it takes gpus_per_server / TP
        of them per server)."""
        return max(1, min(self.expert_parallel, self.gpus_per_server // self.tensor_parallel))

    @property
    def ep_servers(self) -> int:
        """Servers one expert-parallel group spans (1: its all-to-all stays on NVLink)."""
        return -(-self.expert_parallel // self.ep_local)

    @property
    def dispatch_bytes(self) -> float:
        """Bytes one GPU sends to other expert-parallel ranks in one all-to-all (dispatch or
        combine): its tokens of the micro-batch (sequence parallelism splits them over the
        tensor-parallel ranks) x hidden x 2 (bf16) x top-k, less the 1/EP routed to itself."""
        tokens = self.sequence_length * self.micro_batch_size / self.tensor_parallel
        ep = self.expert_parallel
        return tokens * self.hidden * 2 * self.experts_per_token * (ep - 1) / ep

    @property
    def activation_bytes(self) -> float:
        """Bytes one GPU sends to the next pipeline stage per micro-batch: bf16 activations of
        its sequences, split over the tensor-parallel ranks (Megatron's scatter/gather)."""
        return self.sequence_length * self.micro_batch_size * self.hidden * 2 / self.tensor_parallel

    @property
    def buckets(self) -> int:
        """All-reduce calls per step: gradients go out in buckets (PyTorch DDP `bucket_cap_mb`),
        and every call pays the algorithm's latency."""
        return max(1, math.ceil(self.gradient_bytes / (self.bucket_mb * 1e6)))

    @property
    def memory_bytes_per_gpu(self) -> float:
        """Weights and gradients of the GPU's shard plus Adam state (sharded over DP when the
        optimizer is distributed, as ZeRO-1 / Megatron's distributed optimizer do).
        Activations are not counted, so this is a lower bound."""
        shard = self.params / self.model_parallel
        state = shard * OPTIMIZER_BYTES_PER_PARAM
        if self.optimizer_sharding:
            state /= max(self.data_parallel, 1)
        return shard * (2 + self.bytes_per_gradient) + state


@dataclass(frozen=True, slots=True)
class Network:
    """What the fabric gives one GPU. `line_gbps`: NIC line rate per GPU; `efficiency`: the one
    fraction of line rate a large all-reduce achieves on this transport (calibrated against
    published nccl-tests runs, docs/analyze.md); `path_factor` >= 1 divides the bandwidth: the
    most loaded fabric link under the routing (ECMP, ftree, adaptive) against its capacity, for
    the ring's traffic pattern; `tree_path_factor` the same for the double binary tree's."""

    transport: str
    line_gbps: float
    efficiency: float
    path_factor: float = 1.0
    latency_network_us: float = DEFAULT_LATENCY_NETWORK_US
    latency_nvlink_us: float = DEFAULT_LATENCY_NVLINK_US
    jitter_us: float = 0.0
    congestion: float = 0.0
    """Utilisation of the fabric by other traffic, 0..0.95: queueing stretches the jitter by
    1/(1-load); it takes no bandwidth in this model."""
    sharp: bool = False
    tree_path_factor: float | None = None
    all_to_all_path_factor: float = 1.0
    """The same for the all-to-all pattern (mixture-of-experts dispatch and combine)."""

    @property
    def gpu_gbps(self) -> float:
        """Effective per-GPU network bandwidth in Gbit/s (ring pattern)."""
        return self.line_gbps * self.efficiency / max(self.path_factor, 1.0)

    @property
    def gpu_bytes_per_s(self) -> float:
        return self.gpu_gbps * 1e9 / 8

    @property
    def tree_bytes_per_s(self) -> float:
        """Per-GPU network bandwidth under the tree's traffic pattern."""
        factor = self.path_factor if self.tree_path_factor is None else self.tree_path_factor
        return self.line_gbps * self.efficiency / max(factor, 1.0) * 1e9 / 8


def harmonic(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n: the expected maximum of n unit-mean exponentials.

    >>> harmonic(1), round(harmonic(4), 4)
    (1.0, 2.0833)
    >>> abs(harmonic(10**6) - (math.log(10**6) + EULER_GAMMA)) < 1e-6
    True
    """
    if n <= 0:
        return 0.0
    if n <= 1000:
        return math.fsum(1.0 / k for k in range(1, n + 1))
    return math.log(n) + EULER_GAMMA + 1 / (2 * n) - 1 / (12 * n * n)


def dependency_tail(steps: int, participants: int) -> float:
    """Expected jitter (in units of its mean) that `steps` dependent network steps add when
    each step waits for its own previous step and one neighbour's, over `participants`
    concurrent senders: min(k * H_P, 2(k-1) + H_P).

    A global barrier per step would cost k * H_P; NCCL's steps depend neighbour to neighbour,
    so the slowest chain grows by about two mean jitters a step (last-passage percolation),
    plus the maximum over the participants once. tests/test_analyze_tail.py checks it against
    a pipelined-ring simulation.

    >>> dependency_tail(1, 4) == harmonic(4)
    True
    >>> round(dependency_tail(62, 256), 1)
    128.1
    """
    if steps <= 0:
        return 0.0
    spread = harmonic(participants)
    return min(steps * spread, 2 * (steps - 1) + spread)


def step_latency_s(base_us: float, jitter_us: float, participants: int, congestion: float = 0.0) -> float:
    """Expected duration of one network step that waits for its slowest of `participants` hops:
    base + jitter / (1 - load) * H_P.

    >>> round(step_latency_s(10.0, 1.0, 1) * 1e6, 6)
    11.0
    """
    return chain_latency_s(1, base_us, jitter_us, participants, congestion)


def chain_latency_s(steps: int, base_us: float, jitter_us: float, participants: int, congestion: float = 0.0) -> float:
    """`steps` dependent network steps: steps x base plus their tail (`dependency_tail`),
    the jitter stretched by 1/(1 - load) by other traffic's queueing."""
    stretch = 1.0 / (1.0 - min(max(congestion, 0.0), 0.95))
    return (steps * base_us + jitter_us * stretch * dependency_tail(steps, participants)) * 1e-6


def ring_allreduce_s(size_bytes: float, ranks: int, bytes_per_s: float, alpha_s: float) -> float:
    """Ring all-reduce (reduce-scatter + all-gather): 2(n-1)/n * S / B + 2(n-1) * alpha.

    >>> ring_allreduce_s(1e9, 4, 1e9, 0.0)
    1.5
    """
    if ranks <= 1 or size_bytes <= 0:
        return 0.0
    if bytes_per_s <= 0:
        return math.inf
    return 2 * (ranks - 1) / ranks * size_bytes / bytes_per_s + 2 * (ranks - 1) * alpha_s


def bus_bytes_per_s(job: Job, network: Network, tree: bool = False) -> float:
    """NCCL's bus bandwidth for the job's data-parallel group: NVLink per GPU inside one server;
    across servers the channels use every NIC of the group's local GPUs at once."""
    nvlink = job.nvlink_gbytes_per_s * 1e9
    if job.dp_servers <= 1:
        return nvlink
    return min(nvlink, job.dp_local * (network.tree_bytes_per_s if tree else network.gpu_bytes_per_s))


@dataclass(frozen=True, slots=True)
class Estimate:
    """The model's answer for one job on one network: the all-reduce against the window of the
    backward pass it really overlaps (the last micro-batch's), and what is left exposed."""

    gradient_bytes: float
    busbw_bytes_per_s: float
    ring_s: float
    tree_s: float
    sharp_s: float
    compute_s: float
    forward_s: float
    backward_s: float
    dp_local: int
    dp_servers: int
    gpu_gbps: float
    micro_batches: int = 1
    mfu: float = 0.4
    bubble_s: float = 0.0
    """Pipeline fill and drain (1F1B): compute x (p-1)/m."""
    activation_s: float = 0.0
    """Activations and their gradients between pipeline stages, on the critical path."""
    all_to_all_s: float = 0.0
    """Mixture-of-experts dispatch and combine of the whole step, on the critical path."""
    all_to_all_calls: int = 0

    @property
    def times(self) -> dict[str, float]:
        found = {"ring": self.ring_s, "tree": self.tree_s}
        if math.isfinite(self.sharp_s):
            found["sharp"] = self.sharp_s
        return found

    @property
    def allreduce_s(self) -> float:
        """The fastest algorithm, as NCCL's tuner picks it."""
        return min(self.times.values())

    @property
    def algorithm(self) -> str:
        return min(self.times.items(), key=lambda item: (item[1], item[0]))[0]

    @property
    def overlap_window_s(self) -> float:
        """The backward pass that hides the all-reduce: only the last micro-batch's, since the
        earlier ones accumulate gradients without communicating (DDP `no_sync`, Megatron)."""
        return self.backward_s / self.micro_batches

    @property
    def headroom(self) -> float:
        """How many times the all-reduce fits in the overlap window (>= 1: hidden)."""
        return self.overlap_window_s / self.allreduce_s if self.allreduce_s else math.inf

    @property
    def allreduce_exposed_s(self) -> float:
        """All-reduce time the GPUs wait for: what sticks out of the overlap window."""
        return max(0.0, self.allreduce_s - self.overlap_window_s)

    @property
    def exposed_s(self) -> float:
        """Network time the GPUs wait for: the exposed all-reduce, the pipeline's activations and
        the experts' all-to-alls."""
        return self.allreduce_exposed_s + self.activation_s + self.all_to_all_s

    @property
    def step_s(self) -> float:
        return self.compute_s + self.bubble_s + self.exposed_s

    @property
    def exposed_share(self) -> float:
        """Fraction of the step the GPUs wait for the network."""
        return self.exposed_s / self.step_s if self.step_s else 0.0

    @property
    def busy(self) -> float:
        """Fraction of the step the GPUs compute (neither the network nor the bubble)."""
        return self.compute_s / self.step_s if self.step_s else 1.0

    @property
    def mfu_lost(self) -> float:
        """MFU points the exposed all-reduce costs: mfu - mfu * compute / step."""
        return self.mfu * self.exposed_share

    @property
    def verdict(self) -> str:
        """One threshold decides every verdict (EXPOSED_LIMIT of the step)."""
        return verdict(self.exposed_share)


def verdict(exposed_share: float) -> str:
    """compute-bound (the network exposes at most EXPOSED_LIMIT of the step), partly exposed,
    or network-bound (half the step or more).

    >>> verdict(0.0), verdict(0.18), verdict(0.6)
    ('compute-bound', 'partly exposed', 'network-bound')
    """
    if exposed_share <= EXPOSED_LIMIT:
        return "compute-bound"
    return "network-bound" if exposed_share >= NETWORK_BOUND_SHARE else "partly exposed"


def _network_participants(job: Job) -> int:
    """Senders whose network steps run at the same time: every data-parallel group's servers
    (the call ends when the slowest group's does)."""
    return job.dp_servers * job.dp_groups


def ring_s(job: Job, network: Network) -> float:
    """NCCL ring: bandwidth term at bus bandwidth; per bucket 2(n-1) steps, 2(s-1) of them
    between servers, their tail by neighbour dependency."""
    n, servers = job.data_parallel, job.dp_servers
    if n <= 1:
        return 0.0
    inter = 2 * (servers - 1)
    nvl = network.latency_nvlink_us * 1e-6
    net = chain_latency_s(inter, network.latency_network_us, network.jitter_us, _network_participants(job), network.congestion)
    per_call = (2 * (n - 1) - inter) * nvl + net
    return 2 * (n - 1) / n * job.gradient_bytes / bus_bytes_per_s(job, network) + job.buckets * per_call


def tree_s(job: Job, network: Network) -> float:
    """NCCL double binary tree: algorithm bandwidth half the bus bandwidth (NCCL's tuning model)
    at the tree pattern's path factor; per bucket 2((l-1) NVLink + log2(s) network) steps."""
    if job.data_parallel <= 1:
        return 0.0
    depth = math.ceil(math.log2(job.dp_servers)) if job.dp_servers > 1 else 0
    nvl = network.latency_nvlink_us * 1e-6
    net = chain_latency_s(2 * depth, network.latency_network_us, network.jitter_us, _network_participants(job), network.congestion)
    per_call = 2 * (job.dp_local - 1) * nvl + net
    return 2 * job.gradient_bytes / bus_bytes_per_s(job, network, tree=True) + job.buckets * per_call


def sharp_s(job: Job, network: Network) -> float:
    """In-network reduction (SHARP) between servers, NVLink inside: inf when not enabled or not
    useful (InfiniBand only; one server has nothing to reduce in the network)."""
    if not network.sharp or network.transport != "infiniband" or job.dp_servers <= 1:
        return math.inf
    local = job.dp_local
    nvl = network.latency_nvlink_us * 1e-6
    net = chain_latency_s(2, network.latency_network_us, network.jitter_us, _network_participants(job), network.congestion)
    nvlink = job.nvlink_gbytes_per_s * 1e9
    intra = 2 * (local - 1) / local * job.gradient_bytes / nvlink
    inter = job.gradient_bytes / local / network.gpu_bytes_per_s
    return intra + inter + job.buckets * (2 * (local - 1) * nvl + net)


def compute_s(job: Job) -> float:
    """6 * params * tokens / (GPUs * peak * MFU): forward + backward of a dense transformer."""
    return 6 * job.params * job.tokens_per_step / (job.gpus * job.peak_tflops * 1e12 * job.mfu)


def bubble_s(job: Job, compute: float) -> float:
    """Pipeline bubble of the 1F1B schedule: (p-1)/m of the compute (Narayanan et al., SC 2021)."""
    return compute * (job.pipeline_parallel - 1) / job.micro_batches


def activation_s(job: Job, network: Network) -> float:
    """Point-to-point traffic between pipeline stages: per micro-batch the activations go
    forward and their gradients back, each a network transfer at the NIC's achieved rate (the
    stages sit on different servers). Counted on the critical path of all m + p - 1 slots of
    the schedule, as blocking sends and receives put it (an upper bound when they overlap)."""
    if job.pipeline_parallel <= 1:
        return 0.0
    rate = network.line_gbps * network.efficiency * 1e9 / 8
    transfer = job.activation_bytes / rate + network.latency_network_us * 1e-6
    return 2 * (job.micro_batches + job.pipeline_parallel - 1) * transfer


MOE_ALL_TO_ALLS_PER_LAYER = 4
"""Per MoE layer and micro-batch: dispatch and combine in the forward pass, their gradients
in the backward pass (GShard, Lepikhin et al. 2020; Megatron-Core's all-to-all dispatcher)."""


def all_to_all_call_s(job: Job, network: Network) -> float:
    """One dispatch or combine all-to-all of one GPU: the bytes for peers in other servers at the
    NIC's achieved rate over the all-to-all pattern's path factor, those for peers in the same
    server over NVLink, both at once (NCCL posts every peer's send in one group), plus one step
    latency. Uniform routing: each of the EP ranks receives 1/EP of the routed tokens."""
    ep, local = job.expert_parallel, job.ep_local
    if not job.experts or ep <= 1:
        return 0.0
    per_peer = job.dispatch_bytes / (ep - 1)
    rate = network.line_gbps * network.efficiency / max(network.all_to_all_path_factor, 1.0) * 1e9 / 8
    remote = per_peer * (ep - local) / rate
    nvlink = per_peer * (local - 1) / (job.nvlink_gbytes_per_s * 1e9)
    latency = network.latency_network_us if job.ep_servers > 1 else network.latency_nvlink_us
    return max(remote, nvlink) + latency * 1e-6


def all_to_all_calls(job: Job) -> int:
    """All-to-alls one GPU runs per step: 4 per MoE layer of its stage and micro-batch."""
    if not job.experts or job.expert_parallel <= 1:
        return 0
    return MOE_ALL_TO_ALLS_PER_LAYER * job.moe_layers_per_stage * job.micro_batches


def estimate(job: Job, network: Network) -> Estimate:
    """All-reduce (ring, tree, SHARP), pipeline and compute time of one step of `job` on `network`."""
    total = compute_s(job)
    forward = total * FORWARD_SHARE
    return Estimate(
        gradient_bytes=job.gradient_bytes,
        busbw_bytes_per_s=bus_bytes_per_s(job, network),
        ring_s=ring_s(job, network),
        tree_s=tree_s(job, network),
        sharp_s=sharp_s(job, network),
        compute_s=total,
        forward_s=forward,
        backward_s=total - forward,
        dp_local=job.dp_local,
        dp_servers=job.dp_servers,
        gpu_gbps=network.gpu_gbps,
        micro_batches=job.micro_batches,
        mfu=job.mfu,
        bubble_s=bubble_s(job, total),
        activation_s=activation_s(job, network),
        all_to_all_s=all_to_all_calls(job) * all_to_all_call_s(job, network),
        all_to_all_calls=all_to_all_calls(job),
    )


def predicted_busbw_gbytes(
    servers: int, gpus_per_server: int, nics_per_server: int, nic_gbps: float, efficiency: float, nvlink_gbytes: float
) -> float:
    """nccl-tests `all_reduce_perf` bus bandwidth (GB/s) for a large message on `servers` x
    `gpus_per_server` GPUs, ring algorithm: min(NVLink per GPU, the server's NICs x efficiency).
    This is what the calibration table in docs/analyze.md compares against measurements.

    >>> predicted_busbw_gbytes(2, 8, 8, 400, 0.94, 450)
    376.0
    """
    if servers <= 1:
        return nvlink_gbytes
    return min(nvlink_gbytes, nics_per_server * nic_gbps * efficiency / 8)
