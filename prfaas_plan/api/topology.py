"""The joint plan of several PD sites sharing one prefill service (``core.joint``; ``api.plan`` is the entry).

The plan maximises the total Lambda jointly over every site's t_i and split and the shared
N_prfaas. Baselines: each site alone as homogeneous PD (its own instances plus its demand share
of the prefill GPUs, ``specs.topology.homogeneous_cluster``); *independent planning* (the prefill
service split between the sites in proportion to demand, fractional instances, each site
optimised alone); naive heterogeneous (every site offloads everything, N_p = 0). A baseline's
total Lambda is the largest rate every site serves its share of: min_i Lambda_i / s_i.

Each site's decode rate per instance is the staged one at the plan's own t_i (``api.staging``:
a fixed point over the joint search; independent planning's sites each at their own t, naive
heterogeneous at its offload-everything threshold, homogeneous PD unstaged: it offloads nothing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from prfaas_plan.api import staging
from prfaas_plan.api.context import remembered
from prfaas_plan.api.grid import homogeneous
from prfaas_plan.api.laws import Timing, cost_per_million, search_space, sum_price, timing
from prfaas_plan.core import joint
from prfaas_plan.core.stages import SiteModel, offload_all_threshold
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.decode import DecodeDetail
from prfaas_plan.specs.results import (
    Independent,
    MethodPlan,
    Pool,
    Priced,
    Ratios,
    SiteHomogeneous,
    SiteInfo,
    TopologyHomogeneous,
)
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.topology import homogeneous_cluster


def site_scenario(sc: ScenarioSpec, i: int) -> ScenarioSpec:
    """The scenario as PD site i sees it: the topology of that site alone with the prefill
    service and its link, and its workload (one object per site in a command, so that what is
    built for it is built once: ``api.context``). A scenario of one PD site is its site's."""
    topo = sc.topology
    if len(topo.sites) == 1:
        return sc
    return remembered("site", (sc,), (i,), lambda: replace(sc, topology=topo.site(i), workload=topo.sites[i].workload,
                                                           homogeneous=None))


def site_models(sc: ScenarioSpec) -> tuple[list[SiteModel], list[Timing]]:
    topo = sc.topology
    models, timings = [], []
    for i, (s, lk) in enumerate(zip(topo.sites, topo.links, strict=True)):
        si = site_scenario(sc, i)
        t = timing(si)
        models.append(SiteModel(name=s.name, link=lk.name, lengths=si.workload.lengths, curves=t.curves,
                                demand_share=s.demand_share, link_bytes_per_s=lk.link.usable_bytes_per_s,
                                decode_rps_per_instance=t.decode_rps_per_instance, n_local=s.cluster.instances))
        timings.append(t)
    return models, timings


RateAt = Callable[[int, float], float]  # (site index, t_i) -> the site's decode rate with staging at t_i


def rate_at(sc: ScenarioSpec, timings: Sequence[Timing], method: Method) -> RateAt:
    """Site i's decode rate per instance with staging at threshold t (``api.staging``)."""
    return lambda i, t: staging.rate(timings[i], staging.site_staging(timings[i], site_scenario(sc, i), t, method))


def with_rates(models: Sequence[SiteModel], rates: Sequence[float]) -> list[SiteModel]:
    return [replace(md, decode_rps_per_instance=r) for md, r in zip(models, rates, strict=True)]


def at_rates(models: Sequence[SiteModel], p: joint.TopologyPoint, rates: Sequence[float], method: Method
             ) -> joint.TopologyPoint:
    """Configuration ``p`` evaluated with the sites' decode rates ``rates``."""
    ms = with_rates(models, rates)
    return joint.point(ms, [joint.at(md, sp.threshold_tokens, sp.n_p, method) for md, sp in zip(ms, p.sites,
                                                                                                 strict=True)],
                       [0] * len(ms), p.n_prfaas)


def _alone(m: SiteModel, i: int, n_prfaas: float, thresholds: np.ndarray, method: Method,
           rates: RateAt | None) -> joint.TopologyPoint:
    def solve(r: tuple[float, ...]) -> joint.TopologyPoint:
        return joint.search([replace(m, decode_rps_per_instance=r[0])], thresholds,
                            np.array([m.demand_share * n_prfaas]), method=method).best

    if rates is None:
        return solve((m.decode_rps_per_instance,))
    rounds = staging.fixed_point(solve, lambda a: (rates(i, a.sites[0].threshold_tokens),),
                                 (m.decode_rps_per_instance,))
    if staging.converged(rounds):
        return rounds[-1][0]
    return max((at_rates([m], a, mine, method) for a, _, mine in rounds), key=lambda a: a.lambda_max_rps)


def independent(models: list[SiteModel], n_prfaas: float, thresholds: np.ndarray, method: Method,
                rates: RateAt | None = None) -> tuple[float, list[joint.TopologyPoint]]:
    """Each site alone with s_i x N_prfaas of the prefill service; the total is min_i Lambda_i.
    With ``rates``, each site's decode rate is the staged one at its own t (``api.staging``)."""
    alone = [_alone(m, i, n_prfaas, thresholds, method, rates) for i, m in enumerate(models)]
    return min(a.lambda_max_rps for a in alone), alone


def _homogeneous(sc: ScenarioSpec, method: Method) -> TopologyHomogeneous:
    topo = sc.topology
    per = tuple(SiteHomogeneous(site=s.name, demand_share=s.demand_share,
                                baseline=homogeneous(site_scenario(sc, i), homogeneous_cluster(s, topo), method))
                for i, s in enumerate(topo.sites))
    lam = min(h.baseline.point.lambda_max_rps / h.demand_share for h in per)
    price = sum_price(*(h.baseline.cost.price_per_hour for h in per))
    return TopologyHomogeneous(lambda_max_rps=lam, sites=per,
                               cost=Priced(price_per_hour=price,
                                           cost_per_million_requests=cost_per_million(price, lam)))


def _price(sc: ScenarioSpec, n_prfaas: float) -> float | None:
    topo = sc.topology
    return sum_price(topo.prefill.cluster.price_for(round(n_prfaas)),
                      *(s.cluster.price_per_hour for s in topo.sites))


def joint_plan(models: list[SiteModel], thresholds: np.ndarray, n_prfaas: np.ndarray, method: Method,
               rates: RateAt | None = None
               ) -> tuple[joint.JointSearch, joint.TopologyPoint, float, list[joint.TopologyPoint]]:
    """(the search, its best point, independent planning's Lambda and per-site points) at the
    search's N_prfaas. Independent planning's configuration is one the joint plan may take, so
    the joint plan takes it where it is higher (the two refinements may differ by round-off).
    ``rates``: independent planning's sites at their own staged decode rates (``independent``)."""
    res = joint.search(models, thresholds, n_prfaas, method=method)
    n = float(res.best.n_prfaas)
    ind_lam, alone = independent(models, n, thresholds, method, rates)
    together = joint.point(models, [joint.at(md, a.sites[0].threshold_tokens, a.sites[0].n_p, method)
                                    for md, a in zip(models, alone, strict=True)], [0] * len(models), n)
    best = together if together.lambda_max_rps > res.best.lambda_max_rps else res.best
    return res, best, ind_lam, alone


def _priced(price: float | None, lam: float) -> Priced:
    return Priced(price_per_hour=price, cost_per_million_requests=cost_per_million(price, lam))


def staged_joint_plan(sc: ScenarioSpec, models: list[SiteModel], timings: Sequence[Timing], m: Method
                      ) -> tuple[tuple[joint.JointSearch, joint.TopologyPoint, float, list[joint.TopologyPoint]],
                                 list[SiteModel], int]:
    """``joint_plan`` with every site's decode rate staged at the plan's own t_i (``api.staging``'s
    fixed point), the models with those rates and the rounds it took."""
    space = search_space(sc)
    rates = rate_at(sc, timings, m)

    def solve(r: tuple[float, ...]) -> tuple[Any, ...]:
        return joint_plan(with_rates(models, r), space.thresholds, space.n_prfaas, m, rates)

    def own(sol: tuple[Any, ...]) -> tuple[float, ...]:
        return tuple(rates(i, sp.threshold_tokens) for i, sp in enumerate(sol[1].sites))

    rounds = staging.fixed_point(solve, own, tuple(md.decode_rps_per_instance for md in models))
    if staging.converged(rounds):
        return rounds[-1][0], with_rates(models, rounds[-1][1]), len(rounds)
    # each round's best configuration at its own staged rates; the highest
    sol, mine = max(((replace_best(s, at_rates(models, s[1], r, m)), r) for s, _, r in rounds),
                    key=lambda x: x[0][1].lambda_max_rps)
    return sol, with_rates(models, mine), len(rounds)


def replace_best(sol: tuple[Any, ...], best: joint.TopologyPoint) -> tuple[Any, ...]:
    return (sol[0], best, *sol[2:])


def joint_method(sc: ScenarioSpec, models: list[SiteModel], timings: Sequence[Timing], m: Method
                 ) -> tuple[MethodPlan, joint.JointSearch, list[SiteModel]]:
    """The joint plan of several PD sites under method ``m`` with its baselines: the method's plan,
    its search and the site models with their decode rates staged at the plan's t_i."""
    topo = sc.topology
    t0 = time.perf_counter()
    (res, best, ind_lam, alone), staged, rounds = staged_joint_plan(sc, models, timings, m)
    n = float(best.n_prfaas)
    elapsed = time.perf_counter() - t0
    if best.lambda_max_rps <= 0:
        raise InfeasibleError(f"no configuration serves any load; binding: {best.binding}", binding=best.binding)
    price = _price(sc, n)
    rates = rate_at(sc, timings, m)
    naive_models = with_rates(models, [rates(i, offload_all_threshold(md.lengths)) for i, md in enumerate(models)])
    naive_p = joint.point(naive_models, res.candidates,
                          [int(np.flatnonzero(c.n_p == 0)[0]) for c in res.candidates],
                          float(topo.prefill.cluster.instances))
    hom = _homogeneous(sc, m)
    lam, h = best.lambda_max_rps, hom.lambda_max_rps
    equal_cost = (lam / price) / (h / hom.cost.price_per_hour) if price and hom.cost.price_per_hour and h > 0 else None
    ratios = Ratios(prfaas_vs_homogeneous=lam / h if h > 0 else None,
                            prfaas_vs_independent=lam / ind_lam if ind_lam > 0 else None,
                            naive_vs_homogeneous=naive_p.lambda_max_rps / h if h > 0 else None,
                            prfaas_vs_homogeneous_equal_cost=equal_cost)
    independent_plan = Independent(lambda_max_rps=ind_lam, cost=_priced(price, ind_lam),
                                   n_prfaas_per_site={md.name: md.demand_share * n for md in models},
                                   alone=tuple(alone))
    return MethodPlan(
        method=str(m), best=best, cost=_priced(price, lam), homogeneous=hom, independent=independent_plan,
        naive=naive_p, naive_cost=_priced(_price(sc, naive_p.n_prfaas), naive_p.lambda_max_rps), ratios=ratios,
        refined_threshold=res.refined, evaluations=res.evaluations, search_s=elapsed,
        decode=_decode(sc, timings, best, m, rounds)), res, staged


def _decode(sc: ScenarioSpec, timings: Sequence[Timing], best: joint.TopologyPoint, m: Method, rounds: int
            ) -> dict[str, DecodeDetail]:
    """Each site's decode dict at the plan (``api.staging.detail``)."""
    out = {}
    for i, (t, sp) in enumerate(zip(timings, best.sites, strict=True)):
        si = site_scenario(sc, i)
        st = staging.site_staging(t, si, sp.threshold_tokens, m)
        out[sp.site] = staging.detail(t, si, st, lambda_rps=sp.lambda_rps, p_offload=sp.p_offload, n_d=sp.n_d,
                                      rounds=rounds)
    return out


def site_info(sc: ScenarioSpec, i: int, decode: DecodeDetail) -> SiteInfo:
    """PD site i as planned: its pool, demand, workload summary, ``decode`` and link."""
    s, lk = sc.topology.sites[i], sc.topology.links[i]
    w = site_scenario(sc, i).workload
    pool = Pool(hardware=s.cluster.instance.gpu.name, gpus_per_instance=s.cluster.instance.gpus,
                instances=s.cluster.instances)
    return SiteInfo(name=s.name, pool=pool, demand_share=s.demand_share, mean_input_tokens=w.input_total_mean,
                    mean_uncached_tokens=float(w.lengths.mean), output_tokens=w.output_tokens,
                    prefix_hit_rate=w.prefix_hit_rate, hit_rate_source=w.hit_rate_source,
                    requests=None if w.trace is None else len(w.trace), distribution=w.description, decode=decode,
                    link=lk.name, link_bandwidth_bytes_per_s=lk.link.bandwidth_bytes_per_s,
                    link_usable_fraction=lk.link.usable_fraction, link_usable_bytes_per_s=lk.link.usable_bytes_per_s,
                    link_rtt_s=lk.link.rtt_s)
