"""One PD site's plan by the exhaustive grid of ``core.optimize`` (every (t, N_p, N_prfaas)
candidate's Eqs. 3-6, Eq. 7's refinement, the runners-up), its baselines at their own best
splits, and the decode rate staged at the plan's own threshold (``api.staging``)."""

from __future__ import annotations

import time
from dataclasses import replace

from prfaas_plan.api import staging
from prfaas_plan.api.laws import Timing, cost_per_million, sum_price, timing
from prfaas_plan.core.optimize import Search, Space, offload_all_threshold, search
from prfaas_plan.core.throughput import Method, OperatingPoint, operating_point, routing
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.decode import DecodeDetail
from prfaas_plan.specs.results import (
    GridPlan,
    HomogeneousBaseline,
    MethodPlan,
    NaiveBaseline,
    Priced,
    Ratios,
    SiteHomogeneous,
    TopologyHomogeneous,
    site_point,
)
from prfaas_plan.specs.scenario import ClusterSpec, ScenarioSpec


def homogeneous_splits(sc: ScenarioSpec, cluster: ClusterSpec, method: Method) -> tuple[Timing, list[OperatingPoint]]:
    """Homogeneous PD, every request prefilled locally at its full length: each integer split N_p / N_d."""
    t = timing(sc, cluster.instance, homogeneous=True)
    r = routing(sc.workload.lengths, t.curves, [sc.workload.lengths.hi], method)
    return t, [operating_point(r, 0, n_prfaas=0, n_p=n_p, n_d=cluster.instances - n_p, link_bytes_per_s=1.0,
                               decode_rps_per_instance=t.decode_rps_per_instance)
               for n_p in range(1, cluster.instances)]


def homogeneous(sc: ScenarioSpec, cluster: ClusterSpec, method: Method) -> HomogeneousBaseline:
    """Homogeneous PD at its best split."""
    best = max(homogeneous_splits(sc, cluster, method)[1], key=lambda op: op.lambda_max_rps)
    return HomogeneousBaseline(hardware=cluster.instance.gpu.name, gpus=cluster.gpus, instances=cluster.instances,
                               point=best, cost=Priced(price_per_hour=cluster.price_per_hour,
                                                       cost_per_million_requests=cost_per_million(cluster.price_per_hour,
                                                                                       best.lambda_max_rps)))


def naive(sc: ScenarioSpec, t: Timing, method: Method) -> NaiveBaseline:
    """Naive heterogeneous PD: all prefill on the PrfaaS cluster, all local instances decode."""
    r = routing(sc.workload.lengths, t.curves, [offload_all_threshold(sc.workload.lengths)], method)
    op = operating_point(r, 0, n_prfaas=sc.prfaas.instances, n_p=0, n_d=sc.local.instances,
                         link_bytes_per_s=sc.link.usable_bytes_per_s, decode_rps_per_instance=t.decode_rps_per_instance)
    price = sum_price(sc.prfaas.price_per_hour, sc.local.price_per_hour)
    return NaiveBaseline(point=op, cost=Priced(price_per_hour=price,
                                               cost_per_million_requests=cost_per_million(price, op.lambda_max_rps)))


def staged_search(sc: ScenarioSpec, t: Timing, space: Space, m: Method) -> tuple[Search, Timing, DecodeDetail]:
    """The search at the decode rate with staging at its own threshold (``api.staging``'s fixed
    point), the timing with that rate and the plan's decode dict."""

    def solve(rates: tuple[float, ...]) -> Search:
        return search(sc.workload.lengths, t.curves, space, method=m, link_bytes_per_s=sc.link.usable_bytes_per_s,
                      decode_rps_per_instance=rates[0], top=sc.search.top)

    def own(res: Search) -> tuple[float, ...]:
        return (staging.rate(t, staging.site_staging(t, sc, res.best.threshold_tokens, m)),)

    rounds = staging.fixed_point(solve, own, (t.decode_rps_per_instance,))
    res, rate = rounds[-1][0], rounds[-1][1][0]
    if not staging.converged(rounds):  # each round's best at its own staged rate; the highest
        res, rate = max(((_at_rate(sc, t, r, m, mine[0]), mine[0]) for r, _, mine in rounds),
                        key=lambda x: x[0].best.lambda_max_rps)
    b = res.best
    st = staging.site_staging(t, sc, b.threshold_tokens, m)
    decode = staging.detail(t, sc, st, lambda_rps=b.lambda_max_rps, p_offload=b.p_offload, n_d=b.n_d,
                            rounds=len(rounds))
    return res, replace(t, decode_rps_per_instance=rate), decode


def _at_rate(sc: ScenarioSpec, t: Timing, res: Search, m: Method, rate: float) -> Search:
    """``res`` with its best configuration evaluated at decode rate ``rate``."""
    b = res.best
    r = routing(sc.workload.lengths, t.curves, [b.threshold_tokens], m)
    best = operating_point(r, 0, n_prfaas=b.n_prfaas, n_p=b.n_p, n_d=b.n_d, link_bytes_per_s=sc.link.usable_bytes_per_s,
                           decode_rps_per_instance=rate)
    return replace(res, best=best, top=(best, *res.top[1:]), refined=False)


def naive_timing(sc: ScenarioSpec, t: Timing, m: Method) -> Timing:
    """``t`` with the decode rate staged at naive heterogeneous PD's threshold (every request offloaded)."""
    st = staging.site_staging(t, sc, offload_all_threshold(sc.workload.lengths), m)
    return replace(t, decode_rps_per_instance=staging.rate(t, st))


def _ratios(best: OperatingPoint, price: float | None, hom: HomogeneousBaseline | None,
            nv: NaiveBaseline | None) -> Ratios:
    if hom is None:
        return Ratios()
    h = hom.point.lambda_max_rps
    equal_cost = (best.lambda_max_rps / price) / (h / hom.cost.price_per_hour) \
        if price and hom.cost.price_per_hour else None
    return Ratios(prfaas_vs_homogeneous=best.lambda_max_rps / h,
                  naive_vs_homogeneous=nv.point.lambda_max_rps / h if nv else None,
                  prfaas_vs_homogeneous_equal_cost=equal_cost)


def grid_method(sc: ScenarioSpec, t: Timing, space: Space, m: Method) -> tuple[MethodPlan, Search, Timing]:
    """The plan of a scenario of one PD site under method ``m``: the method's plan, its search and
    the timing with the decode rate staged at its threshold."""
    t0 = time.perf_counter()
    res, staged, decode = staged_search(sc, t, space, m)
    elapsed = time.perf_counter() - t0
    if res.best.lambda_max_rps <= 0:
        raise InfeasibleError(f"no configuration serves any load; binding: {res.best.binding}",
                              binding=str(res.best.binding))
    site, link = sc.topology.sites[0].name, sc.topology.links[0].name
    price = sum_price(sc.prfaas.price_for(res.best.n_prfaas), sc.local.price_per_hour)
    hom = homogeneous(sc, sc.homogeneous, m) if sc.homogeneous else None
    nv = naive(sc, naive_timing(sc, t, m), m) if sc.naive_heterogeneous else None
    return MethodPlan(
        method=str(m), best=site_point(res.best, site, link),
        cost=Priced(price_per_hour=price, cost_per_million_requests=cost_per_million(price, res.best.lambda_max_rps)),
        homogeneous=None if hom is None else TopologyHomogeneous(
            lambda_max_rps=hom.point.lambda_max_rps, cost=hom.cost,
            sites=(SiteHomogeneous(site=site, demand_share=1.0, baseline=hom),)),
        independent=None, naive=None if nv is None else site_point(nv.point, site, link),
        naive_cost=None if nv is None else nv.cost, ratios=_ratios(res.best, price, hom, nv),
        refined_threshold=res.refined, evaluations=res.evaluations, search_s=elapsed, decode={site: decode},
        grid=GridPlan(best=res.best, top=res.top, homogeneous=hom, naive=nv)), res, staged
