"""Benchmark: validate + plan + render and write for generated fabrics of growing size.

Run `make benchmark` (or `python benchmarks/bench.py [--jobs N] [--sizes ...]`). Each size runs
in a fresh Python process, so peak memory (ru_maxrss of the process and of any `-j` workers)
belongs to that size alone and no cache warmed by a smaller size helps a larger one. Sizes:

  2t-96     2 tiers, 32 spines x 64 leaves (96 switches, 2,048 x 400G GPU ports)
  3t-<P>    3 tiers, P pods x (32 leaves + 32 spines) under 32 planes of 32 super-spines,
            all 64 x 400G switches, 1:1 on every tier; 3t-64 = 5,120 switches, 65,536 GPU ports

Render and write are one stage, timed as `fabricgen render` runs it (`producers.write_rendered`):
each render unit compares and stages its own files in whichever process runs it.

The floor: in the same process, after the pipeline, the texts are rendered once more (untimed,
`render_files`), each file's lines split (untimed), and the same bytes produced by joining
them and written into a fresh folder with no logic at all; "x floor" is the pipeline's time
over that floor's (validate + plan + render and write against join + write), as wall-clock
and as CPU time (the fairer figure on a loaded machine). Peak memory is read before the floor
runs, so it is the pipeline's alone.

Peak memory, three ways: this process (ru_maxrss: it plans, and renders units like any
worker), the largest single process (this one or the largest `-j` worker), and the whole process tree together, sampled every 50 ms from /proc
while the pipeline runs (`TreeMemory`): summed PSS (shared pages split between the processes
sharing them: the memory the run holds) and summed RSS (shared pages counted in every process:
an upper bound).

After the full render the benchmark pins one leaf's ASN (a one-leaf change), renders again
into the same folder and reports the time and how many files were rewritten (render/write.py keeps
unchanged files as they are). Timings are wall-clock seconds on this machine; nothing here is
asserted by the test suite (no timed tests).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SIZES = ("2t-96", "3t-2", "3t-8", "3t-16", "3t-32", "3t-64")

COMMON = """
uplinks: {per_spine: 1, speed: 400G}
servers: {per_leaf: 4, ports_per_server: 8, speed: 400G}
roce: {no_drop_priority: 3, dscp: {data: 26, cnp: 48}}
oversubscription: {max_ratio: 1.0}
services: {ntp: [192.168.255.1], syslog: [192.168.255.10]}
"""


def inventory(size: str, pinned_leaf_asn: int = 0) -> str:
    """The fabric.yml of a benchmark size; `pinned_leaf_asn` pins leaf 1 (of pod 1)."""
    pin = f"\n  nodes: [{{index: 1, asn: {pinned_leaf_asn}}}]" if pinned_leaf_asn else ""
    model = "arista-7060dx5-64s"
    if size == "2t-96":
        return f"""fabric: {{name: bench2, transport: roce}}
spines: {{count: 32, model: {model}, name: "bench2-spine{{index:02d}}"}}
leaves:
  count: 64
  model: {model}
  name: "bench2-leaf{{index:02d}}"{pin}
addressing: {{loopbacks: 10.0.0.0/24, fabric: 10.1.0.0/16, servers: 10.2.0.0/16, management: 192.168.0.0/24}}
bgp: {{spine_asn: 65000, leaf_asn: 65101}}
{COMMON}"""
    pods = int(size.split("-")[1])
    return f"""fabric: {{name: bench3, transport: roce}}
pods: {{count: {pods}}}
spines: {{count: 32, model: {model}, name: "b3-p{{pod:02d}}-spine{{index:02d}}"}}
leaves:
  count: 32
  model: {model}
  name: "b3-p{{pod:02d}}-leaf{{index:02d}}"{pin}
superspines: {{count: 32, model: {model}, name: "b3-ss{{plane:02d}}-{{index:02d}}"}}
addressing: {{loopbacks: 10.0.0.0/19, fabric: 10.4.0.0/14, servers: 10.8.0.0/14, management: 172.16.0.0/19}}
bgp: {{superspine_asn: 4200000001, spine_asn: 4200000101, leaf_asn: 4200001001}}
{COMMON}"""


def _peak_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return max(own, workers) / 1024


class TreeMemory:
    """Peak memory of this process and its live descendants (the `-j` workers) together,
    sampled every `interval` seconds by a thread reading /proc (Linux).

    Two sums: RSS, which counts a page shared by a forked worker and its parent in both (an
    upper bound), and PSS (proportional set size, /proc/<pid>/smaps_rollup), which splits each
    shared page between the processes sharing it, so the sum is the memory the tree holds. A
    peak shorter than the interval can be missed; the per-process peak (ru_maxrss) is exact."""

    def __init__(self, interval: float = 0.05) -> None:
        self.interval = interval
        self.peak_rss_mb = 0.0
        self.peak_pss_mb = 0.0
        self._stop = threading.Event()

    @contextmanager
    def sampling(self) -> Iterator[TreeMemory]:
        thread = threading.Thread(target=self._run, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.sample()

    def sample(self) -> None:
        rss = pss = 0.0
        for pid in [os.getpid(), *_descendants(os.getpid())]:
            rss += _kb(f"/proc/{pid}/status", "VmRSS:")
            pss += _kb(f"/proc/{pid}/smaps_rollup", "Pss:")
        self.peak_rss_mb = max(self.peak_rss_mb, rss / 1024)
        self.peak_pss_mb = max(self.peak_pss_mb, pss / 1024)


def _descendants(root: int) -> list[int]:
    """Live processes below `root`, from each process's parent id in /proc/<pid>/stat."""
    parents: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as handle:
                    fields = handle.read().rpartition(")")[2].split()
            except OSError:
                continue
            parents[int(entry.name)] = int(fields[1])
    found, frontier = [], [root]
    while frontier:
        children = [pid for pid, parent in parents.items() if parent in frontier]
        found.extend(children)
        frontier = children
    return found


def _kb(path: str, key: str) -> float:
    """A `Key:   123 kB` line of a /proc file; 0 when the process has gone."""
    try:
        with open(path, encoding="ascii") as handle:
            for line in handle:
                if line.startswith(key):
                    return float(line.split()[1])
    except OSError:
        pass
    return 0.0


def _cpu_seconds() -> float:
    """CPU time of this process and its reaped `-j` workers: on a shared machine the fairer
    number next to wall-clock time."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def floor_seconds(files: dict[str, str], folder: Path) -> tuple[float, float]:
    """Wall and CPU seconds to join each file's lines and write the bytes, folders included: the
    least any generator of these files must spend. The split into lines is not counted."""
    spent = cpu = 0.0
    made: set[Path] = set()
    for rel, text in files.items():
        lines = text.split("\n")
        start, cpu_start = time.perf_counter(), time.process_time()
        path = folder / rel
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes("\n".join(lines).encode("utf-8"))
        spent += time.perf_counter() - start
        cpu += time.process_time() - cpu_start
    return spent, cpu


def run_one(size: str, jobs: int, work: Path) -> dict[str, object]:
    """One size, in this (fresh) process: every stage timed separately."""
    from fabricgen.checks.registry import check_document, check_plan
    from fabricgen.inventory.loader import load_inventory
    from fabricgen.plan.build import build_plan
    from fabricgen.plan.inputs import inputs_of
    from fabricgen.producers import render_files, write_rendered
    from fabricgen.render.context import RenderContext

    gc.disable()  # as `fabricgen` does for each command (cli.pause_garbage_collector)
    source = work / "fabric.yml"
    out = work / "out"
    source.write_text(inventory(size), encoding="utf-8")

    cpus: dict[str, float] = {}
    """CPU seconds of the render and write (workers included), of the last pipeline run."""

    def pipeline() -> tuple[dict[str, float], object, tuple[int, int]]:
        times: dict[str, float] = {}
        start = time.perf_counter()
        document = load_inventory(source)
        doc, _ = check_document(document)  # raises FabricError on any error
        times["validate"] = time.perf_counter() - start
        start = time.perf_counter()
        inputs = inputs_of(doc, document.source)
        plan = build_plan(inputs)
        findings = [d for d in check_plan(plan, inputs) if d.is_error]
        assert not findings, findings[:3]
        times["plan"] = time.perf_counter() - start
        start, cpu = time.perf_counter(), _cpu_seconds()
        summary = write_rendered(out, plan, RenderContext(jobs=jobs))
        times["render_write"] = time.perf_counter() - start
        cpus["render_write_cpu"] = _cpu_seconds() - cpu
        written = [*summary.added, *summary.changed]
        return times, plan, (len(written), sum(os.path.getsize(out / rel) for rel in written))

    cpu_start = _cpu_seconds()
    with TreeMemory().sampling() as tree:
        times, plan, _written = pipeline()
    first_cpus = dict(cpus)
    total = sum(times.values())
    cpu = _cpu_seconds() - cpu_start
    peak_mb = _peak_mb()
    parent_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rendered = render_files(plan, RenderContext(jobs=jobs))  # type: ignore[arg-type]
    files = len(rendered)
    output_mb = sum(len(text) for text in rendered.values()) / 1e6
    floor, floor_cpu = floor_seconds(rendered, work / "floor")
    del rendered
    devices = plan.devices  # type: ignore[attr-defined]
    gpu_ports = sum(len(s.nics) for s in plan.servers)  # type: ignore[attr-defined]
    links = len(plan.links)  # type: ignore[attr-defined]
    del plan
    source.write_text(inventory(size, pinned_leaf_asn=4000000000), encoding="utf-8")
    re_times, _plan, (rewritten, rewritten_bytes) = pipeline()
    return {
        "size": size,
        "switches": len(devices),
        "gpu_ports": gpu_ports,
        "links": links,
        "files": files,
        **{k: round(v, 3) for k, v in times.items()},
        "total": round(total, 3),
        "cpu": round(cpu, 3),
        **{k: round(v, 3) for k, v in first_cpus.items()},
        "ms_per_switch": round(total / len(devices) * 1000, 3),
        "peak_mb": round(peak_mb, 1),
        "parent_mb": round(parent_mb, 1),
        "peak_sum_rss_mb": round(tree.peak_rss_mb, 1),
        "peak_sum_pss_mb": round(tree.peak_pss_mb, 1),
        "output_mb": round(output_mb, 1),
        "floor": round(floor, 3),
        "x_floor": round(total / floor, 2),
        "floor_cpu": round(floor_cpu, 3),
        "x_floor_cpu": round(cpu / floor_cpu, 2),
        "rerender": round(sum(re_times.values()), 3),
        "rerender_write": round(re_times["render_write"], 3),
        "us_per_link": round(total / links * 1e6, 1),
        "rewritten": rewritten,
        "rewritten_mb": round(rewritten_bytes / 1e6, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="*", default=list(SIZES), choices=SIZES)
    parser.add_argument("--jobs", type=int, default=1, help="render -j N (default 1)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON lines too")
    args = parser.parse_args()
    if args.one:
        with tempfile.TemporaryDirectory(prefix="fabricgen-bench-") as tmp:
            print(json.dumps(run_one(args.one, args.jobs, Path(tmp))))
        return
    load = os.getloadavg()[0]
    print(
        f"# fabricgen benchmark: Python {platform.python_version()}, {os.cpu_count()} CPU(s), render -j {args.jobs}, load average {load:.1f}"
    )
    header = (
        "size",
        "switches",
        "GPU ports",
        "validate s",
        "plan s",
        "render+write s",
        "total s",
        "CPU s",
        "render+write CPU s",
        "ms/switch",
        "µs/link",
        "peak MB (this process / largest)",
        "peak MB summed (PSS / RSS)",
        "output MB",
        "floor s",
        "x floor",
        "floor CPU s",
        "x floor (CPU)",
        "re-render s (render+write s)",
        "rewritten",
    )
    rows = []
    for size in args.sizes:
        result = subprocess.run(
            [sys.executable, __file__, "--one", size, "--jobs", str(args.jobs)], check=True, capture_output=True, text=True
        )
        row = json.loads(result.stdout.strip().splitlines()[-1])
        rows.append(row)
        if args.json:
            print(json.dumps(row), file=sys.stderr)
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = (
            r["size"], f"{r['switches']:,}", f"{r['gpu_ports']:,}", r["validate"], r["plan"], r["render_write"],
            r["total"], r["cpu"], r["render_write_cpu"], r["ms_per_switch"], r["us_per_link"], f"{r['parent_mb']} / {r['peak_mb']}", f"{r['peak_sum_pss_mb']} / {r['peak_sum_rss_mb']}", r["output_mb"], r["floor"], r["x_floor"], r["floor_cpu"], r["x_floor_cpu"], f"{r['rerender']} ({r['rerender_write']})", f"{r['rewritten']} of {r['files']} ({r['rewritten_mb']} MB)",
        )  # fmt: skip
        print("| " + " | ".join(str(c) for c in cells) + " |")
    per = [float(r["ms_per_switch"]) for r in rows]
    if per:
        print(
            f"\nper-switch cost, largest fabric / smallest: {per[-1] / per[0]:.2f}x; highest / lowest of all sizes: {max(per) / min(per):.2f}x"
        )


if __name__ == "__main__":
    main()
