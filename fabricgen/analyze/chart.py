"""A small SVG figure for the Markdown section: the all-reduce on InfiniBand and RoCEv2 (adaptive
routing, static ECMP) against the backward pass and the whole step, and the simulated path
factor of each traffic pattern.

Rendered with matplotlib's SVG backend, with a fixed hash salt and no date, so the same result
gives byte-identical SVG (the project's no-timestamp, reproducible-output rule).
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("svg")

import matplotlib.pyplot as plt  # the backend is chosen first

SERIES = (("infiniband", "InfiniBand", "#4c72b0"), ("roce_adaptive", "RoCEv2 adaptive", "#55a868"), ("roce_ecmp", "RoCEv2 ECMP", "#dd8452"))


def render_svg(job: dict[str, Any]) -> str:
    """The figure for one analysed job (see report.analyse_job) as SVG text."""
    with plt.rc_context({"svg.hashsalt": "fabricgen", "svg.fonttype": "none", "font.size": 8}):
        panels = 2 if "simulation" in job else 1
        fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.0), squeeze=False)
        _time_panel(axes[0][0], job)
        if panels == 2:
            _simulation_panel(axes[0][1], job)
        fig.tight_layout()
        buffer = io.StringIO()
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)
    text = buffer.getvalue()
    return "\n".join(line.rstrip() for line in text.splitlines()) + "\n"


def _time_panel(ax: Any, job: dict[str, Any]) -> None:
    rows = job.get("compare") or [{"speed_gbps": job["planned"]["nic_gbps"], **{k: job[k] for k, _, _ in SERIES}}]
    width = 0.27
    for n, (key, label, color) in enumerate(SERIES):
        values = [r[key]["allreduce_s"] if r[key] else 0.0 for r in rows]
        ax.bar([i + (n - 1) * width for i in range(len(rows))], values, width, label=label, color=color)
    ax.set_xticks(range(len(rows)), [f"{r['speed_gbps']:g}G" for r in rows])
    ax.set_xlabel("NIC speed")
    ax.axhline(job["planned"]["overlap_window_s"], color="#8172b3", linestyle="--", linewidth=1, label="overlap window")
    ax.axhline(job["planned"]["compute_s"], color="#c44e52", linestyle=":", linewidth=1, label="forward + backward")
    ax.set_ylabel("seconds per step")
    ax.set_title(f"{job['name']}: all-reduce vs compute ({job['inputs']['gpus']} GPUs)")
    ax.legend(frameon=False)


def _simulation_panel(ax: Any, job: dict[str, Any]) -> None:
    results = job["simulation"]["results"]
    patterns = list(dict.fromkeys(r["pattern"] for r in results))
    width = 0.38
    for offset, routing, color in ((-width / 2, "ecmp", "#dd8452"), (width / 2, "ftree", "#4c72b0")):
        values = [next((r["path_factor_mean"] for r in results if r["pattern"] == p and r["routing"] == routing), 0.0) for p in patterns]
        ax.bar([i + offset for i in range(len(patterns))], values, width, label=routing, color=color)
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(patterns)), patterns)
    ax.set_ylabel("path factor (mean): busiest link / capacity")
    ax.set_title("flows on the planned links")
    ax.legend(frameon=False)
