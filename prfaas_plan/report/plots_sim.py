"""Figure of `simulate` (matplotlib, imported lazily, Agg backend): TTFT CDFs and link utilisation."""

from __future__ import annotations

from pathlib import Path
from typing import Any, BinaryIO

from prfaas_plan.report.plots import pyplot, save_figure
from prfaas_plan.report.render import SYSTEM_NAMES


def sim_figure(run: Any, path: Path | BinaryIO) -> None:
    """(a) simulated TTFT CDF of each system; (b) cross-datacenter link utilisation over time (one PD site)."""
    plt = pyplot()
    r, runs = run, run.at_site(run.sites[0])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for name, res in runs.items():
        edges, cdf = res.ttft.cdf()
        if edges.size:
            ax1.step(edges, cdf, where="post", label=SYSTEM_NAMES.get(name, name))
    ax1.set_xscale("log")
    ax1.set_xlabel("TTFT (s)")
    ax1.set_ylabel("fraction of requests")
    ax1.set_ylim(0, 1.01)
    ax1.grid(True, which="both", alpha=0.3)
    ax1.set_title(f"(a) TTFT at {r.rate_rps:.2f} req/s ({r.load * 100:.0f}% of the smallest capacity)")
    ax1.legend(fontsize=8)
    drawn = False
    for name, res in runs.items():
        if res.link_utilization is None:
            continue
        starts, util = res.link_series
        if starts.size:
            ax2.plot(starts, util * 100, lw=0.8, label=SYSTEM_NAMES.get(name, name))
            drawn = True
    ax2.set_xlabel("simulated time (s)")
    ax2.set_ylabel("link utilisation (%)")
    ax2.set_ylim(bottom=0)
    ax2.grid(True, alpha=0.3)
    ax2.set_title("(b) cross-datacenter link")
    if drawn:
        ax2.legend(fontsize=8)
    fig.suptitle(f"{r.scenario}: simulated", fontsize=10)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
