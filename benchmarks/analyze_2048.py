"""Benchmark: `fabricgen analyze` on the 2-tier 2,048-GPU fabric (32 spines x 64 leaves of 64-port
switches, 256 servers x 8 x 400G), planned through the normal pipeline.

    .venv/bin/python benchmarks/analyze_2048.py [--trials 256]

Prints the wall time of each stage; the issue's target is seconds for the whole simulation.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import yaml

from fabricgen.analyze import ecmp
from fabricgen.analyze.job import job_settings, resolve
from fabricgen.analyze.planview import fabric_of
from fabricgen.analyze.report import Options, analyse_job
from fabricgen.pipeline import load_and_plan

INVENTORY = {
    "fabric": {"name": "bench2048", "transport": "roce"},
    "spines": {"count": 32, "model": "arista-7060dx5-64s"},
    "leaves": {"count": 64, "model": "arista-7060dx5-64s"},
    "uplinks": {"per_spine": 1, "speed": "400G"},
    "servers": {"per_leaf": 4, "ports_per_server": 8, "speed": "400G"},
    "addressing": {"loopbacks": "10.0.0.0/22", "fabric": "10.1.0.0/18", "servers": "10.2.0.0/16"},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fabric.yml"
        path.write_text(yaml.safe_dump(INVENTORY), encoding="utf-8")
        start = time.perf_counter()
        plan = load_and_plan(path).plan
        planned = time.perf_counter()
    fabric = fabric_of(plan)
    (name, values, cli), *_ = job_settings({}, {}, None)
    resolved = resolve(name, values, cli, fabric, None)
    analyse_job(fabric, resolved, Options(simulate=False))
    modelled = time.perf_counter()
    split = resolved.flows_per_nic
    results = ecmp.simulate(fabric, resolved.placement.servers, 8, 400.0, trials=args.trials, split=split)
    simulated = time.perf_counter()
    print(f"plan: {planned - start:.2f} s ({len(plan.devices)} switches, {int(fabric.server_nics.sum())} GPU ports)")
    print(f"arrays + cost model + deterministic paths: {modelled - planned:.3f} s")
    print(f"simulation ({args.trials} trials, {split} flows per NIC, {len(results)} pattern x routing runs): {simulated - modelled:.2f} s")
    for r in results:
        print(f"  {r.pattern:12} {r.routing:6} flows {r.flows:8d}  max load {r.max_util_mean:.3g}  path factor x{r.path_factor_mean:.3g}")


if __name__ == "__main__":
    main()
