"""The report's own figure (matplotlib, imported lazily, Agg backend): the analytic TTFT CDF."""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

from prfaas_plan.report.plots import pyplot, save_figure
from prfaas_plan.report.render import SYSTEM_NAMES
from prfaas_plan.report.report_data import TtftCdf


def ttft_cdf_figure(c: TtftCdf, path: Path | BinaryIO) -> None:
    """P(TTFT <= x) of each system at one rate, from the latency model (``api.report.ttft_cdf``)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.5, 4))
    systems = []
    for name, (x, cdf) in c.curves.items():
        systems += ax.plot(x, cdf, label=SYSTEM_NAMES.get(name, name))
    ax.set_xscale("log")
    ax.set_xlabel("TTFT (s)")
    ax.set_ylabel("fraction of requests (P[TTFT <= x])")
    ax.set_ylim(0, 1.01)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"analytic TTFT at {c.rate_rps:.3f} req/s ({c.load * 100:.0f}% of the smallest capacity)",
                 fontsize=10)
    for q, name in ((0.5, "P50"), (0.9, "P90"), (0.99, "P99")):  # each quantile line labelled where it is drawn
        ax.axhline(q, color="grey", lw=0.6, ls=":", label=name)
        ax.annotate(name, xy=(0.0, q), xycoords=("axes fraction", "data"), xytext=(3, 2), textcoords="offset points",
                    fontsize=7, color="dimgrey", va="bottom")
    ax.legend(handles=systems, fontsize=8, loc="lower right", title=None if not c.unstable else
              "unstable: " + ", ".join(SYSTEM_NAMES.get(n, n) for n in c.unstable), title_fontsize=7)
    fig.suptitle(c.title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
