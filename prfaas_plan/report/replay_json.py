"""JSON and CSV rows of `replay` (``api.replay``'s typed result): each router policy's scalars and timeline."""

from __future__ import annotations

from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.report.render import finite


def down_s(s: Any) -> float:
    """Seconds of the series with the link down (each point holds until the next)."""
    return float(np.sum(np.diff(np.append(s.times_s, s.span_s))[s.line_bytes_per_s <= 0]))


def replay_json(r: Any) -> dict[str, Any]:
    s = r.series
    out = {"scenario": r.scenario, "rate_rps": r.rate_rps, "statistic": r.statistic, "ttft_bound_s": r.bound_s,
           "series": {"points": len(s.times_s), "span_s": s.span_s,
                      "bandwidth_gbps": {"min": units.bytes_per_s_to_gbps(float(s.line_bytes_per_s.min())),
                                         "max": units.bytes_per_s_to_gbps(float(s.line_bytes_per_s.max()))},
                      "down_s": down_s(s)},
           "policies": {}}
    for run in r.runs:
        tl = run.result.timeline
        out["policies"][run.policy] = _scalars(run) | {
            "timeline": {"window_s": tl.window_s, "start_s": [float(x) for x in tl.starts_s],
                         "arrived": [int(x) for x in tl.arrived],
                         "ttft_p90_s": [finite(float(x)) for x in tl.ttft_p90_s],
                         "slo_attainment": None if tl.attainment is None else [finite(float(x)) for x in tl.attainment],
                         "link_utilization": [finite(float(x)) for x in tl.link_utilization],
                         "capacity_gbps": [units.bytes_per_s_to_gbps(float(x)) for x in tl.capacity_bytes_per_s],
                         "threshold_tokens": [finite(float(x)) for x in tl.threshold_tokens],
                         "offloaded": [finite(float(x)) for x in tl.offloaded]}}
    return out


def replay_csv_rows(r: Any) -> list[dict[str, Any]]:
    """One row per router policy: its scalars (the timeline is the JSON's)."""
    return [{"policy": run.policy, **_scalars(run)} for run in r.runs]


def _scalars(run: Any) -> dict[str, Any]:
    res = run.result
    return {"requests": res.requests, "served_rps": run.served_rps, "ttft_mean_s": res.ttft.mean,
            "ttft_p50_s": res.ttft.quantile(0.5), "ttft_p90_s": res.ttft.quantile(0.9),
            "ttft_p99_s": res.ttft.quantile(0.99), "slo_attainment": run.attainment, "kept_local": res.kept_local}
