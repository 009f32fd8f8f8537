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
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.plan import Timing, _cost, _space, _sum_price, homogeneous, timing
from prfaas_plan.core import joint
from prfaas_plan.core.stages import SiteModel
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.report.plan_json import homogeneous_json
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.topology import TopologySpec, homogeneous_cluster


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
    payload: dict[str, Any]
    searches: dict[str, joint.JointSearch]
    models: list[SiteModel]
    timings: list[Timing]
    scenario: ScenarioSpec


def _sites_json(topo: TopologySpec, p: joint.TopologyPoint) -> dict[str, Any]:
    out: dict[str, Any] = {topo.prefill.name: {"role": "prfaas", "instances": p.n_prfaas,
                                              "utilization": p.prfaas_utilization}}
    for sp in p.sites:
        out[sp.site] = {"role": "pd", "threshold_tokens": sp.threshold_tokens, "n_p": sp.n_p, "n_d": sp.n_d,
                        "p_offload": sp.p_offload, "lambda_rps": sp.lambda_rps, "demand_share": sp.share,
                        "theta_pd_p_rps": sp.theta_pd_p_rps, "theta_pd_d_rps": sp.theta_pd_d_rps,
                        "prfaas_instances_busy": sp.prfaas_seconds_per_s}
    return out


def _links_json(models: list[SiteModel], p: joint.TopologyPoint) -> dict[str, Any]:
    return {sp.link: {"egress_gbps": units.bytes_per_s_to_gbps(sp.egress_bytes_per_s),
                      "utilization": sp.link_utilization, "theta_link_rps": sp.theta_link_rps,
                      "usable_gbps": units.bytes_per_s_to_gbps(m.link_bytes_per_s)}
            for m, sp in zip(models, p.sites, strict=True)}


def point_json(topo: TopologySpec, models: list[SiteModel], p: joint.TopologyPoint) -> dict[str, Any]:
    return {"lambda_max_rps": p.lambda_max_rps, "binding": p.binding, "tight": list(p.tight),
            "n_prfaas": p.n_prfaas, "sites": _sites_json(topo, p), "links": _links_json(models, p)}


def independent(models: list[SiteModel], n_prfaas: float, thresholds: np.ndarray, method: Method
                ) -> tuple[float, list[joint.TopologyPoint]]:
    """Each site alone with s_i x N_prfaas of the prefill service; the total is min_i Lambda_i."""
    alone = [joint.search([m], thresholds, np.array([m.share * n_prfaas]), method=method).best for m in models]
    return min(a.lambda_max_rps for a in alone), alone


def _homogeneous(sc: ScenarioSpec, method: Method) -> dict[str, Any]:
    topo = sc.topology
    assert topo is not None
    per = {}
    for i, s in enumerate(topo.sites):
        h = homogeneous_json(homogeneous(site_scenario(sc, i), homogeneous_cluster(s, topo), method))
        per[s.name] = h | {"demand_share": s.demand_share}
    lam = min(h["lambda_max_rps"] / topo.sites[i].demand_share for i, h in enumerate(per.values()))
    price = _sum_price(*(h["price_per_hour"] for h in per.values()))
    return {"lambda_max_rps": lam, "sites": per, "price_per_hour": price,
            "cost_per_million_requests": _cost(price, lam)}


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


def _one_method(sc: ScenarioSpec, models: list[SiteModel], m: Method) -> tuple[dict[str, Any], joint.JointSearch]:
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
    head = point_json(topo, models, best) | {
        "price_per_hour": price, "cost_per_million_requests": _cost(price, best.lambda_max_rps),
        "prfaas_utilization": best.prfaas_utilization}
    base = {"homogeneous": hom,
            "independent": {"lambda_max_rps": ind_lam, "cost_per_million_requests": _cost(price, ind_lam),
                            "n_prfaas_per_site": {md.name: md.share * n for md in models},
                            "sites": {a.sites[0].site: {"threshold_tokens": a.sites[0].threshold_tokens,
                                                        "n_p": a.sites[0].n_p, "n_d": a.sites[0].n_d,
                                                        "lambda_max_rps": a.lambda_max_rps, "binding": a.binding}
                                      for a in alone}},
            "naive_heterogeneous": point_json(topo, models, naive_p) | {
                "price_per_hour": _price(sc, naive_p.n_prfaas),
                "cost_per_million_requests": _cost(_price(sc, naive_p.n_prfaas), naive_p.lambda_max_rps)}}
    lam = best.lambda_max_rps
    ratios: dict[str, float | None] = {
        "prfaas_vs_homogeneous": lam / hom["lambda_max_rps"] if hom["lambda_max_rps"] > 0 else None,
        "prfaas_vs_independent": lam / ind_lam if ind_lam > 0 else None,
        "naive_vs_homogeneous": (naive_p.lambda_max_rps / hom["lambda_max_rps"] if hom["lambda_max_rps"] > 0
                                 else None)}
    if price and hom["price_per_hour"] and hom["lambda_max_rps"] > 0:
        ratios["prfaas_vs_homogeneous_equal_cost"] = (lam / price) / (hom["lambda_max_rps"] / hom["price_per_hour"])
    return {"best": head, "baselines": base, "ratios": ratios, "refined_threshold": res.refined,
            "evaluations": res.evaluations, "search_s": elapsed}, res


def plan(sc: ScenarioSpec, *, methods: tuple[str, ...] = ("paper", "exact")) -> TopologyPlan:
    """The joint plan under each method (the scenario's is the headline), with its baselines."""
    topo = sc.topology
    assert topo is not None
    models, timings = site_models(sc)
    chosen = Method(sc.search.method)
    order = [chosen] + [Method(m) for m in methods if Method(m) != chosen]
    per: dict[str, Any] = {}
    searches: dict[str, joint.JointSearch] = {}
    for m in order:
        per[str(m)], searches[str(m)] = _one_method(sc, models, m)
    head = per[str(chosen)]
    space = _space(sc)
    payload = {
        "scenario": sc.name, "model": sc.model.name, "method": str(chosen),
        "best": head["best"], "baselines": head["baselines"], "ratios": head["ratios"], "methods": per,
        "topology": {
            "prefill": {"site": topo.prefill.name, "hardware": topo.prefill.cluster.instance.gpu.name,
                        "gpus_per_instance": topo.prefill.cluster.instance.gpus,
                        "instances": topo.prefill.cluster.instances},
            "sites": {s.name: {"hardware": s.cluster.instance.gpu.name, "gpus_per_instance": s.cluster.instance.gpus,
                               "instances": s.cluster.instances, "demand_share": s.demand_share,
                               "mean_input_tokens": s.workload.input_total_mean if s.workload else None,
                               "mean_uncached_tokens": float(s.workload.lengths.mean) if s.workload else None,
                               "output_tokens": s.workload.output_tokens if s.workload else None,
                               "distribution": s.workload.description if s.workload else None,
                               "decode": t.decode_detail | {"rps_per_instance": t.decode_rps_per_instance}}
                      for s, t in zip(topo.sites, timings, strict=True)},
            "links": {lk.name: {"bandwidth_gbps": units.bytes_per_s_to_gbps(lk.link.bandwidth_bytes_per_s),
                                "usable_fraction": lk.link.usable_fraction,
                                "usable_gbps": units.bytes_per_s_to_gbps(lk.link.usable_bytes_per_s),
                                "rtt_s": lk.link.rtt_s} for lk in topo.links},
        },
        "sources": {f"{s.name}: {k}": v for s, t in zip(topo.sites, timings, strict=True)
                    for k, v in t.sources.items()},
        "search": {"thresholds": len(space.thresholds), "n_prfaas_options": len(space.n_prfaas),
                   "evaluations": head["evaluations"], "search_s": {k: v["search_s"] for k, v in per.items()},
                   "scaling": "sum of the sites' grids per PrfaaS size (core.joint)"},
    }
    return TopologyPlan(payload=payload, searches=searches, models=models, timings=timings, scenario=sc)
