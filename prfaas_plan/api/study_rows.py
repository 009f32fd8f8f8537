"""One study point's headline figures, per command: the columns of its row and how to fill them.

Each command's row holds what it reports first (``optimize``: Lambda_max, t, the split, what binds,
cost, the gain over homogeneous PD; ``size``: the cheapest fleet's cost and saving; ``latency`` /
``simulate``: TTFT quantiles and link utilisation) in typed columns, read from its typed result
(``size``'s still from its JSON, ``report.size_json``). A topology's per-site figures go in
``splits`` as text ("region-a t=1,024 N_p/N_d=3/5; ...").
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prfaas_plan import units
from prfaas_plan.api.context import planning
from prfaas_plan.report.render import finite
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
    """``size``'s headline: the cheapest fleet, its cost and what it saves on the cheapest homogeneous PD."""
    from prfaas_plan.api.size import size

    r = size(sc)
    b, hom = r.best, r.best_homogeneous
    cheapest = min(((name, p) for name, p, _ in r.homogeneous if p is not None),
                   key=lambda x: x[1].cost.per_hour, default=None)
    saving = (None if hom is None or hom.cost.per_hour <= 0
              else (hom.cost.per_hour - b.cost.per_hour) / hom.cost.per_hour)
    return {"demand_rps": r.demand_rps, "kind": b.kind, "cost_per_hour": b.cost.per_hour, "gpus": b.gpus,
            "prefill_hardware": b.prefill_hardware if b.n_prfaas else None,
            "prefill_instances": b.n_prfaas if b.n_prfaas else None, "tightest": b.tightest,
            "homogeneous_hardware": None if cheapest is None else cheapest[0],
            "homogeneous_cost_per_hour": None if cheapest is None else cheapest[1].cost.per_hour,
            "saving_vs_homogeneous": saving,
            "splits": "; ".join(f"{s.site} {s.n_p + s.n_d}x{s.gpus_per_instance}x{s.hardware} "
                                f"N_p/N_d={s.n_p}/{s.n_d}" for s in b.sites)}


def run_args(options: dict[str, Any]) -> Any:
    """The command options as ``specs.run`` reads them from a command line (numbers as their text)."""
    from prfaas_plan.specs.run import parse

    def text(k: str) -> str | None:
        v = options.get(k)
        return None if v is None else str(v)

    return parse(rate=text("rate"), load=text("load"), requests=text("requests"), duration=text("duration"),
                 seed=text("seed"))


def latency_row(sc: ScenarioSpec, options: dict[str, Any]) -> dict[str, Any]:
    """`latency`'s headline, one PD site or several alike: PrfaaS-PD's analytic TTFT at the shared rate,
    its link utilisation (a topology's busiest link, as optimize's row), and homogeneous PD's P90."""
    from prfaas_plan.api import latency
    from prfaas_plan.api.systems import HOMOGENEOUS, PRFAAS

    args = run_args(options)
    r = latency.latency(sc, rate_rps=args.rate_rps, load=args.load)
    sites = r.systems[PRFAAS].sites.values()
    t, hom = r.systems[PRFAAS], r.systems.get(HOMOGENEOUS)
    # as `latency` reports them: an unstable site has no link utilisation (its queues grow without bound)
    links = [s.link_utilization for s in sites if s.stable]
    return {"rate_rps": r.rate_rps, "load": r.load, "ttft_mean_s": t.ttft_mean_s, "ttft_p50_s": t.ttft_p50_s,
            "ttft_p90_s": t.ttft_p90_s, "ttft_p99_s": t.ttft_p99_s, "link_utilization": _busiest(links),
            "capacity_rps": t.capacity_rps, "stable": t.stable,
            "homogeneous_ttft_p90_s": None if hom is None else hom.ttft_p90_s}


def simulate_row(sc: ScenarioSpec, options: dict[str, Any]) -> dict[str, Any]:
    """`simulate`'s headline, one PD site or several alike: PrfaaS-PD's simulated TTFT, throughput and
    link utilisation (a topology's busiest link), and homogeneous PD's simulated P90."""
    from prfaas_plan.api import sim
    from prfaas_plan.api.systems import HOMOGENEOUS, PRFAAS

    args = run_args(options)
    r = sim.simulate(sc, **args.keywords())
    links = [s.link_utilization for s in r.systems[PRFAAS].sites.values()]
    res, hom = r.systems[PRFAAS].result, r.systems.get(HOMOGENEOUS)
    h = res.ttft
    return {"rate_rps": r.rate_rps, "load": r.load, "ttft_mean_s": finite(h.mean),
            "ttft_p50_s": finite(h.quantile(0.5)), "ttft_p90_s": finite(h.quantile(0.9)),
            "ttft_p99_s": finite(h.quantile(0.99)), "link_utilization": _busiest(links),
            "throughput_rps": finite(res.throughput_rps), "completed": res.completed,
            "homogeneous_ttft_p90_s": None if hom is None else finite(hom.result.ttft.quantile(0.9))}


def _busiest(utilizations: Iterable[float | None]) -> float | None:
    """The highest of the links' utilisations that are known; None if none is."""
    known = [u for u in map(finite, utilizations) if u is not None]
    return max(known) if known else None


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
