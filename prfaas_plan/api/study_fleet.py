"""A study point of a scenario of several models (``models:``): its row read from the typed results
of ``api.fleet`` (optimize), ``api.fleet_size`` (size), ``api.fleet_latency`` (latency) and
``api.fleet_sim`` (simulate), in the
columns of ``api.study_rows``. Per-model figures go in ``splits`` as text."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import finite
from prfaas_plan.specs.fleet import FleetSpec


def _splits(entries: Any) -> str:
    return "; ".join(f"{e.label} t={'-' if e.threshold_tokens is None else units.format_threshold(e.threshold_tokens)}"
                     f" N_p/N_d={e.n_p}/{e.n_d} N_prfaas={e.n_prfaas}" for e in entries)


def optimize_row(fs: FleetSpec) -> dict[str, Any]:
    from prfaas_plan.api.fleet import plan

    r = plan(fs, methods=(fs.models[0].scenario.search.method,))
    m = r.methods[r.method]
    b = m.best
    return {"lambda_max_rps": b.lambda_max_rps, "n_prfaas": b.n_prfaas, "binding": b.binding,
            "link_utilization": max(lk.utilization for lk in b.links),
            "egress_gbps": units.bytes_per_s_to_gbps(sum(lk.egress_bytes_per_s for lk in b.links)),
            "price_per_hour": m.cost.price_per_hour, "cost_per_million_requests": m.cost.cost_per_million_requests,
            "homogeneous_lambda_max_rps": m.homogeneous.lambda_max_rps if m.homogeneous else None,
            "prfaas_vs_homogeneous": m.ratios.shared_vs_homogeneous, "splits": _splits(b.entries)}


def size_row(fs: FleetSpec) -> dict[str, Any]:
    from prfaas_plan.api.fleet_size import size

    r = size(fs)
    gpus = r.n_prfaas * (r.prefill_gpus_per_instance or 0) + sum(s.instances * s.gpus_per_instance for s in r.sites)
    hom = r.homogeneous_per_hour
    return {"demand_rps": r.demand_rps, "kind": "prfaas", "cost_per_hour": r.per_hour, "gpus": gpus,
            "prefill_hardware": r.prefill_hardware, "prefill_instances": r.n_prfaas,
            "homogeneous_cost_per_hour": hom, "saving_vs_homogeneous": 1 - r.per_hour / hom if hom else None,
            "splits": "; ".join(f"{e.model}@{e.site} t={units.format_threshold(e.threshold_tokens)} "
                                f"N_p/N_d={e.n_p}/{e.n_d} N_prfaas={e.n_prfaas}" for e in r.entries)}



def simulate_row(fs: FleetSpec, args: Any) -> dict[str, Any]:
    from prfaas_plan.api.fleet_sim import SHARED, simulate

    r = simulate(fs, **args.keywords())
    run = r.systems[SHARED]
    res = run.result
    links = [v for k, v in res.stage_utilization.items() if k.startswith("link ") and v is not None]
    h = res.ttft
    return {"rate_rps": r.rate_rps, "load": run.load, "ttft_mean_s": finite(h.mean),
            "ttft_p50_s": finite(h.quantile(0.5)), "ttft_p90_s": finite(h.quantile(0.9)),
            "ttft_p99_s": finite(h.quantile(0.99)), "link_utilization": max(links) if links else None,
            "throughput_rps": res.throughput_rps, "completed": res.completed}


def latency_row(fs: FleetSpec, args: Any) -> dict[str, Any]:
    from prfaas_plan.api.fleet_latency import latency

    r = latency(fs, rate_rps=args.rate_rps, load=args.load)
    t = r.systems["prfaas"]
    return {"rate_rps": r.rate_rps, "load": t.load, "ttft_mean_s": t.ttft_mean_s, "ttft_p50_s": t.ttft_p50_s,
            "ttft_p90_s": t.ttft_p90_s, "ttft_p99_s": t.ttft_p99_s,
            "link_utilization": max(t.links.values()) if t.links else None, "capacity_rps": t.capacity_rps,
            "stable": t.stable}


def row(command: str, fs: FleetSpec, args: Any) -> dict[str, Any]:
    if command == "optimize":
        return optimize_row(fs)
    if command == "size":
        return size_row(fs)
    if command == "latency":
        return latency_row(fs, args)
    return simulate_row(fs, args)
