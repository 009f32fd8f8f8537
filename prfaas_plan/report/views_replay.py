"""View, JSON and figure of a replayed bandwidth series: the router policies side by side and over time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.report.render import emit, num, pct, secs, table
from prfaas_plan.report.replay_json import down_s, replay_csv_rows, replay_json


def emit_replay(fmt: str, r: Any) -> None:
    """`replay`: the router policies on the same series and arrivals; JSON and CSV written here."""
    emit(fmt, replay_json(r), rows=replay_csv_rows(r), tables=lambda: _tables(r))


def _tables(r: Any) -> list[Any]:
    s = r.series
    gbps = units.bytes_per_s_to_gbps
    down = down_s(s)
    head = (f"{r.scenario}: the PrfaaS-PD plan at {num(r.rate_rps, 3)} req/s on a replayed bandwidth series "
            f"({len(s.times_s)} points over {num(s.span_s / units.HOUR, 1)} h, "
            f"{num(gbps(float(s.line_bytes_per_s.min())), 1)}-{num(gbps(float(s.line_bytes_per_s.max())), 1)} Gbps, "
            f"down {num(down, 0)} s)")
    rows = [[run.policy, f"{run.result.requests:,}", num(run.served_rps, 3), secs(run.result.ttft.mean),
             secs(run.result.ttft.quantile(0.9)), secs(run.result.ttft.quantile(0.99)),
             pct(run.attainment) if run.attainment is not None else "-"] for run in r.runs]
    bound = f"TTFT <= {r.bound_s:g} s" if r.bound_s is not None else "no TTFT SLO"
    return [head, "", table("router policies on the same series and arrivals",
                            ["policy", "requests", "served req/s", "TTFT mean s", "P90 s", "P99 s", f"SLO ({bound})"],
                            rows, caption="  static: the plan's t; rule: the paper's link-utilisation rule; table: "
                                          "`prfaas-plan thresholds` read at the current bandwidth and rate")]


def replay_figure(r: Any, path: Path) -> None:
    from prfaas_plan.report.plots import pyplot, save_figure

    plt = pyplot()
    fig, axes = plt.subplots(4, 1, figsize=(10, 9), sharex=True)
    first = r.runs[0].result.timeline
    hours = first.starts_s / units.HOUR
    axes[0].step(hours, [units.bytes_per_s_to_gbps(float(x)) for x in first.capacity_bytes_per_s], where="post",
                 color="black", label="usable bandwidth B_out (the series)")
    axes[0].set_ylabel("B_out (Gbps)")
    axes[0].legend(fontsize=8)
    for run in r.runs:
        tl = run.result.timeline
        axes[1].plot(hours, tl.ttft_p90_s, label=run.policy)
        if tl.attainment is not None:
            axes[2].plot(hours, tl.attainment, label=run.policy)
        thr = np.where(np.isfinite(tl.threshold_tokens), tl.threshold_tokens, np.nan) / 1024
        axes[3].plot(hours, thr, label=run.policy)
    axes[1].set_yscale("log")
    axes[1].set_ylabel("P90 TTFT (s)")
    axes[2].set_ylabel("SLO attainment (fraction)")
    axes[3].set_ylabel("threshold t (K tokens)")
    axes[3].set_xlabel("time (h)")
    if first.attainment is None:  # no slo.ttft: nothing to attain (an empty axis said so with a Python warning)
        axes[2].text(0.5, 0.5, "no TTFT SLO (slo.ttft)", ha="center", va="center", transform=axes[2].transAxes)
    for ax in axes[1:]:
        if ax.get_legend_handles_labels()[1]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
