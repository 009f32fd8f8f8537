"""`optimize` for several models over one topology (``core.fleet``), with two baselines.

* the plan: one prefill service whose instances the search assigns to the models, each site's
  instances split between its models, each link shared by their KV;
* separate services: the same prefill GPUs as one service per model and each link cut into one
  slice per model, both in proportion to the models' demand shares (whole instances, largest
  remainder), each site's instances still split by the search; what sharing is measured against;
* homogeneous PD: no prefill service, its GPUs added to the PD sites as instances of the site's
  kind (the site's demand share of them), every model prefilling locally.

Each model's decode rate is its scenario's, unstaged (``api.laws.timing``); its thresholds are
its own scenario's grid, plus offloading everything and nothing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from prfaas_plan.api.context import remembered
from prfaas_plan.api.laws import cost_per_million, search_space, sum_price, timing
from prfaas_plan.api.topology import site_models
from prfaas_plan.core import fleet as core
from prfaas_plan.core.stages import UNBOUNDED, SiteModel, offload_all_threshold
from prfaas_plan.core.throughput import Method, routing
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.fleet import (
    FleetEntryPoint,
    FleetLinkPoint,
    FleetMethodPlan,
    FleetModelInfo,
    FleetPlanResult,
    FleetPoint,
    FleetRatios,
    FleetSpec,
)
from prfaas_plan.specs.results import Pool, Priced
from prfaas_plan.specs.topology import homogeneous_cluster


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """The fleet's shared hardware, the sites in the file's order, and each entry's place."""

    fleet: core.Fleet
    sites: tuple  # SiteSpec per PD site
    links: tuple  # TopologyLink per PD site
    prefill: object  # SiteSpec of the prefill service
    owners: tuple[tuple[int, int], ...]  # (model index, site index in the model's own topology) per entry


def shape(fs: FleetSpec) -> Shape:
    sites: dict[str, tuple] = {}
    owners = []
    for mi, m in enumerate(fs.models):
        topo = m.scenario.topology
        for si, (s, lk) in enumerate(zip(topo.sites, topo.links, strict=True)):
            sites.setdefault(s.name, (s, lk))
            owners.append((mi, si))
    topo0 = fs.models[0].scenario.topology
    assert topo0 is not None
    order = list(sites)
    fl = core.Fleet(sites=tuple(order), links=tuple(sites[n][1].name for n in order),
                    site_instances=tuple(sites[n][0].cluster.instances for n in order),
                    link_bytes_per_s=tuple(sites[n][1].link.usable_bytes_per_s for n in order),
                    n_prfaas=topo0.prefill.cluster.instances)
    return Shape(fleet=fl, sites=tuple(sites[n][0] for n in order), links=tuple(sites[n][1] for n in order),
                 prefill=topo0.prefill, owners=tuple(owners))


def laws(fs: FleetSpec) -> list[tuple[str, float, SiteModel, np.ndarray]]:
    """Per entry: the model's name, its demand share, its site's service laws and its thresholds
    (its scenario's grid, offloading everything and offloading nothing)."""
    out = []
    for m in fs.models:
        sc = m.scenario
        models, _ = site_models(sc)
        grid = search_space(sc).thresholds
        for sm in models:
            hi = float(sm.lengths.hi)
            ts = np.unique(np.concatenate([grid, [offload_all_threshold(sm.lengths)]]))
            out.append((m.name, m.demand_share, sm, np.append(ts, hi if np.isfinite(hi) else np.inf)))
    return out


def entries(sh: Shape, laws_: list, method: Method, ts: list[np.ndarray] | None = None) -> list[core.Entry]:
    return [core.Entry(model=name, site=sh.fleet.sites.index(sm.name), weight=w * sm.demand_share,
                       routing=routing(sm.lengths, sm.curves, grid if ts is None else ts[k], method),
                       decode_rps_per_instance=sm.decode_rps_per_instance)
            for k, (name, w, sm, grid) in enumerate(laws_)]


_ZOOM_POINTS, _ZOOMS = 257, 3  # as core.joint's refinement: 128 tokens -> 1 -> 0.008 -> 6e-5


def refine(sh: Shape, laws_: list, method: Method, es: list[core.Entry], found: core.Found
           ) -> tuple[list[core.Entry], core.Found]:
    """Off-grid thresholds: the search again with each entry's grid plus a finer one between the
    grid neighbours of its threshold, zoomed in a few times; kept only where Lambda rises."""
    grids = [g for _, _, _, g in laws_]
    spans = []
    for g, c in zip(grids, found.choices, strict=True):
        t = float(g[c.k])
        k = int(np.searchsorted(g, t))
        spans.append((float(g[max(k - 1, 0)]), float(g[min(k + 1, len(g) - 1)])))
    best_es, best = es, found
    for _ in range(_ZOOMS):
        fine = [np.unique(np.concatenate([g, np.linspace(lo, hi, _ZOOM_POINTS)])) if np.isfinite(hi) else g
                for g, (lo, hi) in zip(grids, spans, strict=True)]
        cand_es = entries(sh, laws_, method, fine)
        cand = core.search(sh.fleet, cand_es)
        if cand is None or cand.lambda_max_rps <= best.lambda_max_rps:
            break
        best_es, best = cand_es, cand
        step = [(hi - lo) / (_ZOOM_POINTS - 1) for lo, hi in spans]
        spans = [(max(lo, float(f[c.k]) - d), min(hi, float(f[c.k]) + d))
                 for f, c, d, (lo, hi) in zip(fine, cand.choices, step, spans, strict=True)]
    return best_es, best


def point_of(sh: Shape, es: list[core.Entry], found: core.Found, caps: list[core.Caps] | None = None) -> FleetPoint:
    """The typed configuration of a search's result (``caps``: separate services' slices)."""
    lam = found.lambda_max_rps
    out, per_link = [], [0.0] * len(sh.fleet.sites)
    for k, (e, c) in enumerate(zip(es, found.choices, strict=True)):
        b = core.bounds(e, c)
        ro = e.routing
        p, t = float(ro.p[c.k]), float(ro.t[c.k])
        a = caps[k].prfaas if caps else c.a
        egress = lam * b.link_bytes_per_lambda
        per_link[e.site] += egress
        load = lam * e.weight * p * float(ro.t_long_s[c.k]) if p > 0 else 0.0
        site = sh.fleet.sites[e.site]
        out.append(FleetEntryPoint(
            model=e.model, site=site, label=e.model if len(sh.fleet.sites) == 1 else f"{e.model}@{site}",
            link=sh.fleet.links[e.site], demand_share=e.weight,
            threshold_tokens=t if np.isfinite(t) else None, n_p=c.n_p, n_d=c.n_d, n_prfaas=a, p_offload=p,
            lambda_rps=e.weight * lam,
            theta_pd_p_rps=b.pd_prefill * e.weight if b.pd_prefill < UNBOUNDED else None,
            theta_pd_d_rps=b.decode * e.weight,
            theta_prfaas_rps=b.compute * e.weight if b.compute < UNBOUNDED else None,
            egress_bytes_per_s=egress, prfaas_utilization=load / a if a > 0 else None))
    links = tuple(FleetLinkPoint(link=n, usable_bytes_per_s=bw, egress_bytes_per_s=v,
                                 utilization=v / bw if bw > 0 else 0.0)
                  for n, bw, v in zip(sh.fleet.links, sh.fleet.link_bytes_per_s, per_link, strict=True))
    return FleetPoint(lambda_max_rps=lam, entries=tuple(out), links=links,
                      n_prfaas=sum(x.n_prfaas for x in out), binding=found.binding, tight=found.tight)


def separate_caps(sh: Shape, where: list[tuple[int, float]]) -> list[core.Caps]:
    """Each entry's slice (``where``: its site and weight): service instances and its site's link
    bytes, in proportion to demand."""
    inst = core.proportional(sh.fleet.n_prfaas, [w for _, w in where])
    per_site = [sum(w for i, w in where if i == site) for site in range(len(sh.fleet.sites))]
    return [core.Caps(prfaas=n, link_bytes_per_s=sh.fleet.link_bytes_per_s[i] * w / per_site[i])
            for n, (i, w) in zip(inst, where, strict=True)]


def placement(sh: Shape, laws_: list) -> list[tuple[int, float]]:
    """Each entry's site index and weight (its model's share x its share of the model)."""
    return [(sh.fleet.sites.index(sm.name), w * sm.demand_share) for _, w, sm, _ in laws_]


def held(sh: Shape, laws_: list, p: FleetPoint, method: Method) -> tuple[list[core.Entry], list[core.Choice]]:
    """Configuration ``p`` as the kernel's entries (each routed at its own threshold alone, under
    ``method``) and their choices: what ``core.fleet.evaluate`` takes to time it again."""
    ts = [np.array([e.threshold_tokens if e.threshold_tokens is not None else np.inf]) for e in p.entries]
    return (entries(sh, laws_, method, ts),
            [core.Choice(k=0, n_p=e.n_p, n_d=e.n_d, a=e.n_prfaas) for e in p.entries])


def _price(sh: Shape, n_prfaas: int) -> float | None:
    pre = sh.prefill.cluster  # type: ignore[attr-defined]
    return sum_price(pre.price_for(n_prfaas) if n_prfaas else 0.0, *(s.cluster.price_per_hour for s in sh.sites))


def _priced(price: float | None, lam: float) -> Priced:
    return Priced(price_per_hour=price, cost_per_million_requests=cost_per_million(price, lam))


def _one(fs: FleetSpec, sh: Shape, m: Method) -> FleetMethodPlan:
    t0 = time.perf_counter()
    laws_ = laws(fs)
    es = entries(sh, laws_, m)
    counts = [sum(1 for e in es if e.site == i) for i in range(len(sh.fleet.sites))]
    for name, n, c in zip(sh.fleet.sites, sh.fleet.site_instances, counts, strict=True):
        if c > n:
            raise InfeasibleError(f"site {name} has {n} instances for {c} models: each model needs at least one "
                                  "decode instance of its own", binding=f"instances {name}")
    found = core.search(sh.fleet, es)
    if found is None or found.lambda_max_rps <= 0:
        raise InfeasibleError("no assignment of the fleet serves every model any load", binding="instances")
    fine_es, fine = refine(sh, laws_, m, es, found)
    elapsed = time.perf_counter() - t0
    best = point_of(sh, fine_es, fine, None)
    caps = separate_caps(sh, [(e.site, e.weight) for e in es])
    sep_found = core.search(sh.fleet, es, caps=caps)
    sep = point_of(sh, es, sep_found, caps) if sep_found else None
    topo = fs.models[0].scenario.topology  # its prefill service is every model's
    sizes = [homogeneous_cluster(s, topo).instances for s in sh.sites]  # type: ignore[arg-type]
    hom_found = core.search(sh.fleet, es, local_only=True, site_instances=sizes)
    hom = point_of(sh, es, hom_found, None) if hom_found else None
    lam = best.lambda_max_rps
    ratios = FleetRatios(
        shared_vs_separate=lam / sep.lambda_max_rps if sep and sep.lambda_max_rps > 0 else None,
        shared_vs_homogeneous=lam / hom.lambda_max_rps if hom and hom.lambda_max_rps > 0 else None)
    return FleetMethodPlan(method=str(m), best=best, separate=sep, homogeneous=hom, ratios=ratios,
                           cost=_priced(_price(sh, sh.fleet.n_prfaas), lam), search_s=elapsed)


def _info(fs: FleetSpec) -> tuple[FleetModelInfo, ...]:
    out = []
    for m in fs.models:
        sc = m.scenario
        topo = sc.topology
        mean = float(sc.workload.lengths.mean)
        s_kv = timing(sc).curves.s_kv(np.array([mean]))
        out.append(FleetModelInfo(name=m.name, model=sc.model.name, demand_share=m.demand_share,
                                  sites=tuple(s.name for s in topo.sites), mean_uncached_tokens=mean,
                                  output_tokens=float(sc.workload.output_tokens),
                                  kv_bytes_per_token=float(np.asarray(s_kv).ravel()[0]) / mean,
                                  stack=timing(sc).sources.get("stack", "")))
    return tuple(out)


def plan(fs: FleetSpec, *, methods: tuple[str, ...] = ("paper", "exact")) -> FleetPlanResult:
    """The fleet's plan under each method (the first model's scenario method is the headline);
    searched once per command (``api.context``)."""
    return remembered("fleet plan", (fs,), (tuple(methods),), lambda: _plan(fs, methods))


def _plan(fs: FleetSpec, methods: tuple[str, ...]) -> FleetPlanResult:
    sh = shape(fs)
    chosen = Method(fs.models[0].scenario.search.method)
    order = [chosen] + [Method(x) for x in methods if Method(x) != chosen]
    per = {str(m): _one(fs, sh, m) for m in order}
    pre = sh.prefill.cluster  # type: ignore[attr-defined]
    sources = {f"{m.name}: {k}": v for m in fs.models for k, v in timing(m.scenario).sources.items()}
    return FleetPlanResult(
        scenario=fs.name, method=str(chosen), methods=per, models=_info(fs),
        prefill_site=sh.prefill.name,  # type: ignore[attr-defined]
        prefill=Pool(hardware=pre.instance.gpu.name, gpus_per_instance=pre.instance.gpus, instances=pre.instances),
        sites=tuple((s.name, Pool(hardware=s.cluster.instance.gpu.name, gpus_per_instance=s.cluster.instance.gpus,
                                  instances=s.cluster.instances)) for s in sh.sites),
        thresholds=max(len(search_space(m.scenario).thresholds) for m in fs.models), sources=sources)
