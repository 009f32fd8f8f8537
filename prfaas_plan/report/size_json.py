"""`size` results as JSON (complete, stable keys; SI units, bandwidth also in Gbps)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.specs.sizing import SizedPlan, SizedSite, SizingResult


def _gbps(x: float | None) -> float | None:
    return None if x is None else units.bytes_per_s_to_gbps(x)


def _site(s: SizedSite) -> dict[str, Any]:
    return {"hardware": s.hardware, "gpus_per_instance": s.gpus_per_instance, "instances": s.n_p + s.n_d,
            "n_p": s.n_p, "n_d": s.n_d, "gpus": s.gpus, "price_per_gpu_hour": s.price_per_gpu_hour,
            "demand_share": s.demand_share, "demand_rps": s.demand_rps, "threshold_tokens": s.threshold_tokens,
            "p_offload": s.p_offload, "decode_source": s.decode_source,
            "link": {"name": s.link, "tier": s.link_tier, "bandwidth_gbps": _gbps(s.link_bandwidth_bytes_per_s),
                     "usable_gbps": _gbps(s.link_usable_bytes_per_s), "price_per_hour": s.link_price_per_hour},
            "egress_bytes_per_s": s.egress_bytes_per_s, "egress_gbps": _gbps(s.egress_bytes_per_s),
            "egress_price_per_hour": s.egress_price_per_hour, "gpu_price_per_hour": s.gpu_price_per_hour,
            "utilization": dict(s.utilization)}


def plan_json(p: SizedPlan | None) -> dict[str, Any] | None:
    if p is None:
        return None
    c = p.cost
    prefill = None if not p.n_prfaas else {
        "hardware": p.prefill_hardware, "gpus_per_instance": p.prefill_gpus_per_instance, "instances": p.n_prfaas,
        "gpus": p.n_prfaas * (p.prefill_gpus_per_instance or 0), "price_per_gpu_hour": p.prefill_price_per_gpu_hour,
        "utilization": p.prfaas_utilization}
    return {"kind": p.kind, "demand_rps": p.demand_rps, "headroom": p.headroom, "gpus": p.gpus,
            "cost": {"per_hour": c.per_hour, "gpus_per_hour": c.gpus_per_hour, "links_per_hour": c.links_per_hour,
                     "egress_per_hour": c.egress_per_hour, "per_million_requests": c.per_million_requests,
                     "per_million_output_tokens": c.per_million_output_tokens},
            "prefill_service": prefill, "sites": {s.site: _site(s) for s in p.sites}, "tightest": p.tightest}


def saving_fraction(best: SizedPlan, other: SizedPlan) -> float | None:
    """The fraction of ``other``'s cost the plan saves (None: ``other`` costs nothing)."""
    d = other.cost.per_hour - best.cost.per_hour
    return d / other.cost.per_hour if other.cost.per_hour > 0 else None


def saving(best: SizedPlan, other: SizedPlan | None) -> dict[str, Any] | None:
    """What the plan saves against ``other``: dollars per hour and the fraction of ``other``'s cost."""
    if other is None:
        return None
    return {"per_hour": other.cost.per_hour - best.cost.per_hour, "fraction": saving_fraction(best, other)}


def size_json(r: SizingResult) -> dict[str, Any]:
    best, hom = r.best, r.best_homogeneous
    return {
        "scenario": r.scenario, "model": r.model, "method": r.method, "demand_rps": r.demand_rps,
        "demand_source": r.demand_source or "sizing.demand",
        "headroom": r.headroom, "target_rps": r.demand_rps / r.headroom,
        "ttft": None if r.ttft_bound_s is None else {"statistic": r.ttft_statistic, "bound_s": r.ttft_bound_s,
                                                     "value_s": r.ttft_s},
        "best": plan_json(best),
        "cost_interval": None if r.interval is None else {
            "per_hour_p10": r.interval.per_hour_p10, "per_hour_p90": r.interval.per_hour_p90,
            "per_million_requests_p10": r.interval.per_million_p10,
            "per_million_requests_p90": r.interval.per_million_p90,
            "prefill_band": list(r.interval.prefill_band) if r.interval.prefill_band else None,
            "decode_band": list(r.interval.decode_band) if r.interval.decode_band else None,
            "stack": r.interval.stack},
        "homogeneous": {name: plan_json(p) if p else {"infeasible": why} for name, p, why in r.homogeneous},
        "naive_heterogeneous": plan_json(r.naive),
        "savings": {"vs_best_homogeneous": None if hom is None else {
                        "hardware": hom.sites[0].hardware, **(saving(best, hom) or {})},
                    "vs_naive_heterogeneous": saving(best, r.naive)},
        "link_tiers": [{"tier": t.tier, "bandwidth_gbps": units.bytes_per_s_to_gbps(t.bandwidth_bytes_per_s),
                        "price_per_hour": t.price_per_hour, "plan": plan_json(t.plan),
                        "extra_cost_per_hour": None if t.plan is None else t.plan.cost.per_hour - best.cost.per_hour,
                        "extra_gpus": None if t.plan is None else t.plan.gpus - best.gpus,
                        "offloads": None if t.plan is None else t.plan.offloads,
                        "beats_homogeneous": None if t.plan is None or hom is None
                        else t.plan.cost.per_hour < hom.cost.per_hour, "infeasible": t.why} for t in r.tiers],
        "demand_curve": [{"factor": d.factor, "demand_rps": d.demand_rps,
                          "prfaas_per_hour": None if d.prfaas is None else d.prfaas.cost.per_hour,
                          "prfaas_offloads": None if d.prfaas is None else d.prfaas.offloads,
                          "homogeneous_per_hour": None if d.homogeneous is None else d.homogeneous.cost.per_hour,
                          "homogeneous_hardware": None if d.homogeneous is None else d.homogeneous.sites[0].hardware,
                          "infeasible": d.why} for d in r.demand_curve],
        "ttft_frontier": [{"bound_s": t.bound_s, "ttft_s": t.ttft_s,
                           "per_hour": None if t.plan is None else t.plan.cost.per_hour,
                           "gpus": None if t.plan is None else t.plan.gpus, "infeasible": t.why}
                          for t in r.ttft_frontier],
        "candidates": r.candidates, "search_s": r.search_s,
    }


def size_csv_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`size`'s CSV: one row per PD site of the cheapest plan, with its link's tier and the plan's $/h."""
    return [{"site": name, **{k: v for k, v in s.items() if not isinstance(v, dict)},
             "link_tier": s["link"]["tier"], "link_bandwidth_gbps": s["link"]["bandwidth_gbps"],
             "plan_per_hour": payload["best"]["cost"]["per_hour"]}
            for name, s in payload["best"]["sites"].items()]
