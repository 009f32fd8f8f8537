"""View, JSON and figure of a replayed bandwidth series: the router policies side by side and over time."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.report.render import emit, num, pct, secs, table


def _f(x: Any) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def _down_s(s: Any) -> float:
    """Seconds of the series with the link down (each point holds until the next)."""
    return float(np.sum(np.diff(np.append(s.times_s, s.span_s))[s.line_bytes_per_s <= 0]))


def replay_json(r: Any) -> dict[str, Any]:
    s = r.series
    out = {"scenario": r.scenario, "rate_rps": r.rate_rps, "statistic": r.statistic, "ttft_bound_s": r.bound_s,
           "series": {"points": len(s.times_s), "span_s": s.span_s,
                      "bandwidth_gbps": {"min": units.bytes_per_s_to_gbps(float(s.line_bytes_per_s.min())),
                                         "max": units.bytes_per_s_to_gbps(float(s.line_bytes_per_s.max()))},
                      "down_s": _down_s(s)},
           "policies": {}}
    for run in r.runs:
        res, tl = run.result, run.result.timeline
        out["policies"][run.policy] = {
            "requests": res.requests, "served_rps": run.served_rps, "ttft_mean_s": res.ttft.mean,
            "ttft_p50_s": res.ttft.quantile(0.5), "ttft_p90_s": res.ttft.quantile(0.9),
            "ttft_p99_s": res.ttft.quantile(0.99), "slo_attainment": run.attainment, "kept_local": res.kept_local,
            "timeline": {"window_s": tl.window_s, "start_s": [float(x) for x in tl.starts_s],
                         "arrived": [int(x) for x in tl.arrived],
                         "ttft_p90_s": [_f(x) for x in tl.ttft_p90_s],
                         "slo_attainment": None if tl.attainment is None else [_f(x) for x in tl.attainment],
                         "link_utilization": [_f(x) for x in tl.link_utilization],
                         "capacity_gbps": [units.bytes_per_s_to_gbps(float(x)) for x in tl.capacity_bytes_per_s],
                         "threshold_tokens": [_f(x) for x in tl.threshold_tokens],
                         "offloaded": [_f(x) for x in tl.offloaded]}}
    return out


def replay_csv_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per router policy: its scalars (the timeline is the JSON's)."""
    return [{"policy": name, **{k: v for k, v in p.items() if k != "timeline"}}
            for name, p in payload["policies"].items()]


def emit_replay(fmt: str, r: Any) -> None:
    """`replay`: the router policies on the same series and arrivals; JSON and CSV written here."""
    payload = replay_json(r)
    emit(fmt, payload, rows=replay_csv_rows(payload), tables=lambda: _tables(r))


def _tables(r: Any) -> list[Any]:
    s = r.series
    gbps = units.bytes_per_s_to_gbps
    down = _down_s(s)
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
