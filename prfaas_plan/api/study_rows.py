"""One study point's headline figures, per command: the columns of its row and how to fill them.

Each command's row holds what its own JSON reports first (``optimize``: Lambda_max, t, the split,
what binds, cost, the gain over homogeneous PD; ``size``: the cheapest fleet's cost and saving;
``latency`` / ``simulate``: TTFT quantiles and link utilisation), flattened to typed columns.
A topology's per-site figures go in ``splits`` as text ("region-a t=1,024 N_p/N_d=3/5; ...").
"""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.api.context import planning
from prfaas_plan.specs.scenario import ScenarioSpec

Columns = list[tuple[str, str]]

OPTIMIZE: Columns = [
    ("lambda_max_rps", "float"), ("threshold_tokens", "float"), ("n_prfaas", "int"), ("n_p", "int"), ("n_d", "int"),
    ("p_offload", "float"), ("binding", "str"), ("link_utilization", "float"), ("egress_gbps", "float"),
    ("price_per_hour", "float"), ("cost_per_million_requests", "float"), ("homogeneous_lambda_max_rps", "float"),
    ("naive_lambda_max_rps", "float"), ("prfaas_vs_homogeneous", "float"),
    ("prfaas_vs_homogeneous_equal_cost", "float"), ("splits", "str")]
SIZE: Columns = [
    ("demand_rps", "float"), ("kind", "str"), ("cost_per_hour", "float"), ("gpus", "int"),
    ("prefill_hardware", "str"), ("prefill_instances", "int"), ("tightest", "str"),
    ("homogeneous_hardware", "str"), ("homogeneous_cost_per_hour", "float"), ("saving_vs_homogeneous", "float"),
    ("splits", "str")]
_TTFT: Columns = [("rate_rps", "float"), ("load", "float"), ("ttft_mean_s", "float"), ("ttft_p50_s", "float"),
                  ("ttft_p90_s", "float"), ("ttft_p99_s", "float"), ("link_utilization", "float")]
LATENCY: Columns = [*_TTFT, ("capacity_rps", "float"), ("stable", "bool"),
                    ("homogeneous_ttft_p90_s", "float")]
SIMULATE: Columns = [*_TTFT, ("throughput_rps", "float"), ("completed", "int"),
                     ("homogeneous_ttft_p90_s", "float")]
COLUMNS = {"optimize": OPTIMIZE, "size": SIZE, "latency": LATENCY, "simulate": SIMULATE}


def _pick(d: dict[str, Any] | None, cols: Columns) -> dict[str, Any]:
    return {} if not d else {k: d.get(k) for k, _ in cols if k in d}


def optimize_row(sc: ScenarioSpec) -> dict[str, Any]:
    """``optimize``'s headline under the scenario's method (the one it prints first), one PD site or
    several alike (``api.headline``): N_p and N_d summed over the PD sites, the share of all requests
    offloaded, the egress of every link, the busiest link's utilisation. A topology's threshold is
    one per site, so ``threshold_tokens`` stays empty and ``splits`` holds each with its site."""
    from prfaas_plan.api.headline import headline

    h = headline(sc)
    p, several = h.point, len(h.point.sites) > 1
    rate = sum(s.lambda_rps for s in p.sites)
    util = [s.link_utilization for s in p.sites if s.link_utilization is not None]
    return {"lambda_max_rps": p.lambda_max_rps, "threshold_tokens": None if several else p.sites[0].threshold_tokens,
            "n_prfaas": p.n_prfaas, "n_p": sum(s.n_p for s in p.sites), "n_d": sum(s.n_d for s in p.sites),
            "p_offload": sum(s.p_offload * s.lambda_rps for s in p.sites) / rate if rate > 0 else None,
            "binding": p.binding, "link_utilization": max(util) if util else None,
            "egress_gbps": sum(units.bytes_per_s_to_gbps(s.egress_bytes_per_s) for s in p.sites),
            "price_per_hour": h.cost.price_per_hour, "cost_per_million_requests": h.cost.cost_per_million_requests,
            "homogeneous_lambda_max_rps": h.homogeneous_lambda_max_rps, "naive_lambda_max_rps": h.naive_lambda_max_rps,
            "prfaas_vs_homogeneous": h.ratios.prfaas_vs_homogeneous,
            "prfaas_vs_homogeneous_equal_cost": h.ratios.prfaas_vs_homogeneous_equal_cost,
            "splits": "; ".join(f"{s.site + ' ' if several else ''}t={units.format_threshold(s.threshold_tokens)} "
                                f"N_p/N_d={s.n_p}/{s.n_d}" for s in p.sites)}


def size_row(sc: ScenarioSpec) -> dict[str, Any]:
    from prfaas_plan.api.size import size
    from prfaas_plan.report.size_json import size_json

    d = size_json(size(sc))
    b = d["best"]
    homs = {k: v for k, v in (d.get("homogeneous") or {}).items() if v}
    hk = min(homs, key=lambda k: homs[k]["cost"]["per_hour"]) if homs else None
    saving = (d.get("savings") or {}).get("vs_best_homogeneous")
    return {"demand_rps": d["demand_rps"], "kind": b["kind"], "cost_per_hour": b["cost"]["per_hour"],
            "gpus": b["gpus"], "prefill_hardware": (b.get("prefill_service") or {}).get("hardware"),
            "prefill_instances": (b.get("prefill_service") or {}).get("instances"), "tightest": b.get("tightest"),
            "homogeneous_hardware": hk, "homogeneous_cost_per_hour": homs[hk]["cost"]["per_hour"] if hk else None,
            "saving_vs_homogeneous": saving["fraction"] if saving else None,
            "splits": "; ".join(f"{n} {s['instances']}x{s['gpus_per_instance']}x{s['hardware']} "
                                f"N_p/N_d={s['n_p']}/{s['n_d']}" for n, s in b["sites"].items())}


def run_args(options: dict[str, Any]) -> Any:
    """The command options as ``specs.run`` reads them from a command line (numbers as their text)."""
    from prfaas_plan.specs.run import parse

    def text(k: str) -> str | None:
        v = options.get(k)
        return None if v is None else str(v)

    return parse(rate=text("rate"), load=text("load"), requests=text("requests"), duration=text("duration"),
                 seed=text("seed"))


def latency_row(sc: ScenarioSpec, options: dict[str, Any]) -> dict[str, Any]:
    from prfaas_plan.api import latency
    from prfaas_plan.report.latency_json import latency_json

    args = run_args(options)
    if sc.multi_site:
        from prfaas_plan.api import topology_systems
        from prfaas_plan.report.latency_json import topology_latency_json

        d = topology_latency_json(topology_systems.latency(sc, rate_rps=args.rate_rps, load=args.load))
    else:
        d = latency_json(latency.latency(sc, rate_rps=args.rate_rps, load=args.load))
    return _ttft(d, LATENCY)


def simulate_row(sc: ScenarioSpec, options: dict[str, Any]) -> dict[str, Any]:
    args = run_args(options)
    if sc.multi_site:
        from prfaas_plan.api import topology_sim
        from prfaas_plan.report.sim_json import topology_simulate_json

        d = topology_simulate_json(topology_sim.simulate(sc, **args.keywords()))
    else:
        from prfaas_plan.api import sim

        d = sim.run_systems(sc, **args.keywords()).payload
    return _ttft(d, SIMULATE)


def _ttft(d: dict[str, Any], cols: Columns) -> dict[str, Any]:
    systems = d.get("systems") or {}
    head = systems.get("prfaas") or d
    row = _pick(head, cols) | {k: d[k] for k in ("rate_rps", "load") if d.get(k) is not None}
    sites = [s for s in (head.get("sites") or {}).values() if isinstance(s, dict)]
    util = [s["link_utilization"] for s in sites if s.get("link_utilization") is not None]
    if row.get("link_utilization") is None and util:  # a topology: its busiest link, as optimize's row
        row["link_utilization"] = max(util)
    hom = systems.get("homogeneous")
    row["homogeneous_ttft_p90_s"] = hom.get("ttft_p90_s") if isinstance(hom, dict) else None
    return row


def row(command: str, sc: ScenarioSpec, options: dict[str, Any]) -> dict[str, Any]:
    """One point's figures, planned in a context of its own (a study's memory stays one point's)."""
    with planning(fresh=True):
        return _row(command, sc, options)


def _row(command: str, sc: ScenarioSpec, options: dict[str, Any]) -> dict[str, Any]:
    from prfaas_plan.specs.fleet import FleetSpec

    if isinstance(sc, FleetSpec):  # several models (models:)
        from prfaas_plan.api import study_fleet

        return study_fleet.row(command, sc, run_args(options))
    if command == "optimize":
        return optimize_row(sc)
    if command == "size":
        return size_row(sc)
    if command == "latency":
        return latency_row(sc, options)
    return simulate_row(sc, options)
