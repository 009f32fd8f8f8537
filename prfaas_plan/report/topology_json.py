"""The JSON of `optimize` on a topology of several PD sites, written from the typed
``specs.results.TopologyPlanResult``: the one place its keys are spelled."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.plan_json import (
    decode_json,
    homogeneous_json,
    interval_json,
    links_json,
    planned_rate_json,
    robustness_json,
    sites_json,
)
from prfaas_plan.specs.results import (
    Priced,
    SiteInfo,
    TopologyMethodPlan,
    TopologyPlanResult,
    TopologyPoint,
)
from prfaas_plan.specs.slo import TopologySloPlan


def point_json(r: TopologyPlanResult, p: TopologyPoint) -> dict[str, Any]:
    return {"lambda_max_rps": p.lambda_max_rps, "binding": p.binding, "tight": list(p.tight),
            "n_prfaas": p.n_prfaas, "sites": sites_json(r.prefill_site, p),
            "links": links_json(p, [s.link_usable_bytes_per_s for s in r.sites])}


def _priced(c: Priced) -> dict[str, float | None]:
    return {"price_per_hour": c.price_per_hour, "cost_per_million_requests": c.cost_per_million_requests}


def method_json(r: TopologyPlanResult, m: TopologyMethodPlan) -> dict[str, Any]:
    hom, ind = m.homogeneous, m.independent
    ratios: dict[str, float | None] = {"prfaas_vs_homogeneous": m.ratios.prfaas_vs_homogeneous,
                                       "prfaas_vs_independent": m.ratios.prfaas_vs_independent,
                                       "naive_vs_homogeneous": m.ratios.naive_vs_homogeneous}
    if m.ratios.prfaas_vs_homogeneous_equal_cost is not None:
        ratios["prfaas_vs_homogeneous_equal_cost"] = m.ratios.prfaas_vs_homogeneous_equal_cost
    return {
        "best": point_json(r, m.best) | _priced(m.cost) | {"prfaas_utilization": m.best.prfaas_utilization},
        "baselines": {
            "homogeneous": {"lambda_max_rps": hom.lambda_max_rps,
                            "sites": {s.site: homogeneous_json(s.baseline) | {"demand_share": s.demand_share}
                                      for s in hom.sites}} | _priced(hom.cost),
            "independent": {"lambda_max_rps": ind.lambda_max_rps,
                            "cost_per_million_requests": ind.cost.cost_per_million_requests,
                            "n_prfaas_per_site": dict(ind.n_prfaas_per_site),
                            "sites": {a.sites[0].site: {"threshold_tokens": a.sites[0].threshold_tokens,
                                                        "n_p": a.sites[0].n_p, "n_d": a.sites[0].n_d,
                                                        "lambda_max_rps": a.lambda_max_rps, "binding": a.binding}
                                      for a in ind.alone}},
            "naive_heterogeneous": point_json(r, m.naive) | _priced(m.naive_cost)},
        "ratios": ratios, "refined_threshold": m.refined_threshold, "evaluations": m.evaluations,
        "search_s": m.search_s, "decode": {site: decode_json(d) for site, d in m.decode.items()}}


def _site_json(s: SiteInfo) -> dict[str, Any]:
    return {"hardware": s.pool.hardware, "gpus_per_instance": s.pool.gpus_per_instance,
            "instances": s.pool.instances, "demand_share": s.demand_share, "mean_input_tokens": s.mean_input_tokens,
            "mean_uncached_tokens": s.mean_uncached_tokens, "output_tokens": s.output_tokens,
            "distribution": dict(s.distribution), "decode": decode_json(s.decode)}


def topology_slo_json(s: TopologySloPlan) -> dict[str, Any]:
    """``ttft_slo`` of a topology: each system held at its throughput configuration, every site's TTFT."""
    out: dict[str, Any] = {"bound_s": s.bound_s, "statistic": s.statistic, "every_site": True,
                           "configuration": "each system's throughput-best, held"}
    for name, x in s.systems:
        out[name] = None if x is None else {
            "lambda_ttft_rps": x.lambda_ttft_rps, "capacity_rps": x.capacity_rps, "load": x.load, "binding": x.binding,
            "sites": {k: {"ttft_mean_s": t.ttft_mean_s, "ttft_p90_s": t.ttft_p90_s, "ttft_p99_s": t.ttft_p99_s}
                      for k, t in x.sites.items()}}
    return out | {"ratios": {"prfaas_vs_homogeneous": s.prfaas_vs_homogeneous}}


def topology_json(r: TopologyPlanResult) -> dict[str, Any]:
    methods = {name: method_json(r, m) for name, m in r.methods.items()}
    head = methods[r.method]
    out = {
        "scenario": r.scenario, "model": r.model, "method": r.method,
        "best": head["best"], "baselines": head["baselines"], "ratios": head["ratios"], "methods": methods,
        "topology": {
            "prefill": {"site": r.prefill_site, "hardware": r.prefill.hardware,
                        "gpus_per_instance": r.prefill.gpus_per_instance, "instances": r.prefill.instances},
            "sites": {s.name: _site_json(s) for s in r.sites},
            "links": {s.link: {"bandwidth_gbps": units.bytes_per_s_to_gbps(s.link_bandwidth_bytes_per_s),
                               "usable_fraction": s.link_usable_fraction,
                               "usable_gbps": units.bytes_per_s_to_gbps(s.link_usable_bytes_per_s),
                               "rtt_s": s.link_rtt_s} for s in r.sites},
        },
        "sources": dict(r.sources),
        "search": {"thresholds": r.thresholds, "n_prfaas_options": r.n_prfaas_options,
                   "evaluations": r.head.evaluations, "search_s": {k: v.search_s for k, v in r.methods.items()},
                   "scaling": "sum of the sites' grids per PrfaaS size (core.joint)"},
    }
    if r.ttft_slo is not None:
        out["ttft_slo"] = topology_slo_json(r.ttft_slo)
    if r.robustness is not None:
        out["robustness"] = robustness_json(r.robustness)
    if r.interval is not None:
        out["lambda_interval"] = interval_json(r.interval)
    if r.planned_rate is not None:
        out["planned_rate"] = planned_rate_json(r.planned_rate)
    return out


def topology_csv_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`optimize`'s CSV of a topology: one row per method and PD site."""
    return [{"method": m, "lambda_max_rps": d["best"]["lambda_max_rps"], "binding": d["best"]["binding"],
             "site": name} | {k: v for k, v in s.items() if k != "role"}
            for m, d in payload["methods"].items() for name, s in d["best"]["sites"].items() if s["role"] == "pd"]
