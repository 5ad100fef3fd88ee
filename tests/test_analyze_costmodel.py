"""The analytical model against hand calculations, and its monotonicity properties."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabricgen.analyze import compare as cmp
from fabricgen.analyze.costmodel import Job, Network, estimate, hierarchical_allreduce_s, ring_allreduce_s
from fabricgen.analyze.counts import parse_count
from fabricgen.analyze.job import job_settings, resolve
from fabricgen.analyze.topology import fabric_of
from tests.test_analyze_plans import inventory, plan_of

# 7B params in bf16 on 2 servers x 8 GPUs, one 400G NIC per GPU, 450 GB/s NVLink, 4M tokens.
JOB = Job("hand", 7e9, 2, 16, 8, 450.0, 16, 1, 1, 4e6, 989.0, 0.4)
PERFECT = Network("infiniband", line_gbps=400.0, share=1.0, efficiency=1.0, latency_network_us=0.0, latency_nvlink_us=0.0)


def test_two_servers_of_eight_gpus_at_400g_by_hand() -> None:
    est = estimate(JOB, PERFECT)
    size = 7e9 * 2  # 14 GB of bf16 gradients per GPU
    net, nvlink = 400e9 / 8, 450e9  # bytes/s
    assert est.gradient_bytes == size
    # Flat ring over 16 ranks at the NIC's pace: 2 * 15/16 * 14e9 / 50e9 = 0.525 s.
    assert est.ring_s == pytest.approx(0.525)
    assert est.ring_s == pytest.approx(2 * 15 / 16 * size / net)
    # Hierarchical: reduce-scatter over NVLink (7/8 * 14e9 / 450e9), ring of 14e9/8 between 2 servers
    # (2 * 1/2 * 1.75e9 / 50e9 = 0.035 s), all-gather back: 0.0272222 * 2 + 0.035 = 0.0894444 s.
    assert est.hierarchical_s == pytest.approx(2 * 7 / 8 * size / nvlink + 1.75e9 / net)
    assert est.hierarchical_s == pytest.approx(0.0894444, rel=1e-6)
    assert est.algorithm == "hierarchical"
    # Compute: 6 * 7e9 * 4e6 / (16 * 989e12 * 0.4) = 26.5420 s, one third forward.
    assert est.compute_s == pytest.approx(6 * 7e9 * 4e6 / (16 * 989e12 * 0.4))
    assert est.compute_s == pytest.approx(26.54196, rel=1e-6)
    assert est.forward_s == pytest.approx(est.compute_s / 3)
    assert est.ratio == pytest.approx(0.0894444 / 26.54196, rel=1e-5)
    assert est.exposed_overlap_s == 0.0
    assert est.verdict == "compute-bound"


def test_latency_terms_by_hand() -> None:
    slow = replace(PERFECT, latency_network_us=9.6, latency_nvlink_us=3.4)
    est = estimate(JOB, slow)
    # Ring: 2(n-1) = 30 network steps of 9.6 us. Hierarchical: 2 * 7 NVLink steps + 2 * 1 network steps.
    assert est.ring_s == pytest.approx(0.525 + 30 * 9.6e-6)
    assert est.hierarchical_s == pytest.approx(0.0894444 + 14 * 3.4e-6 + 2 * 9.6e-6, rel=1e-6)


def test_primitives_by_hand() -> None:
    assert ring_allreduce_s(1e9, 1, 1e9, 1.0) == 0.0
    assert ring_allreduce_s(1e9, 4, 1e9, 0.0) == pytest.approx(1.5)
    assert ring_allreduce_s(1e9, 4, 1e9, 1e-3) == pytest.approx(1.5 + 6e-3)
    assert hierarchical_allreduce_s(8e9, 8, 1, 1e9, 1e9, 0.0, 0.0) == pytest.approx(2 * 7 / 8 * 8)


def test_network_bound_verdict() -> None:
    # 400x fewer tokens per step: the 0.089 s all-reduce is longer than forward + backward.
    fast = replace(JOB, tokens_per_step=4e6 / 400)
    est = estimate(fast, PERFECT)
    assert est.compute_s == pytest.approx(0.0663549, rel=1e-5)
    assert est.network_bound and est.verdict == "network-bound"
    assert est.exposed_overlap_s == pytest.approx(est.allreduce_s - est.backward_s)


def test_tensor_parallel_shrinks_the_all_reduce() -> None:
    tp8 = replace(JOB, data_parallel=2, tensor_parallel=8)
    est = estimate(tp8, PERFECT)
    assert est.gradient_bytes == 7e9 * 2 / 8
    assert (est.dp_local, est.dp_servers) == (1, 2)
    assert est.ring_s == pytest.approx(est.hierarchical_s)
    assert est.ring_s == pytest.approx(2 * 1 / 2 * 1.75e9 / 50e9)


def test_counts() -> None:
    assert parse_count("70B") == 70e9
    assert parse_count("4M") == 4e6
    assert parse_count("1.5T") == 1.5e12
    assert parse_count("1000") == 1000.0
    with pytest.raises(ValueError):
        parse_count("70 billion")


def test_plan_gives_the_hand_case(tmp_path: Path) -> None:
    """The same 2 x 8 x 400G case, with the network read from a plan built by the pipeline."""
    fabric = fabric_of(plan_of(tmp_path, inventory(spines=2, leaves=1, per_spine=8, per_leaf=2)))
    ((name, values, cli),) = job_settings(
        {"jobs": {"hand": {"params": "7B", "efficiency": {"roce": 1.0}, "latency_us": {"network": 0, "nvlink": 0}}}}, {}, None
    )
    resolved = resolve(name, values, cli, fabric, None)
    assert resolved.job == JOB
    assert (resolved.network.line_gbps, resolved.network.share, resolved.network.efficiency) == (400.0, 1.0, 1.0)
    assert estimate(resolved.job, resolved.network).hierarchical_s == pytest.approx(0.0894444, rel=1e-6)


jobs = st.builds(
    Job,
    name=st.just("h"),
    params=st.floats(1e8, 1e12),
    bytes_per_gradient=st.sampled_from([1, 2, 4]),
    gpus=st.just(0),
    gpus_per_server=st.sampled_from([1, 2, 4, 8]),
    nvlink_gbytes_per_s=st.floats(10, 2000),
    data_parallel=st.integers(1, 4096),
    tensor_parallel=st.sampled_from([1, 2, 4, 8]),
    pipeline_parallel=st.sampled_from([1, 2, 4]),
    tokens_per_step=st.floats(1e4, 1e8),
    peak_tflops=st.floats(10, 5000),
    mfu=st.floats(0.05, 0.9),
).map(lambda j: replace(j, gpus=j.data_parallel * j.tensor_parallel * j.pipeline_parallel))
networks = st.builds(
    Network,
    transport=st.sampled_from(["roce", "infiniband"]),
    line_gbps=st.floats(10, 1600),
    share=st.floats(0.05, 1.0),
    efficiency=st.floats(0.3, 1.0),
    latency_network_us=st.floats(0, 50),
    latency_nvlink_us=st.floats(0, 20),
)


# No deadline or speed health check: under pytest's assertion-pass hook (enabled for pytest-golden)
# every Hypothesis example costs ~100 ms on a loaded machine, which is not what these tests measure.
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(jobs, networks, st.floats(1.0, 16.0))
def test_more_bandwidth_is_never_slower(job: Job, network: Network, factor: float) -> None:
    slow, fast = estimate(job, network), estimate(job, replace(network, line_gbps=network.line_gbps * factor))
    never_slower = (
        fast.allreduce_s <= slow.allreduce_s * (1 + 1e-12)
        and fast.step_overlap_s <= slow.step_overlap_s * (1 + 1e-12)
        and fast.busy_overlap >= slow.busy_overlap * (1 - 1e-12)
    )
    assert never_slower, (slow, fast)


@PROPERTY
@given(jobs, networks, st.floats(1.0, 16.0))
def test_more_oversubscription_is_never_faster(job: Job, network: Network, ratio: float) -> None:
    # The leaf's uplink share is 1/ratio of the NIC rate once a job leaves the leaf.
    base, over = estimate(job, network), estimate(job, replace(network, share=network.share / ratio))
    never_faster = over.allreduce_s >= base.allreduce_s * (1 - 1e-12) and over.step_no_overlap_s >= base.step_no_overlap_s * (1 - 1e-12)
    assert never_faster, (base, over)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 4))
def test_oversubscribed_plans_are_never_faster(tmp_path_factory: pytest.TempPathFactory, per_spine: int) -> None:
    """Through the pipeline: fewer uplinks (more oversubscription) never shortens the all-reduce."""
    times = []
    for links in (per_spine, per_spine * 2):
        doc = inventory(name=f"o{links}", spines=2, leaves=2, per_spine=links, per_leaf=2, max_ratio=8.0)
        fabric = fabric_of(plan_of(tmp_path_factory.mktemp("plans"), doc))
        ((name, values, cli),) = job_settings({}, {}, None)
        resolved = resolve(name, values, cli, fabric, None)
        times.append(estimate(resolved.job, resolved.network).allreduce_s)
    assert times[0] >= times[1]


def test_crossover_grows_with_speed() -> None:
    sc = cmp.Scenario(JOB, 8, 4, 1.0, {"infiniband": 0.92, "roce": 0.83}, 9.6, 3.4, {})
    found = [cmp.first_gpus(sc, "roce", speed, "network-bound") for speed in cmp.SPEEDS]
    assert all(f is not None for f in found)
    assert found == sorted(found)  # type: ignore[type-var]
    # At the crossover the job is network-bound, one step below it is not.
    first = found[0]
    assert first is not None
    assert sc.estimate_at("roce", 100, first).network_bound
    assert not sc.estimate_at("roce", 100, first - sc.step()).network_bound


def test_faster_nics_in_the_plan_are_never_slower(tmp_path: Path) -> None:
    """Through the pipeline: the same fabric with 100G, 200G and 400G NIC ports (400G uplinks)."""
    times = []
    for speed in ("100G", "200G", "400G"):
        doc = inventory(name=f"n{speed.lower()}", spines=2, leaves=2, per_spine=8, per_leaf=2, speed=speed)
        fabric = fabric_of(plan_of(tmp_path, doc))
        ((name, values, cli),) = job_settings({}, {}, None)
        resolved = resolve(name, values, cli, fabric, None)
        assert resolved.network.line_gbps == float(speed[:-1])
        times.append(estimate(resolved.job, resolved.network).allreduce_s)
    assert times == sorted(times, reverse=True)
    assert times[0] > times[1] > times[2]
