"""A small SVG figure for the Markdown section: all-reduce time against the compute budget, and the
simulated slowdown of each traffic pattern under ECMP and ftree routing.

Rendered with matplotlib's Agg-free SVG backend, with a fixed hash salt and no date, so the same
result gives byte-identical SVG (the project's no-timestamp, reproducible-output rule).
"""

from __future__ import annotations

import io
from typing import Any

import matplotlib

matplotlib.use("svg")

import matplotlib.pyplot as plt  # the backend is chosen first


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
    est = job["estimate"]
    if "compare" in job:
        rows = job["compare"]["rows"]
        speeds = sorted({r["speed_gbps"] for r in rows})
        width = 0.38
        for offset, transport, color in ((-width / 2, "infiniband", "#4c72b0"), (width / 2, "roce", "#dd8452")):
            values = [next(r["allreduce_s"] for r in rows if r["speed_gbps"] == s and r["transport"] == transport) for s in speeds]
            ax.bar(
                [i + offset for i in range(len(speeds))],
                values,
                width,
                label="InfiniBand" if transport == "infiniband" else "RoCEv2",
                color=color,
            )
        ax.set_xticks(range(len(speeds)), [f"{s}G" for s in speeds])
        ax.set_xlabel("NIC speed")
    else:
        labels = ["ring", "hierarchical"]
        ax.bar(labels, [est["ring_s"], est["hierarchical_s"]], color="#4c72b0", label="all-reduce")
    ax.axhline(est["backward_s"], color="#55a868", linestyle="--", linewidth=1, label="backward pass")
    ax.axhline(est["compute_s"], color="#c44e52", linestyle=":", linewidth=1, label="forward + backward")
    ax.set_ylabel("seconds per step")
    ax.set_title(f"{job['name']}: all-reduce vs compute ({job['inputs']['gpus']} GPUs)")
    ax.legend(frameon=False)


def _simulation_panel(ax: Any, job: dict[str, Any]) -> None:
    results = job["simulation"]["results"]
    patterns = list(dict.fromkeys(r["pattern"] for r in results))
    width = 0.38
    for offset, routing, color in ((-width / 2, "ecmp", "#dd8452"), (width / 2, "ftree", "#4c72b0")):
        values = [next((r["slowdown_mean"] for r in results if r["pattern"] == p and r["routing"] == routing), 0.0) for p in patterns]
        ax.bar([i + offset for i in range(len(patterns))], values, width, label=routing, color=color)
    ax.axhline(1.0, color="black", linewidth=0.6)
    ax.set_xticks(range(len(patterns)), patterns)
    ax.set_ylabel("slowdown vs ideal balancing (mean)")
    ax.set_title("flow collisions on the planned fabric")
    ax.legend(frameon=False)
