"""The parts the JSON of `optimize` is written from (``report.plan_json``) that other writers share:
a point, a baseline, the sites and links of a plan, decode, the TTFT SLO, the interval, the
planned rate and robustness."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from prfaas_plan import units
from prfaas_plan.specs.decode import DecodeDetail
from prfaas_plan.specs.results import (
    HomogeneousBaseline,
    LambdaInterval,
    NaiveBaseline,
    OperatingPoint,
    Ratios,
    TopologyPoint,
)
from prfaas_plan.specs.robust import RateLevel, Robustness
from prfaas_plan.specs.slo import SloPlan, SloSystem


def prfaas_limited_by(op: OperatingPoint) -> str | None:
    """Which half of Eq. 3 limits the offload path, whatever binds Lambda overall."""
    c, lk = op.theta_prfaas_compute_rps, op.theta_prfaas_link_rps
    return None if c is None or lk is None else ("link" if lk < c else "prfaas-compute")


def point_json(op: OperatingPoint) -> dict[str, Any]:
    d = asdict(op)
    d["binding"] = str(op.binding)
    d["tight"] = [str(b) for b in op.tight]
    d["egress_gbps"] = units.bytes_per_s_to_gbps(op.egress_bytes_per_s)
    d["prfaas_limited_by"] = prfaas_limited_by(op)
    return d


def homogeneous_json(h: HomogeneousBaseline) -> dict[str, Any]:
    b = h.point
    return {"hardware": h.hardware, "gpus": h.gpus, "instances": h.instances, "n_p": b.n_p, "n_d": b.n_d,
            "theta_pd_p_rps": b.theta_pd_p_rps, "theta_pd_d_rps": b.theta_pd_d_rps,
            "lambda_max_rps": b.lambda_max_rps, "binding": str(b.binding), "price_per_hour": h.cost.price_per_hour,
            "cost_per_million_requests": h.cost.cost_per_million_requests}


def naive_json(n: NaiveBaseline) -> dict[str, Any]:
    op = n.point
    return {"n_prfaas": op.n_prfaas, "n_d": op.n_d, "theta_prfaas_rps": op.theta_prfaas_rps,
            "theta_pd_d_rps": op.theta_pd_d_rps, "lambda_max_rps": op.lambda_max_rps, "binding": str(op.binding),
            "egress_gbps": units.bytes_per_s_to_gbps(op.egress_bytes_per_s), "price_per_hour": n.cost.price_per_hour,
            "cost_per_million_requests": n.cost.cost_per_million_requests}


def ratios_json(r: Ratios) -> dict[str, float]:
    """The ratios that exist (homogeneous PD defined; prices known for the equal-cost one; one PD
    site has no independent planning)."""
    return {k: v for k, v in asdict(r).items() if v is not None}


def sites_json(prefill_site: str, p: TopologyPoint) -> dict[str, Any]:
    """A plan's ``sites``: the prefill site's pool and each PD site's t, split and rates, by name."""
    out: dict[str, Any] = {prefill_site: {"role": "prfaas", "instances": p.n_prfaas,
                                          "utilization": p.prfaas_utilization}}
    for sp in p.sites:
        out[sp.site] = {"role": "pd", "threshold_tokens": sp.threshold_tokens, "n_p": sp.n_p, "n_d": sp.n_d,
                        "p_offload": sp.p_offload, "lambda_rps": sp.lambda_rps, "demand_share": sp.demand_share,
                        "theta_pd_p_rps": sp.theta_pd_p_rps, "theta_pd_d_rps": sp.theta_pd_d_rps,
                        "prfaas_instances_busy": sp.prfaas_seconds_per_s}
    return out


def links_json(p: TopologyPoint, usable_bytes_per_s: Sequence[float]) -> dict[str, Any]:
    """A plan's ``links``: each PD site's link by name (``usable_bytes_per_s`` in the sites' order)."""
    return {sp.link: {"egress_gbps": units.bytes_per_s_to_gbps(sp.egress_bytes_per_s),
                      "utilization": sp.link_utilization, "theta_link_rps": sp.theta_link_rps,
                      "usable_gbps": units.bytes_per_s_to_gbps(usable)}
            for sp, usable in zip(p.sites, usable_bytes_per_s, strict=True)}


def slo_point_json(p: SloSystem | None) -> dict[str, Any] | None:
    """One system under the SLO, one PD site's layout: its configuration, rate and TTFT."""
    if p is None:
        return None
    s = p.sites[0]
    return {"threshold_tokens": s.threshold_tokens, "n_prfaas": p.n_prfaas, "n_p": s.n_p, "n_d": s.n_d,
            "lambda_ttft_rps": p.lambda_ttft_rps, "capacity_rps": p.capacity_rps, "load": p.load, "binding": p.binding,
            "ttft_mean_s": s.ttft_mean_s, "ttft_p90_s": s.ttft_p90_s, "ttft_p99_s": s.ttft_p99_s,
            "ttft_at_rate_s": p.ttft_at_rate_s}


def slo_json(s: SloPlan) -> dict[str, Any]:
    """``ttft_slo`` of one PD site: each system under the SLO and the gain over homogeneous PD."""
    return {"bound_s": s.bound_s, "statistic": s.statistic, "prfaas": slo_point_json(s.prfaas),
            "homogeneous": slo_point_json(s.homogeneous), "naive_heterogeneous": slo_point_json(s.naive_heterogeneous),
            "ratios": {"prfaas_vs_homogeneous": s.prfaas_vs_homogeneous}, "search_s": s.search_s}


def decode_json(d: DecodeDetail) -> dict[str, Any]:
    """A plan's ``decode``: the shape (pinned or derived), the rate with staging and its detail."""
    s = d.shape
    out: dict[str, Any] = {"mode": s.mode, "bs_max": d.bs_max, "t_decode_s": s.t_decode_s}
    if s.derived:
        out |= {"context_tokens": s.context_tokens, "bound_by": s.bound_by, "bs_slo": s.bs_slo,
                "bs_memory": s.bs_memory}
    out |= {"rps_per_instance": d.rps_per_instance, "staging_s": d.staging_s,
            "staged_requests_per_instance": d.staged_requests_per_instance, "staging_rounds": d.staging_rounds}
    if d.staging_binds is not None:  # derived: the slots staging takes
        return out | {"staged_slot_weight": d.staged_slot_weight,
                      "rps_per_instance_unstaged": d.rps_per_instance_unstaged, "bs_max_unstaged": s.bs_max,
                      "bs_max_lost": d.bs_max_lost, "staging_binds": d.staging_binds}
    return out | {"bs_memory": d.bs_memory, "memory_headroom": d.memory_headroom,
                  "staging_exceeds_headroom": d.staging_exceeds_headroom}


def interval_json(iv: LambdaInterval) -> dict[str, Any]:
    """The "lambda_interval" key of `optimize`: Lambda_max and $ per 1M requests at the stack's P10-P90."""
    return {"lambda_max_rps_p10": iv.lambda_p10_rps, "lambda_max_rps_p90": iv.lambda_p90_rps,
            "cost_per_million_requests_p10": iv.cost_per_million_p10,
            "cost_per_million_requests_p90": iv.cost_per_million_p90,
            "prefill_band": list(iv.prefill_band) if iv.prefill_band else None,
            "decode_band": list(iv.decode_band) if iv.decode_band else None,
            "dominant": iv.dominant, "binding_p10": iv.binding_p10, "binding_p90": iv.binding_p90}


def planned_rate_json(lv: RateLevel) -> dict[str, Any]:
    """The "planned_rate" key of `optimize` (--plan-at rate=pNN): the trace's window planned for."""
    return {"percentile": lv.label, "rate_rps": lv.rate_rps, "factor_of_mean": lv.factor, "mean_rps": lv.mean_rps,
            "windows": lv.windows, "window_s": lv.bin_s}


def robustness_json(rb: Robustness) -> dict[str, Any]:
    """The "robustness" key of `optimize` (one PD site or a topology): each plan held across the
    bandwidth's law."""
    def gbps(b: float) -> float:
        return units.bytes_per_s_to_gbps(b)

    links = {lk.link: {"kind": lk.kind, "source": lk.source or None, "samples": lk.samples,
                       **{f"{k}_gbps": gbps(v) for k, v in lk.percentiles_bytes_per_s.items()},
                       **{f"{k}_usable_gbps": gbps(v) for k, v in lk.usable_bytes_per_s.items()},
                       "mean_gbps": gbps(lk.mean_bytes_per_s), "down_fraction": lk.down_fraction}
             for lk in rb.links}
    plans = {p.name: {"planned_at": p.planned_at, "headline": p.headline, "n_prfaas": p.n_prfaas,
                      "sites": {s.site: {"threshold_tokens": s.threshold_tokens, "n_p": s.n_p, "n_d": s.n_d,
                                         "p_offload": s.p_offload} for s in p.sites},
                      "lambda_max_rps": {a.percentile: a.lambda_max_rps for a in p.at},
                      "binding": {a.percentile: a.binding for a in p.at},
                      "expected_served_rps": p.expected_served_rps, "served_fraction": p.served_fraction,
                      "fits_fraction": p.fits_fraction} for p in rb.plans}
    return {"rate_rps": rb.rate_rps, "rate_source": rb.rate_source, "percentiles": list(rb.percentiles),
            "comonotone": rb.comonotone, "plan_at": rb.plan_at, "states": rb.states, "links": links, "plans": plans,
            "notes": list(rb.notes)}
