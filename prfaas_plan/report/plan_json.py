"""The JSON of `optimize`, written from the typed ``specs.results.PlanResult``: the one place its
keys are spelled (the edge). One PD site keeps the two-cluster layout (``best`` with every bound
of Eqs. 3-6, ``top``, ``clusters``, ``link``); several sites the topology's (``topology``, per-site
baselines, independent planning). Both read the same result type."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.plan_parts import (
    decode_json,
    homogeneous_json,
    interval_json,
    links_json,
    naive_json,
    planned_rate_json,
    point_json,
    ratios_json,
    robustness_json,
    sites_json,
    slo_json,
)
from prfaas_plan.specs.results import MethodPlan, PlanResult, Priced, SiteInfo, TopologyPoint
from prfaas_plan.specs.slo import SloPlan


def _method_json(r: PlanResult, m: MethodPlan) -> dict[str, Any]:
    """One method's plan of one PD site (its grid's points, ``specs.results.GridPlan``)."""
    g, site = m.grid, r.site
    assert g is not None
    best = point_json(g.best) | {"cost_per_million_requests": m.cost.cost_per_million_requests,
                                 "price_per_hour": m.cost.price_per_hour,
                                 "sites": sites_json(r.prefill_site, m.best),
                                 "links": links_json(m.best, [site.link_usable_bytes_per_s])}
    return {"best": best, "top": [point_json(op) for op in g.top],
            "baselines": {"homogeneous": homogeneous_json(g.homogeneous) if g.homogeneous else None,
                          "naive_heterogeneous": naive_json(g.naive) if g.naive else None},
            "ratios": ratios_json(m.ratios), "refined_threshold": m.refined_threshold, "evaluations": m.evaluations,
            "search_s": m.search_s, "decode": decode_json(m.decode[site.name])}


def plan_json(r: PlanResult) -> dict[str, Any]:
    """`optimize`'s JSON: one PD site's layout or a topology's, then what either may carry (the
    TTFT SLO, robustness, the interval, the planned rate)."""
    several = len(r.sites) > 1
    out = _topology_json(r) if several else _one_site_json(r)
    if r.ttft_slo is not None:
        out["ttft_slo"] = topology_slo_json(r.ttft_slo) if several else slo_json(r.ttft_slo)
    if r.robustness is not None:
        out["robustness"] = robustness_json(r.robustness)
    if r.interval is not None:
        out["lambda_interval"] = interval_json(r.interval)
    if r.planned_rate is not None:
        out["planned_rate"] = planned_rate_json(r.planned_rate)
    return out


def plan_csv_rows(r: PlanResult, payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`optimize`'s CSV: one row per method (its best configuration's scalars), with several PD
    sites one per method and site."""
    if len(r.sites) > 1:
        return [{"method": m, "lambda_max_rps": d["best"]["lambda_max_rps"], "binding": d["best"]["binding"],
                 "site": name} | {k: v for k, v in s.items() if k != "role"}
                for m, d in payload["methods"].items() for name, s in d["best"]["sites"].items() if s["role"] == "pd"]
    return [{"method": m} | {k: v for k, v in d["best"].items() if k not in ("tight", "sites", "links")}
            for m, d in payload["methods"].items()]


def _one_site_json(r: PlanResult) -> dict[str, Any]:
    methods = {name: _method_json(r, m) for name, m in r.methods.items()}
    site = r.site
    head = methods[r.method]
    return {
        "scenario": r.scenario, "model": r.model, "method": r.method,
        "best": head["best"], "top": head["top"], "baselines": head["baselines"], "ratios": head["ratios"],
        "methods": methods,
        "workload": {"mean_input_tokens": site.mean_input_tokens, "mean_uncached_tokens": site.mean_uncached_tokens,
                     "output_tokens": site.output_tokens, "prefix_hit_rate": site.prefix_hit_rate,
                     # a trace's only (measured, assumed, unknown): a parametric workload has no hit rate
                     **({} if site.hit_rate_source is None else {"hit_rate_source": site.hit_rate_source}),
                     "distribution": dict(site.distribution), "requests": site.requests},
        "clusters": {role: {"hardware": c.hardware, "gpus_per_instance": c.gpus_per_instance,
                            "instances": c.instances, "site": name}
                     for role, c, name in (("prfaas", r.prefill, r.prefill_site), ("local", site.pool, site.name))},
        "link": {"name": site.link, "bandwidth_gbps": units.bytes_per_s_to_gbps(site.link_bandwidth_bytes_per_s),
                 "usable_fraction": site.link_usable_fraction,
                 "usable_gbps": units.bytes_per_s_to_gbps(site.link_usable_bytes_per_s)},
        "decode": decode_json(site.decode), "sources": dict(r.sources),
        "search": {"thresholds": r.thresholds, "n_prfaas_options": r.n_prfaas_options,
                   "max_prfaas_instances": r.max_prfaas_instances, "splits": r.splits, "evaluations": r.evaluations,
                   "search_s": {k: v.search_s for k, v in r.methods.items()}},
    }


def _point_json(r: PlanResult, p: TopologyPoint) -> dict[str, Any]:
    return {"lambda_max_rps": p.lambda_max_rps, "binding": p.binding, "tight": list(p.tight),
            "n_prfaas": p.n_prfaas, "sites": sites_json(r.prefill_site, p),
            "links": links_json(p, [s.link_usable_bytes_per_s for s in r.sites])}


def _priced(c: Priced) -> dict[str, float | None]:
    return {"price_per_hour": c.price_per_hour, "cost_per_million_requests": c.cost_per_million_requests}


def _topology_method_json(r: PlanResult, m: MethodPlan) -> dict[str, Any]:
    hom, ind, nv, nv_cost = m.homogeneous, m.independent, m.naive, m.naive_cost
    assert hom is not None and ind is not None and nv is not None and nv_cost is not None  # always, several sites
    ratios: dict[str, float | None] = {"prfaas_vs_homogeneous": m.ratios.prfaas_vs_homogeneous,
                                       "prfaas_vs_independent": m.ratios.prfaas_vs_independent,
                                       "naive_vs_homogeneous": m.ratios.naive_vs_homogeneous}
    if m.ratios.prfaas_vs_homogeneous_equal_cost is not None:
        ratios["prfaas_vs_homogeneous_equal_cost"] = m.ratios.prfaas_vs_homogeneous_equal_cost
    return {
        "best": _point_json(r, m.best) | _priced(m.cost) | {"prfaas_utilization": m.best.prfaas_utilization},
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
            "naive_heterogeneous": _point_json(r, nv) | _priced(nv_cost)},
        "ratios": ratios, "refined_threshold": m.refined_threshold, "evaluations": m.evaluations,
        "search_s": m.search_s, "decode": {site: decode_json(d) for site, d in m.decode.items()}}


def _site_json(s: SiteInfo) -> dict[str, Any]:
    return {"hardware": s.pool.hardware, "gpus_per_instance": s.pool.gpus_per_instance,
            "instances": s.pool.instances, "demand_share": s.demand_share, "mean_input_tokens": s.mean_input_tokens,
            "mean_uncached_tokens": s.mean_uncached_tokens, "output_tokens": s.output_tokens,
            "distribution": dict(s.distribution), "decode": decode_json(s.decode)}


def topology_slo_json(s: SloPlan) -> dict[str, Any]:
    """``ttft_slo`` of a topology: each system's configuration searched under the SLO (``api.slo``),
    its total rate and every site's t, split and TTFT there."""
    out: dict[str, Any] = {"bound_s": s.bound_s, "statistic": s.statistic, "every_site": True,
                           "configuration": "searched under the bound, one site at a time"}
    for name, x in (("prfaas", s.prfaas), ("homogeneous", s.homogeneous), ("naive_heterogeneous",
                                                                         s.naive_heterogeneous)):
        out[name] = None if x is None else {
            "lambda_ttft_rps": x.lambda_ttft_rps, "capacity_rps": x.capacity_rps, "load": x.load, "binding": x.binding,
            "n_prfaas": x.n_prfaas, "ttft_at_rate_s": x.ttft_at_rate_s,
            "sites": {t.site: {"threshold_tokens": t.threshold_tokens, "n_p": t.n_p, "n_d": t.n_d,
                               "ttft_mean_s": t.ttft_mean_s, "ttft_p90_s": t.ttft_p90_s, "ttft_p99_s": t.ttft_p99_s}
                      for t in x.sites}}
    return out | {"ratios": {"prfaas_vs_homogeneous": s.prfaas_vs_homogeneous}, "search_s": s.search_s}


def _topology_json(r: PlanResult) -> dict[str, Any]:
    methods = {name: _topology_method_json(r, m) for name, m in r.methods.items()}
    head = methods[r.method]
    return {
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
