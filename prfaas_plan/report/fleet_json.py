"""The JSON of `optimize`, `simulate`, `degrade` and `size` on a scenario of several models, written from
their typed results (``specs.fleet``): the one place their keys are spelled."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.fleet_latency_json import fleet_timing_json
from prfaas_plan.specs.fleet import (
    FleetDegradeResult,
    FleetMethodPlan,
    FleetPlanResult,
    FleetPoint,
    FleetSimulateRun,
    FleetSizingResult,
)
from prfaas_plan.specs.results import Pool, Priced


def _pool(p: Pool) -> dict[str, Any]:
    return {"hardware": p.hardware, "gpus_per_instance": p.gpus_per_instance, "instances": p.instances}


def _priced(c: Priced) -> dict[str, Any]:
    return {"price_per_hour": c.price_per_hour, "cost_per_million_requests": c.cost_per_million_requests}


def point_json(p: FleetPoint) -> dict[str, Any]:
    return {
        "lambda_max_rps": p.lambda_max_rps, "binding": p.binding, "tight": list(p.tight), "n_prfaas": p.n_prfaas,
        "entries": [{"model": e.model, "site": e.site, "link": e.link, "demand_share": e.demand_share,
                     "threshold_tokens": e.threshold_tokens, "n_p": e.n_p, "n_d": e.n_d, "n_prfaas": e.n_prfaas,
                     "p_offload": e.p_offload, "lambda_rps": e.lambda_rps, "theta_pd_p_rps": e.theta_pd_p_rps,
                     "theta_pd_d_rps": e.theta_pd_d_rps, "theta_prfaas_rps": e.theta_prfaas_rps,
                     "egress_gbps": units.bytes_per_s_to_gbps(e.egress_bytes_per_s),
                     "prfaas_utilization": e.prfaas_utilization} for e in p.entries],
        "links": {lk.link: {"usable_gbps": units.bytes_per_s_to_gbps(lk.usable_bytes_per_s),
                            "egress_gbps": units.bytes_per_s_to_gbps(lk.egress_bytes_per_s),
                            "utilization": lk.utilization} for lk in p.links},
    }


def _method(m: FleetMethodPlan) -> dict[str, Any]:
    return {"best": point_json(m.best),
            "separate": None if m.separate is None else point_json(m.separate),
            "homogeneous": None if m.homogeneous is None else point_json(m.homogeneous),
            "ratios": {"shared_vs_separate": m.ratios.shared_vs_separate,
                       "shared_vs_homogeneous": m.ratios.shared_vs_homogeneous},
            "cost": _priced(m.cost), "search_s": m.search_s}


def fleet_json(r: FleetPlanResult) -> dict[str, Any]:
    head = r.methods[r.method]
    return {
        "scenario": r.scenario, "method": r.method,
        "prefill": {"site": r.prefill_site, **_pool(r.prefill)},
        "sites": {name: _pool(p) for name, p in r.sites},
        "models": {m.name: {"model": m.model, "demand_share": m.demand_share, "sites": list(m.sites),
                            "mean_uncached_tokens": m.mean_uncached_tokens, "output_tokens": m.output_tokens,
                            "kv_bytes_per_token": m.kv_bytes_per_token, "stack": m.stack} for m in r.models},
        "best": point_json(head.best),
        "ratios": _method(head)["ratios"],
        "methods": {k: _method(v) for k, v in r.methods.items()},
        "search": {"thresholds": r.thresholds},
        "sources": dict(r.sources),
    }


def fleet_simulate_json(r: FleetSimulateRun) -> dict[str, Any]:
    return {
        "scenario": r.scenario, "rate_rps": r.rate_rps, "load": r.load, "seed": r.seed, "requests": r.requests,
        "duration_s": r.duration_s, "warmup_fraction": r.warmup_fraction,
        "systems": {name: {"capacity_rps": run.system.capacity_rps, "capacity_binding": run.system.capacity_binding,
                           "load": run.load, "pools": dict(run.system.pools),
                           "links_gbps": {k: units.bytes_per_s_to_gbps(v) for k, v in run.system.links},
                           "simulated": run.result.to_dict()}
                    for name, run in r.systems.items()},
    }


def fleet_csv_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`optimize`'s CSV of several models: one row per method and entry."""
    return [{"method": m, "lambda_max_rps": d["best"]["lambda_max_rps"], "binding": d["best"]["binding"]} | e
            for m, d in payload["methods"].items() for e in d["best"]["entries"]]


def fleet_degrade_json(r: FleetDegradeResult) -> dict[str, Any]:
    return {
        "scenario": r.scenario, "method": r.method, "nominal": point_json(r.nominal), "rate_rps": r.rate_rps,
        "load": r.load,
        "links": {link: [{"level": lv.level, "usable_gbps": units.bytes_per_s_to_gbps(lv.usable_bytes_per_s),
                          "static_rps": lv.static_rps, "static_binding": lv.static_binding,
                          "replan": None if lv.replan is None else point_json(lv.replan),
                          "ttft": None if lv.ttft is None else fleet_timing_json(lv.ttft)} for lv in levels]
                  for link, levels in r.links},
    }


def fleet_degrade_csv_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`degrade` of several models as CSV: one row per link and level, held and re-planned."""
    return [{"link": link, "level": lv["level"], "usable_gbps": lv["usable_gbps"], "static_rps": lv["static_rps"],
             "static_binding": lv["static_binding"],
             "replan_rps": lv["replan"]["lambda_max_rps"] if lv["replan"] else 0.0}
            for link, levels in payload["links"].items() for lv in levels]


def fleet_size_json(r: FleetSizingResult) -> dict[str, Any]:
    return {
        "scenario": r.scenario, "demand_rps": r.demand_rps, "headroom": r.headroom,
        "prefill": {"hardware": r.prefill_hardware, "gpus_per_instance": r.prefill_gpus_per_instance,
                    "instances": r.n_prfaas},
        "sites": {s.site: {"hardware": s.hardware, "gpus_per_instance": s.gpus_per_instance, "instances": s.instances,
                           "link_tier_gbps": None if s.link_tier_bytes_per_s is None
                           else units.bytes_per_s_to_gbps(s.link_tier_bytes_per_s),
                           "link_price_per_hour": s.link_price_per_hour} for s in r.sites},
        "entries": fleet_size_rows(r),
        "asked_headroom": r.asked_headroom,
        "ttft": [{"model": label, "statistic": stat, "ttft_s": v, "bound_s": bound}
                 for label, stat, v, bound in r.ttft],
        "cost": {"per_hour": r.per_hour, "gpus_per_hour": r.gpus_per_hour, "links_per_hour": r.links_per_hour,
                 "egress_per_hour": r.egress_per_hour, "per_million_requests": r.per_million_requests},
        "baselines": {"separate_per_hour": r.separate_per_hour, "homogeneous_per_hour": r.homogeneous_per_hour},
    }


def fleet_size_rows(r: FleetSizingResult) -> list[dict[str, Any]]:
    """Each model at each site as bought (the JSON's ``entries`` and the CSV)."""
    return [{"model": e.model, "site": e.site, "demand_rps": e.demand_rps, "threshold_tokens": e.threshold_tokens,
             "p_offload": e.p_offload, "n_p": e.n_p, "n_d": e.n_d, "n_prfaas": e.n_prfaas,
             "egress_gbps": units.bytes_per_s_to_gbps(e.egress_bytes_per_s)} for e in r.entries]
