"""`optimize` for a topology of several PD sites sharing one prefill service (``core.joint``).

The plan maximises the total Lambda jointly over every site's t_i and split and the shared
N_prfaas. Baselines: each site alone as homogeneous PD (its own instances plus its demand share
of the prefill GPUs, ``specs.topology.homogeneous_cluster``); *independent planning* (the prefill
service split between the sites in proportion to demand, fractional instances, each site
optimised alone); naive heterogeneous (every site offloads everything, N_p = 0). A baseline's
total Lambda is the largest rate every site serves its share of: min_i Lambda_i / s_i.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np

from prfaas_plan.api.plan import Timing, _cost, _space, _sum_price, homogeneous, timing
from prfaas_plan.core import joint
from prfaas_plan.core.stages import SiteModel
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.results import (
    Independent,
    Pool,
    Priced,
    SiteHomogeneous,
    SiteInfo,
    TopologyHomogeneous,
    TopologyMethodPlan,
    TopologyPlanResult,
    TopologyRatios,
)
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.topology import homogeneous_cluster


def site_scenario(sc: ScenarioSpec, i: int) -> ScenarioSpec:
    """The scenario as PD site i sees it: its workload, its cluster, its link."""
    topo = sc.topology
    assert topo is not None
    if not topo.multi_site:  # the scenario itself (its local cluster, link and workload are the site's)
        return sc
    s = topo.sites[i]
    return replace(sc, workload=s.workload, local=s.cluster, link=topo.links[i].link, homogeneous=None)


def site_models(sc: ScenarioSpec) -> tuple[list[SiteModel], list[Timing]]:
    topo = sc.topology
    assert topo is not None
    models, timings = [], []
    for i, (s, lk) in enumerate(zip(topo.sites, topo.links, strict=True)):
        t = timing(site_scenario(sc, i))
        assert s.workload is not None
        models.append(SiteModel(name=s.name, link=lk.name, lengths=s.workload.lengths, curves=t.curves,
                                share=s.demand_share, link_bytes_per_s=lk.link.usable_bytes_per_s,
                                decode_rps_per_instance=t.decode_rps_per_instance, n_local=s.cluster.instances))
        timings.append(t)
    return models, timings


@dataclass(frozen=True)
class TopologyPlan:
    """The typed result with the searches and service laws behind it; ``payload`` is its JSON,
    written at the edge (``report.topology_json``)."""

    result: TopologyPlanResult
    searches: dict[str, joint.JointSearch]
    models: list[SiteModel]
    timings: list[Timing]
    scenario: ScenarioSpec

    @cached_property
    def payload(self) -> dict[str, Any]:
        from prfaas_plan.report.topology_json import topology_json

        return topology_json(self.result)


def independent(models: list[SiteModel], n_prfaas: float, thresholds: np.ndarray, method: Method
                ) -> tuple[float, list[joint.TopologyPoint]]:
    """Each site alone with s_i x N_prfaas of the prefill service; the total is min_i Lambda_i."""
    alone = [joint.search([m], thresholds, np.array([m.share * n_prfaas]), method=method).best for m in models]
    return min(a.lambda_max_rps for a in alone), alone


def _homogeneous(sc: ScenarioSpec, method: Method) -> TopologyHomogeneous:
    topo = sc.topology
    assert topo is not None
    per = tuple(SiteHomogeneous(site=s.name, demand_share=s.demand_share,
                                baseline=homogeneous(site_scenario(sc, i), homogeneous_cluster(s, topo), method))
                for i, s in enumerate(topo.sites))
    lam = min(h.baseline.point.lambda_max_rps / h.demand_share for h in per)
    price = _sum_price(*(h.baseline.cost.price_per_hour for h in per))
    return TopologyHomogeneous(lambda_max_rps=lam, sites=per,
                               cost=Priced(price_per_hour=price, cost_per_million_requests=_cost(price, lam)))


def _price(sc: ScenarioSpec, n_prfaas: float) -> float | None:
    topo = sc.topology
    assert topo is not None
    return _sum_price(topo.prefill.cluster.price_for(round(n_prfaas)),
                      *(s.cluster.price_per_hour for s in topo.sites))


def joint_plan(models: list[SiteModel], thresholds: np.ndarray, n_prfaas: np.ndarray, method: Method
               ) -> tuple[joint.JointSearch, joint.TopologyPoint, float, list[joint.TopologyPoint]]:
    """(the search, its best point, independent planning's Lambda and per-site points) at the
    search's N_prfaas. Independent planning's configuration is one the joint plan may take, so
    the joint plan takes it where it is higher (the two refinements may differ by round-off)."""
    res = joint.search(models, thresholds, n_prfaas, method=method)
    n = float(res.best.n_prfaas)
    ind_lam, alone = independent(models, n, thresholds, method)
    together = joint.point(models, [joint.at(md, a.sites[0].threshold_tokens, a.sites[0].n_p, method)
                                    for md, a in zip(models, alone, strict=True)], [0] * len(models), n)
    best = together if together.lambda_max_rps > res.best.lambda_max_rps else res.best
    return res, best, ind_lam, alone


def _priced(price: float | None, lam: float) -> Priced:
    return Priced(price_per_hour=price, cost_per_million_requests=_cost(price, lam))


def _one_method(sc: ScenarioSpec, models: list[SiteModel], m: Method) -> tuple[TopologyMethodPlan, joint.JointSearch]:
    topo = sc.topology
    assert topo is not None
    space = _space(sc)
    t0 = time.perf_counter()
    res, best, ind_lam, alone = joint_plan(models, space.thresholds, space.n_prfaas, m)
    n = float(best.n_prfaas)
    elapsed = time.perf_counter() - t0
    if best.lambda_max_rps <= 0:
        raise InfeasibleError(f"no configuration serves any load; binding: {best.binding}", binding=best.binding)
    price = _price(sc, n)
    naive_p = joint.point(models, res.candidates, [int(np.flatnonzero(c.n_p == 0)[0]) for c in res.candidates],
                          float(topo.prefill.cluster.instances))
    hom = _homogeneous(sc, m)
    lam, h = best.lambda_max_rps, hom.lambda_max_rps
    equal_cost = (lam / price) / (h / hom.cost.price_per_hour) if price and hom.cost.price_per_hour and h > 0 else None
    ratios = TopologyRatios(prfaas_vs_homogeneous=lam / h if h > 0 else None,
                            prfaas_vs_independent=lam / ind_lam if ind_lam > 0 else None,
                            naive_vs_homogeneous=naive_p.lambda_max_rps / h if h > 0 else None,
                            prfaas_vs_homogeneous_equal_cost=equal_cost)
    independent_plan = Independent(lambda_max_rps=ind_lam, cost=_priced(price, ind_lam),
                                   n_prfaas_per_site={md.name: md.share * n for md in models}, alone=tuple(alone))
    return TopologyMethodPlan(
        method=str(m), best=best, cost=_priced(price, lam), homogeneous=hom, independent=independent_plan,
        naive=naive_p, naive_cost=_priced(_price(sc, naive_p.n_prfaas), naive_p.lambda_max_rps), ratios=ratios,
        refined_threshold=res.refined, evaluations=res.evaluations, search_s=elapsed), res


def _site_info(s: Any, lk: Any, t: Timing) -> SiteInfo:
    w = s.workload
    pool = Pool(hardware=s.cluster.instance.gpu.name, gpus_per_instance=s.cluster.instance.gpus,
                instances=s.cluster.instances)
    return SiteInfo(name=s.name, pool=pool, demand_share=s.demand_share, mean_input_tokens=w.input_total_mean,
                    mean_uncached_tokens=float(w.lengths.mean), output_tokens=w.output_tokens,
                    distribution=w.description,
                    decode=t.decode_detail | {"rps_per_instance": t.decode_rps_per_instance},
                    link=lk.name, link_bandwidth_bytes_per_s=lk.link.bandwidth_bytes_per_s,
                    link_usable_fraction=lk.link.usable_fraction, link_usable_bytes_per_s=lk.link.usable_bytes_per_s,
                    link_rtt_s=lk.link.rtt_s)


def plan(sc: ScenarioSpec, *, methods: tuple[str, ...] = ("paper", "exact")) -> TopologyPlan:
    """The joint plan under each method (the scenario's is the headline), with its baselines."""
    topo = sc.topology
    assert topo is not None
    models, timings = site_models(sc)
    chosen = Method(sc.search.method)
    order = [chosen] + [Method(m) for m in methods if Method(m) != chosen]
    per: dict[str, TopologyMethodPlan] = {}
    searches: dict[str, joint.JointSearch] = {}
    for m in order:
        per[str(m)], searches[str(m)] = _one_method(sc, models, m)
    space = _space(sc)
    pre = topo.prefill.cluster
    result = TopologyPlanResult(
        scenario=sc.name, model=sc.model.name, method=str(chosen), methods=per, prefill_site=topo.prefill.name,
        prefill=Pool(hardware=pre.instance.gpu.name, gpus_per_instance=pre.instance.gpus, instances=pre.instances),
        sites=tuple(_site_info(s, lk, t) for s, lk, t in zip(topo.sites, topo.links, timings, strict=True)),
        sources={f"{s.name}: {k}": v for s, t in zip(topo.sites, timings, strict=True) for k, v in t.sources.items()},
        thresholds=len(space.thresholds), n_prfaas_options=len(space.n_prfaas))
    return TopologyPlan(result=result, searches=searches, models=models, timings=timings, scenario=sc)
