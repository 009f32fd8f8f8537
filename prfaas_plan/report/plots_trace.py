"""The figure of `trace stats`: arrivals per bin, input/output length CDFs, hit rate vs cache size."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from prfaas_plan import units
from prfaas_plan.report.plots import pyplot, save_figure
from prfaas_plan.report.views_trace import NO_HASHES, duration, no_rate
from prfaas_plan.specs.trace_stats import TraceStats

# legends under the axes, as report/plots.py places them: inside, some trace's bars run through them
_BELOW = {"fontsize": 8, "loc": "upper center", "bbox_to_anchor": (0.5, -0.2), "ncol": 1, "frameon": False}


def _time_unit(span_s: float) -> tuple[float, str]:
    if span_s < 120:
        return 1.0, "s"
    if span_s < 2 * units.HOUR:
        return 60.0, "min"
    return units.HOUR, "h"


def trace_figure(r: TraceStats, path: Path) -> None:
    """Draws what ``api.trace_stats`` computed; the hit-rate panel only where the trace has hashes."""
    plt = pyplot()
    panels = 3 if r.reuse is not None else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 4.4))
    ax = axes[0]
    b = r.bins
    if b is None or r.mean_rate_rps is None:
        ax.text(0.5, 0.5, no_rate(r), ha="center", va="center", wrap=True, transform=ax.transAxes)
        ax.set_xlabel("time since the first arrival (s)")
        ax.set_ylabel("requests per bin")
    else:
        scale, unit = _time_unit(r.span_s)
        starts = np.array(b.starts_s) / scale
        full = b.full_bins
        ax.bar(starts[:full], b.counts[:full], width=b.bin_s / scale, align="edge", color="tab:blue", alpha=0.7,
               label=f"arrivals per {duration(b.bin_s)}")
        if full < len(b.counts):
            ax.bar(starts[full:], b.counts[full:], width=b.bin_s / scale, align="edge", color="tab:blue",
                   alpha=0.25, label="last bin, partly past the last arrival")
        ax.axhline(r.mean_rate_rps * b.bin_s, color="black", ls="--",
                   label=f"mean rate x bin ({num3(r.mean_rate_rps)} req/s)")
        ax.set_xlabel(f"time since the first arrival ({unit})")
        ax.set_ylabel(f"requests per bin ({duration(b.bin_s)})")
        ax.legend(**_BELOW)
    ax.set_title(f"(a) {r.requests:,} arrivals")

    ax = axes[1]
    for label, x in (("input", r.input_tokens), ("output", r.output_tokens)):
        if x.size == 0:
            continue
        zeros = int(np.sum(x < 1))
        shown = np.maximum(x, 1)
        frac = np.arange(1, x.size + 1) / x.size
        note = f", {zeros:,} of 0 tokens drawn at 1" if zeros else ""
        ax.step(shown, frac, where="post", label=f"{label} (p50 {np.median(x):,.0f} tokens{note})")
    ax.set_xscale("log")
    ax.set_xlabel("length (tokens, log scale)")
    ax.set_ylabel("fraction of requests <= length")
    ax.set_ylim(0, 1.02)
    ax.legend(**_BELOW)
    ax.set_title("(b) length CDFs")

    if r.reuse is not None:
        ax = axes[2]
        u = r.reuse
        pts = [p for p in (u.curve or u.sized) if p.capacity_tokens]
        if pts:
            ax.plot([p.capacity_tokens for p in pts], [100 * p.hit_rate for p in pts], "o-",
                    label=f"LRU cache ({u.block_tokens}-token blocks)")
            ax.set_xscale("log")
        ax.axhline(100 * u.unbounded.hit_rate, color="black", ls="--",
                   label=f"unbounded cache ({100 * u.unbounded.hit_rate:.1f}%)")
        ax.axvline(u.working_set_tokens, color="grey", ls=":", label="working set (distinct blocks)")
        ax.set_xlabel("cache size (tokens, log scale)")
        ax.set_ylabel("prefix hit rate (% of input tokens)")
        ax.set_ylim(0, max(5.0, 100 * u.unbounded.hit_rate * 1.15))
        ax.legend(**_BELOW)
        ax.set_title("(c) hit rate vs cache size")
    else:
        fig.text(0.5, -0.02, f"prefix hit rate: unknown ({NO_HASHES})", ha="center", fontsize=9)
    fig.suptitle(f"{r.source} ({r.format})")
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)


def num3(x: float) -> str:
    return f"{x:,.3g}"
