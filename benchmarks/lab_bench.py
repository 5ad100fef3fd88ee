"""Benchmark: `lab verify` boot and check time and memory at about 12, 96 and 300 switches.

Run as root: `sudo python benchmarks/lab_bench.py [--sizes 12 96 288] [--drill]`. Each size is
an inventory generated here (12 = the bundled pod-roce-400g example), booted once on FRR +
lldpd in network namespaces, checked (checks 1-6; `--drill` adds the fault drill) and torn
down. Memory: the proportional set size (Pss) of every process in the lab's namespaces, and
how much MemAvailable fell while the lab ran (processes plus the kernel's namespaces, veths,
routes). Wall-clock seconds on this machine; nothing is asserted (no timed tests).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fabricgen.lab import kernel  # noqa: E402
from fabricgen.lab.capacity import this_machine  # noqa: E402
from fabricgen.lab.kernel import LabError  # noqa: E402  (after the path set-up above)
from fabricgen.lab.lab import Lab  # noqa: E402
from fabricgen.lab.run import CHECKS, new_report, run_checks  # noqa: E402
from fabricgen.lab.timers import describe, scaled  # noqa: E402
from fabricgen.lab.topology import lab_topology  # noqa: E402
from fabricgen.pipeline import load_and_plan  # noqa: E402

COMMON = """
roce: {no_drop_priority: 3, dscp: {data: 26, cnp: 48}}
oversubscription: {max_ratio: 64}
addressing: {loopbacks: 10.0.0.0/21, fabric: 10.64.0.0/11, servers: 10.128.0.0/12}
"""
INVENTORIES = {
    "96": """fabric: {name: lb96, transport: roce}
spines: {count: 32, model: arista-7060dx5-64s}
leaves: {count: 64, model: arista-7060dx5-64s}
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 4, ports_per_server: 8, speed: 400G}
bgp: {spine_asn: 65000, leaf_asn: 65101, bfd: true}
""",
    "288": """fabric: {name: lb288, transport: roce}
pods: {count: 4}
leaves: {count: 32, model: arista-7060dx5-64s, name: "lb-p{pod}-leaf{index:02d}"}
spines: {count: 32, model: arista-7060dx5-64s, name: "lb-p{pod}-spine{index:02d}"}
superspines: {count: 1, model: arista-7060dx5-64s, name: "lb-ss{plane}-{index:02d}", per_spine: 2, speed: 400G}
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 2, ports_per_server: 8, speed: 400G}
bgp: {superspine_asn: 4200000001, spine_asn: 4200000101, leaf_asn: 4200001001, bfd: true}
""",
}


def _inventory(size: str, folder: Path) -> Path:
    if size == "12":
        return ROOT / "inventories" / "pod-roce-400g"
    path = folder / f"lab-{size}.yml"
    path.write_text(INVENTORIES[size] + COMMON)
    return path


def _available_kib() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1])
    return 0


def _load_average() -> str:
    """1, 5 and 15-minute load averages: the machine is shared, so every figure comes with it."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _pss_kib(prefix: str) -> int:
    total = 0
    for namespace in kernel.existing_namespaces(prefix):
        for pid in kernel.namespace_pids(namespace):
            try:
                rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except OSError:
                continue
            total += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
    return total


def measure(size: str, drill: bool, folder: Path) -> dict[str, object]:
    cores = this_machine().cores
    topology = scaled(lab_topology(load_and_plan(_inventory(size, folder)).plan), cores)
    names = [c for c in CHECKS if drill or c != "fault-drill"]
    before, load_at_start = _available_kib(), _load_average()
    start = time.monotonic()
    report = new_report(topology)
    with Lab(topology) as lab:
        report.boot_seconds = time.monotonic() - start
        load_after_boot = _load_average()
        print(f"{size}: booted in {report.boot_seconds:.1f} s, load {load_after_boot}", file=sys.stderr, flush=True)
        checks_start = time.monotonic()
        for name in names:  # one at a time, so a run stopped from outside still says how far it got
            run_checks(lab, topology, [name], report)
            done = report.checks[-1]
            print(f"{size}: {name} {'pass' if done.passed else 'FAIL'} in {done.seconds:.1f} s", file=sys.stderr, flush=True)
            for failure in done.failures[:5]:
                print(f"    {failure.device}: {failure.message}", file=sys.stderr, flush=True)
        checks_seconds = time.monotonic() - checks_start
        pss, used = _pss_kib(topology.prefix), before - _available_kib()
        figures = {
            "size": size,
            "switches": len(topology.switches),
            "servers": len(topology.servers),
            "cables": len(topology.cables),
            "boot_s": round(report.boot_seconds, 1),
            "checks_s": round(checks_seconds, 1),
            "total_s": round(time.monotonic() - start, 1),
            "daemons_pss_mib": round(pss / 1024),
            "pss_per_switch_mib": round(pss / 1024 / len(topology.switches), 1),
            "mem_used_mib": round(used / 1024),
            "timers": describe(topology, cores),
            "load_average_at_start": load_at_start,
            "load_average_after_boot": load_after_boot,
            "load_average_at_end": _load_average(),
            "passed": report.passed,
            "failed": report.failed_checks(),
            "seconds_per_check": {c.name: round(c.seconds, 1) for c in report.checks},
        }
        print(json.dumps(figures), flush=True)  # before the teardown, which takes minutes at 96 switches
        down_start = time.monotonic()
    return {"size": size, "teardown_s": round(time.monotonic() - down_start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["12", "96", "288"], choices=["12", *INVENTORIES])
    parser.add_argument("--drill", action="store_true", help="include check 7, the fault drill")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            try:
                print(json.dumps(measure(size, args.drill, Path(folder))), flush=True)
            except LabError as exc:  # a lab that does not boot is a measurement too
                print(json.dumps({"size": size, "boot_failed": str(exc), "load_average": _load_average()}), flush=True)


if __name__ == "__main__":
    main()
