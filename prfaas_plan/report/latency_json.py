"""The JSON of `latency`, written from the typed ``specs.results`` timings: the one place its
keys are spelled."""

from __future__ import annotations

from typing import Any

from prfaas_plan.specs.latency import (
    TRACE_CHECK_RTOL,
    LatencyResult,
    SystemTiming,
    TopologyTiming,
    TraceCheck,
)

REFERENCE = "smallest exact-method Lambda_max among the systems"
TTFT_KEYS = ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s")


def system_json(t: SystemTiming) -> dict[str, Any]:
    out: dict[str, Any] = {
        "config": {"threshold_tokens": t.threshold_tokens, "n_prfaas": t.n_prfaas, "n_p": t.n_p, "n_d": t.n_d},
        "capacity_rps": t.capacity_rps, "capacity_binding": t.capacity_binding, "rate_rps": t.rate_rps,
        "load": t.load, "utilization": dict(t.utilization), "stable": t.stable,
        "unstable_stages": list(t.unstable_stages), "tpot_s": t.tpot_s, "p_offload": t.p_offload,
        "zero_load_ttft_mean_s": t.zero_load_ttft_mean_s,
    }
    out |= {k: getattr(t, k) for k in TTFT_KEYS}
    if not t.stable:
        return out | {"per_path": {}}
    out["per_path"] = {p.name: {"share": p.share, "rate_rps": p.rate_rps, "ttft_mean_s": p.ttft_mean_s,
                                "ttft_p50_s": p.ttft_p50_s, "ttft_p90_s": p.ttft_p90_s, "ttft_p99_s": p.ttft_p99_s,
                                "wait_mean_s": p.wait_mean_s, "prefill_mean_s": p.prefill_mean_s,
                                "transfer_mean_s": p.transfer_mean_s, "admission_mean_s": p.admission_mean_s,
                                "zero_load_ttft_mean_s": p.zero_load_ttft_mean_s} for p in t.paths}
    out["link_utilization"] = t.link_utilization
    return out


def latency_json(r: LatencyResult) -> dict[str, Any]:
    """One PD site: the headline system's timing at the top and each system's beside it (the
    two-cluster form's JSON); several: each system per site and over every request."""
    if len(r.sites) > 1:
        return _sites_json(r)
    per = {name: system_json(t) for name, t in r.at_site(r.sites[0]).items()}
    head = per[r.head]
    return {"scenario": r.scenario, "model": r.model,
            **{k: v for k, v in head.items() if k not in ("config", "load")}, "config": head["config"],
            "rate_rps": r.rate_rps, "load": r.load, "load_reference": REFERENCE, "systems": per} | (
        {} if r.trace_check is None else {"trace_check": trace_check_json(r.trace_check)})


def trace_check_json(c: TraceCheck) -> dict[str, Any]:
    return {"requests": c.requests, "rate_peak_to_mean": c.peak_to_mean, "arrival_scv": c.arrival_scv,
            "rtol": TRACE_CHECK_RTOL,
            "systems": {n: {"simulated_ttft_mean_s": m, "simulated_ttft_p90_s": p, "analytic_holds": c.holds[n]}
                        for n, (m, p) in c.simulated.items()}}


def topology_timing_json(t: TopologyTiming) -> dict[str, Any]:
    return {"capacity_rps": t.capacity_rps, "capacity_binding": t.capacity_binding, "rate_rps": t.rate_rps,
            "load": t.load, "stable": t.stable, "prfaas_utilization": t.prfaas_utilization, "n_prfaas": t.n_prfaas,
            "sites": {name: system_json(s) | {"demand_share": t.demand_shares[name]}
                      for name, s in t.sites.items()}} | {
        k: getattr(t, k) for k in TTFT_KEYS}


def _sites_json(r: LatencyResult) -> dict[str, Any]:
    return {"scenario": r.scenario, "model": r.model, "rate_rps": r.rate_rps, "load": r.load,
            "load_reference": REFERENCE, "systems": {n: topology_timing_json(t) for n, t in r.systems.items()},
            "configs": {n: {"n_prfaas": t.n_prfaas,
                            "sites": {site: {"threshold_tokens": s.threshold_tokens, "n_p": s.n_p, "n_d": s.n_d}
                                      for site, s in t.sites.items()}} for n, t in r.systems.items()}}


def scalar_rows(payload: dict[str, Any], inner: str | None = None, inner_label: str = "site") -> list[dict[str, Any]]:
    """CSV rows of a per-system JSON (``payload["systems"]``): each system's scalars, or with
    ``inner`` (a dotted key) each of its entries there (a topology's sites, a fleet's models)."""
    out = []
    for n, s in payload["systems"].items():
        if inner is None:
            out.append({"system": n} | scalars(s))
            continue
        for part in inner.split("."):
            s = s[part]
        out += [{"system": n, inner_label: name} | scalars(d) for name, d in s.items()]
    return out


def scalars(d: dict[str, Any]) -> dict[str, Any]:
    """The entries of ``d`` that are neither mappings nor lists: one CSV row's cells."""
    return {k: v for k, v in d.items() if not isinstance(v, dict | list)}
