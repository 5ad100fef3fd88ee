"""A lab too big for the machine is refused up front (exit 2) with the reason and the size the
machine boots; iproute2 batches never run out of file descriptors (the raw `ip -batch …
Invalid "netns" value` the three-tier example died on). The kernel test creates namespaces:
run it under `flock /tmp/fabricgen-netns.lock` (as root)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import yaml

from fabricgen.lab import kernel
from fabricgen.lab.capacity import Machine, refusal, sessions
from fabricgen.lab.daemons import frr_installed, lldpd_installed
from fabricgen.lab.topology import lab_topology
from fabricgen.pipeline import load_and_plan
from tests.conftest import EXAMPLES, ROOT


def _topology(example: str):  # type: ignore[no-untyped-def]
    return lab_topology(load_and_plan(EXAMPLES / example).plan)


def test_three_tier_example_is_refused_on_two_cores_with_the_size_that_fits() -> None:
    topology = _topology("cluster-3tier")
    # From the inventory: 8 pods x 16 leaves x 8 spines x 4 links, and 64 spines x 8
    # super-spines of their plane x 4 links: 4,096 + 2,048 switch-to-switch cables.
    assert sessions(topology) == 8 * 16 * 8 * 4 + 64 * 8 * 4
    # The limit is the last row of the lab timers' data (platforms/frr/platform.yml).
    rows = yaml.safe_load((ROOT / "fabricgen" / "platforms" / "frr" / "platform.yml").read_text())["lab_timers"]
    carried = 2 * max(row["sessions_per_core"] for row in rows)
    message = refusal(topology, Machine(cores=2, available_mib=22_000))
    assert message is not None
    assert "256 switches are more than this machine boots" in message
    assert f"6,144 BGP+BFD sessions, 2 cores carry about {carried:,}" in message
    assert f"it boots about {256 * carried // 6144} switches of this fabric's shape" in message
    assert "fabricgen lab export" in message


def test_memory_is_the_limit_when_cores_are_many() -> None:
    topology = _topology("pod-rail")
    assert refusal(topology, Machine(cores=64, available_mib=100_000)) is None
    message = refusal(topology, Machine(cores=64, available_mib=1_000))
    assert message is not None and "GiB of daemons" in message and "BGP+BFD" not in message


@pytest.mark.parametrize("example", ["pod-roce-400g", "pod-rail", "pod-mixed"])
def test_the_examples_ci_boots_fit_two_cores(example: str) -> None:
    assert refusal(_topology(example), Machine(cores=2, available_mib=20_000)) is None


@pytest.mark.skipif(os.geteuid() != 0 or not (frr_installed() and lldpd_installed()), reason="needs root, frr and lldpd")
def test_lab_verify_refuses_the_three_tier_example_before_creating_anything() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "fabricgen", "lab", "verify", str(EXAMPLES / "cluster-3tier")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "switches are more than this machine boots" in done.stderr
    assert "Traceback" not in done.stderr and "Invalid" not in done.stderr
    assert kernel.existing_namespaces("fg-cl1-") == []


def test_batches_stay_within_the_descriptor_budget() -> None:
    veth = "link add name a netns fg-x-1 type veth peer name b netns fg-x-2"
    chunks = kernel.batches([veth] * 1000, 300)
    assert [len(c) for c in chunks] == [150] * 6 + [100]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (network namespaces)")
def test_many_veths_in_one_batch_under_a_low_descriptor_limit() -> None:
    """iproute2 keeps each `netns NAME` open until the batch process exits: 400 veths between two
    namespaces need 800 descriptors, more than the 256 allowed here."""
    prefix = f"fg-fd{uuid.uuid4().hex[:6]}-"
    a, z = f"{prefix}a", f"{prefix}z"
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        kernel.ip_batch([f"netns add {a}", f"netns add {z}"])
        resource.setrlimit(resource.RLIMIT_NOFILE, (256, hard))
        kernel.ip_batch(f"link add name v{i} netns {a} type veth peer name w{i} netns {z}" for i in range(400))
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        links = [link["ifname"] for link in kernel.links(a)]
        assert sum(1 for name in links if name.startswith("v")) == 400
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
        kernel.ip_batch((f"netns del {ns}" for ns in (a, z) if Path(kernel.NETNS_DIR, ns).exists()), force=True)
    assert kernel.existing_namespaces(prefix) == []
