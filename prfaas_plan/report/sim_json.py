"""The JSON of `simulate`, written from the typed ``sim.result.SimulateRun``: the one place its keys
are spelled (each run's own statistics are ``SimResult.to_dict``'s and ``TopologySimResult.to_dict``'s)."""

from __future__ import annotations

import math
from typing import Any

from prfaas_plan.report.latency_json import REFERENCE, TTFT_KEYS, scalars
from prfaas_plan.sim.result import SimResult, SimulateRun, SystemRun

_FIRST = ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_s", "per_path", "throughput_rps",
          "completed", "link_utilization", "prefix_hit_rate", "recompute_avoided_rate")


def _per_cpu_s(count: int, cpu_s: float) -> float | None:
    """A count per CPU second; None for a run too short to time."""
    rate = count / cpu_s if cpu_s > 0 else math.inf
    return rate if math.isfinite(rate) else None


def _summary(res: SimResult) -> dict[str, Any]:
    d = res.to_dict()
    return {k: d[k] for k in _FIRST} | {k: v for k, v in d.items() if k not in _FIRST}


def system_json(s: SystemRun) -> dict[str, Any]:
    """One system at one PD site: its run, configuration and analytic TTFT."""
    (site, res), = s.sites.items()
    a, c = s.analytic.sites[site], s.system.sites[0].config
    return _summary(res) | {
        "capacity_rps": c.capacity_rps, "capacity_binding": c.capacity_binding, "load": s.load,
        "config": {"threshold_tokens": c.threshold_tokens, "n_prfaas": c.n_prfaas, "n_p": c.n_p, "n_d": c.n_d,
                   "bs_max": c.bs_max},
        "analytic": {"ttft_mean_s": a.ttft_mean_s, "ttft_p50_s": a.ttft_p50_s, "ttft_p90_s": a.ttft_p90_s,
                     "ttft_p99_s": a.ttft_p99_s, "stable": a.stable},
        "sim": {"events": res.events, "cpu_s": res.cpu_s, "wall_s": res.wall_s,
                "requests_per_cpu_s": _per_cpu_s(res.requests, res.cpu_s)},
    }


def simulate_json(r: SimulateRun) -> dict[str, Any]:
    """One PD site: the headline system's run at the top and each system's beside it (the two-cluster
    form's JSON); several: each system over every request and per site."""
    if len(r.sites) > 1:
        return _sites_json(r)
    per = {name: system_json(s) for name, s in r.systems.items()}
    head = per[r.head]
    runs = [s.result for s in r.systems.values()]
    events, cpu, arrived = sum(x.events for x in runs), sum(x.cpu_s for x in runs), sum(x.requests for x in runs)
    c = r.control
    return {
        "scenario": r.scenario, "model": r.model, "system": r.head,
        **{k: v for k, v in head.items() if k not in ("sim", "config", "load", "capacity_rps", "capacity_binding",
                                                      "rate_rps", "analytic")},
        "rate_rps": r.rate_rps, "load": r.load, "load_reference": REFERENCE, "systems": per,
        "sim": {"seed": r.seed, "requests": r.requests, "duration_s": r.duration_s,
                "warmup_fraction": r.warmup_fraction, "workload": r.workload,
                **({} if r.hit_rate_source is None else {"hit_rate_source": r.hit_rate_source}),
                "arrival": r.arrival,
                "cache_mode": r.cache_mode, "events": events, "cpu_s": cpu,
                "requests_per_cpu_s": _per_cpu_s(arrived, cpu),
                "events_per_cpu_s": _per_cpu_s(events, cpu),
                "control": None if c is None else {"max_link_utilization": c.max_link_utilization,
                                                   "window_s": c.window_s, "margin": c.margin,
                                                   "period_s": c.period_s}},
    }



def _shared_json(t: SystemRun) -> dict[str, Any]:
    assert t.shared is not None
    d, a, system, res = t.shared.to_dict(), t.analytic, t.system, t.shared
    sites = {}
    for s in system.sites:
        sd = d["sites"][s.site]
        sites[s.site] = {k: sd.get(k) for k in (*TTFT_KEYS, "throughput_rps", "link_utilization", "completed",
                                                "prefix_hit_rate")} | {
            "demand_share": s.demand_share,
            "config": {"threshold_tokens": s.config.threshold_tokens, "n_p": s.config.n_p, "n_d": s.config.n_d},
            "analytic": {k: getattr(a.sites[s.site], k) for k in TTFT_KEYS}}
    return {k: d.get(k) for k in (*TTFT_KEYS, "throughput_rps", "completed", "requests", "prfaas_utilization")} | {
        "capacity_rps": system.capacity_rps, "capacity_binding": system.capacity_binding, "load": t.load,
        "n_prfaas": system.n_prfaas, "sites": sites, "analytic": {k: getattr(a, k) for k in (*TTFT_KEYS, "stable")},
        "sim": {"events": res.events, "cpu_s": res.cpu_s,
                "requests_per_cpu_s": _per_cpu_s(res.requests, res.cpu_s)}}


def _sites_json(r: SimulateRun) -> dict[str, Any]:
    return {"scenario": r.scenario, "model": r.model, "rate_rps": r.rate_rps, "load": r.load,
            "load_reference": REFERENCE, "systems": {n: _shared_json(t) for n, t in r.systems.items()},
            "sim": {"seed": r.seed, "requests": r.requests, "duration_s": r.duration_s,
                    "warmup_fraction": r.warmup_fraction}}


def simulate_csv_rows(r: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per system: the scalar results, the analytic TTFT beside them."""
    rows = []
    for name, s in r["systems"].items():
        row: dict[str, Any] = {"system": name, "rate_rps": r["rate_rps"]}
        row |= scalars(s)
        row |= s["config"]
        row |= {f"analytic_{k}": v for k, v in s["analytic"].items()}
        for path, d in s["per_path"].items():
            row |= {f"{path}_{k}": v for k, v in d.items()}
        rows.append(row)
    keys = list(dict.fromkeys(k for row in rows for k in row))  # every column, first-seen order
    return [{k: row.get(k) for k in keys} for row in rows]
