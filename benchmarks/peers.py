"""The peer side by side: fabricgen and Arista's pyavd on the same 32 x 64 L3 leaf-spine fabric.

Installs nothing. When `pyavd` is importable, this builds the fabric of `bench.py`'s `2t-96`
size (32 spines, 64 leaves, one 400G uplink from every leaf to every spine, 4 servers x 8 routed
400G ports per leaf, eBGP underlay with an ASN per leaf) with the same RoCE QoS (DSCP 26 -> no-drop
priority 3 with PFC and its watchdog, ECN 150-3000 KB, CNP DSCP 48 strict priority) through
pyavd's public API (`validate_inputs`, `get_avd_facts`, `get_device_structured_config`,
`get_device_config`), renders every config, and prints both tools' wall and CPU seconds and peak
memory. Each tool runs in a fresh process of its own, so neither inherits the other's memory
or imports. To get pyavd into a scratch virtual environment next to this project:

    python -m venv /tmp/pyavd && /tmp/pyavd/bin/pip install pyavd==6.4.0 -e .
    /tmp/pyavd/bin/python benchmarks/peers.py

fabricgen runs with the interpreter given by --fabricgen-python (default: this one).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SPINES, LEAVES, SERVER_PORTS = 32, 64, 32
QOS_PROFILE = "ROCE"


def _spine_name(index: int) -> str:
    return f"bench2-spine{index:02d}"


def _leaf_name(index: int) -> str:
    return f"bench2-leaf{index:02d}"


def roce_qos() -> dict[str, Any]:
    """The RoCE QoS of fabricgen's defaults, in AVD's EOS structured-config keys."""
    return {
        "qos": {"map": {"dscp": ["26 to traffic-class 3", "48 to traffic-class 6"]}},
        "qos_profiles": [
            {
                "name": QOS_PROFILE,
                "trust": "dscp",
                "tx_queues": [
                    {
                        "id": 3,
                        "bandwidth_percent": 50,
                        "random_detect": {"ecn": {"threshold": {"units": "kbytes", "min": 150, "max": 3000, "max_probability": 100}}},
                    },
                    {"id": 6, "priority": "priority strict"},
                ],
                "priority_flow_control": {
                    "enabled": True,
                    "priorities": [{"priority": 3, "no_drop": True}],
                    "watchdog": {
                        "enabled": True,
                        "action": "drop",
                        "timer": {"timeout": 0.2, "polling_interval": 0.1, "recovery_time": 0.4},
                    },
                },
            }
        ],
    }


def avd_inputs() -> dict[str, Any]:
    """One design for every device (AVD merges group and host variables into this per host)."""
    uplinks = [f"Ethernet{33 + spine}/1" for spine in range(SPINES)]
    leaves = []
    for leaf in range(1, LEAVES + 1):
        l3 = [
            {
                "name": f"Ethernet{port}/1",
                "ip_address": f"10.2.{(leaf - 1) * SERVER_PORTS * 2 // 256}.{((leaf - 1) * SERVER_PORTS * 2 + (port - 1) * 2) % 256}/31",
                "peer": f"{_leaf_name(leaf)}-srv{(port - 1) // 8 + 1:02d}",
                "peer_interface": f"nic{(port - 1) % 8 + 1}",
                "qos_profile": QOS_PROFILE,
                "structured_config": {"mtu": 9214},
            }
            for port in range(1, SERVER_PORTS + 1)
        ]
        leaves.append(
            {
                "name": _leaf_name(leaf),
                "id": leaf,
                "mgmt_ip": f"192.168.0.{SPINES + leaf}/24",
                "uplink_switch_interfaces": [f"Ethernet{leaf}/1"] * SPINES,
                "l3_interfaces": l3,
            }
        )
    return {
        "fabric_name": "bench2",
        "underlay_routing_protocol": "ebgp",
        "overlay_routing_protocol": "none",
        "p2p_uplinks_mtu": 9214,
        "p2p_uplinks_qos_profile": QOS_PROFILE,
        "spine": {
            "defaults": {"platform": "7060DX5", "loopback_ipv4_pool": "10.0.0.0/25", "bgp_as": "65000", "structured_config": roce_qos()},
            "nodes": [{"name": _spine_name(s), "id": s, "mgmt_ip": f"192.168.0.{s}/24"} for s in range(1, SPINES + 1)],
        },
        "l3leaf": {
            "defaults": {
                "platform": "7060DX5",
                "loopback_ipv4_pool": "10.0.0.128/25",
                "vtep": False,
                "uplink_ipv4_pool": "10.1.0.0/16",
                "uplink_switches": [_spine_name(s) for s in range(1, SPINES + 1)],
                "uplink_interfaces": uplinks,
                "max_uplink_switches": SPINES,
                "bgp_as": f"65101-{65100 + LEAVES}",
                "structured_config": roce_qos(),
            },
            "nodes": leaves,
        },
    }


def run_pyavd(out: Path) -> dict[str, float]:
    """Validate, build facts, structured configs and configs for every device; write them."""
    import pyavd

    start = time.perf_counter()
    design = avd_inputs()
    hosts = {**{_spine_name(s): "spine" for s in range(1, SPINES + 1)}, **{_leaf_name(n): "l3leaf" for n in range(1, LEAVES + 1)}}
    all_inputs = {}
    for host, node_type in hosts.items():
        result = pyavd.validate_inputs({**design, "type": node_type})
        violations = result.validation_result.violations
        if violations or result.validated_data is None:
            raise SystemExit(f"pyavd refused the inputs of {host}: {[(v.message, v.path) for v in violations[:3]]}")
        all_inputs[host] = result.validated_data
    facts = pyavd.get_avd_facts(all_inputs)
    out.mkdir(parents=True, exist_ok=True)
    for host in hosts:
        structured = pyavd.get_device_structured_config(host, all_inputs[host], facts)
        (out / f"{host}.cfg").write_text(pyavd.get_device_config(structured), encoding="utf-8")
    return {"files": float(len(hosts))} | _usage(start)


def run_fabricgen(out: Path) -> dict[str, float]:
    """`bench.py`'s 2t-96 fabric: validate, plan, check, render every file, write."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench

    from fabricgen.checks.registry import check_document, check_plan
    from fabricgen.inventory.loader import load_inventory
    from fabricgen.plan.build import build_plan
    from fabricgen.plan.inputs import inputs_of
    from fabricgen.producers import write_rendered
    from fabricgen.render.context import RenderContext

    start = time.perf_counter()
    source = out.parent / "fabric.yml"
    source.write_text(bench.inventory("2t-96"), encoding="utf-8")
    document = load_inventory(source)
    doc, _ = check_document(document)
    inputs = inputs_of(doc, document.source)
    plan = build_plan(inputs)
    assert not [d for d in check_plan(plan, inputs) if d.is_error]
    summary = write_rendered(out, plan, RenderContext())  # as `fabricgen render` writes
    return {"files": float(len(summary.added) + len(summary.changed) + len(summary.unchanged))} | _usage(start)


def _usage(start: float) -> dict[str, float]:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall": time.perf_counter() - start, "cpu": own.ru_utime + own.ru_stime, "peak_mb": own.ru_maxrss / 1024}


def _child(tool: str, python: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix=f"peers-{tool}-") as tmp:
        done = subprocess.run(
            [python, __file__, "--one", tool, "--out", str(Path(tmp) / "out")], check=True, capture_output=True, text=True
        )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fabricgen-python", default=sys.executable)
    parser.add_argument("--one", choices=("fabricgen", "pyavd"), help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps((run_pyavd if args.one == "pyavd" else run_fabricgen)(args.out)))
        return
    try:
        import pyavd
    except ImportError:
        raise SystemExit("pyavd is not importable: see this file's docstring for the one-line install") from None
    rows = {"fabricgen": _child("fabricgen", args.fabricgen_python), f"pyavd {pyavd.__version__}": _child("pyavd", sys.executable)}
    print(
        f"# {SPINES} spines x {LEAVES} leaves, RoCE QoS; Python {platform.python_version()}, {os.cpu_count()} CPU(s), load {os.getloadavg()[0]:.1f}"
    )
    print("| tool | files | wall s | CPU s | peak MB |\n|---|---|---|---|---|")
    for name, row in rows.items():
        print(f"| {name} | {int(row['files'])} | {row['wall']:.2f} | {row['cpu']:.2f} | {row['peak_mb']:.0f} |")
    first, second = rows.values()
    print(
        f"\npyavd / fabricgen: wall {second['wall'] / first['wall']:.1f}x, CPU {second['cpu'] / first['cpu']:.1f}x, peak memory {second['peak_mb'] / first['peak_mb']:.1f}x"
    )


if __name__ == "__main__":
    main()
