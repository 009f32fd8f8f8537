"""The optimizer under a TTFT SLO: the highest total arrival rate at which every PD site's TTFT
statistic meets the bound, and the configuration that serves it.

Throughput alone (Eq. 6) lets queues grow without limit near Lambda_max. With ``slo.ttft`` set,
a configuration's rate is the largest lambda < Lambda_max with TTFT_stat(lambda) <= bound at
every site, from the analytic latency model (``api.latency.system_latency``, the prefill
service's wait shared by the sites); TTFT grows with lambda, so bisection finds it.

PrfaaS-PD is searched one PD site at a time, the others held (from the throughput plan; with
several sites, passes until none improves). A site's candidates: every (N_prfaas option, N_p)
at a coarse log grid of thresholds plus that split's throughput-best t (its Lambda_max with the
others held, ``core.joint.capacities``), and the two special cases of the throughput search
(every request offloaded with N_p = 0, none offloaded), then a local refinement of t around the
winner. Splits whose throughput bound cannot beat the best rate found so far are skipped, and so
is a candidate whose TTFT at that rate already misses the bound. One PD site is the case of one
pass (the paper's Eq. 7 plan is one of its candidates). Homogeneous PD: each site's best split on
its own cluster (the sites share nothing, so the total is min_i of each site's rate over its
share); naive heterogeneous is held (every request offloaded, N_p = 0).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from prfaas_plan.api.grid import homogeneous_splits
from prfaas_plan.api.latency import per_site, prefill_pool, site_within
from prfaas_plan.api.laws import search_space
from prfaas_plan.api.plan import Plan
from prfaas_plan.api.systems import (
    HOMOGENEOUS,
    NAIVE,
    PRFAAS,
    homogeneous_clusters,
    site_config,
    topology_system,
    topology_systems,
)
from prfaas_plan.api.topology import site_scenario
from prfaas_plan.core import joint
from prfaas_plan.core.roots import bisect
from prfaas_plan.core.stages import Candidates, offload_all_threshold
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.latency import SystemTiming
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.slo import SloPlan, SloSite, SloSystem
from prfaas_plan.specs.topology import TopologySystem

SEARCH_NODES = 400  # quantile nodes per path while searching; the answer is re-evaluated with 2000
COARSE_THRESHOLDS = 16
BISECTIONS = 14
PASSES = 3  # several PD sites: rounds over the sites (each site's search holds the others)
# several PD sites: a candidate is bisected only where it serves this much more than the best found
# (a site whose variation barely moves the binding site would bisect candidate after candidate for
# gains in the fourth digit: 33 s for two-regions with a 0.5 Gbps link, 3 s with it); one PD site
# searches once, to the last gain
GAIN = 1e-3

Found = tuple[float, TopologySystem, list[Candidates]]  # (rate, system, each site's candidate)


class _Bound:
    """The bound and what it is checked on: every site's statistic at a total rate."""

    def __init__(self, sc: ScenarioSpec) -> None:
        assert sc.ttft_slo_s is not None
        self.sc, self.bound, self.stat = sc, sc.ttft_slo_s, sc.ttft_statistic

    def worst(self, sites: Mapping[str, SystemTiming]) -> float | None:
        """The highest statistic over the sites (None: a site is unstable)."""
        values = [t.statistic(self.stat) if t.stable else None for t in sites.values()]
        return None if any(v is None for v in values) else max(float(v) for v in values if v is not None)

    def within(self, sites: Mapping[str, SystemTiming]) -> bool:
        w = self.worst(sites)
        return w is not None and w <= self.bound

    def meets(self, system: TopologySystem, rate: float, only: str | None = None, first: int = 0) -> bool:
        """Every site (``only``: that one) within the bound at total ``rate``; site ``first`` is
        checked first, and the check stops at the first site that misses it."""
        pool = prefill_pool(self.sc, system, rate, nodes=SEARCH_NODES)
        sites = [s for s in system.sites if only is None or s.site == only]
        return all(site_within(self.sc, system, rate, s, pool, self.bound, self.stat, nodes=SEARCH_NODES)
                   for s in (sites[first:] + sites[:first] if only is None else sites))

    def max_rate(self, system: TopologySystem, floor: float = 0.0, only: str | None = None,
                 first: int = 0) -> float | None:
        """Largest rate in (floor, capacity) meeting the bound; None if none above ``floor`` does."""
        cap = system.capacity_rps * (1 - 1e-6)
        lo = max(floor, cap * 1e-6)
        if not self.meets(system, lo, only, first):
            return None
        if self.meets(system, cap, only, first):
            return cap
        return bisect(lambda rate: self.meets(system, rate, only, first), lo, cap, iterations=BISECTIONS)[0]

    def result(self, system: TopologySystem, rate: float) -> SloSystem:
        """The system at its rate, re-evaluated with the full node grid (the search used fewer
        nodes; where that moved the statistic past the bound, the rate is bisected down again)."""
        sc = self.sc
        r = per_site(sc, system, rate)[2]
        if not self.within(r):
            rate = bisect(lambda x: self.within(per_site(sc, system, x)[2]), rate * 0.9, rate, iterations=10)[0]
            r = per_site(sc, system, rate)[2]
        worst = self.worst(r)
        assert worst is not None
        sites = tuple(SloSite(site=s.site, threshold_tokens=s.config.threshold_tokens, n_p=s.config.n_p,
                              n_d=s.config.n_d, ttft_mean_s=float(r[s.site].ttft_mean_s or 0.0),
                              ttft_p90_s=float(r[s.site].ttft_p90_s or 0.0),
                              ttft_p99_s=float(r[s.site].ttft_p99_s or 0.0)) for s in system.sites)
        cap = system.capacity_rps
        return SloSystem(n_prfaas=system.n_prfaas, lambda_ttft_rps=rate, capacity_rps=cap, load=rate / cap,
                         binding="ttft" if rate < cap * (1 - 1e-4) else system.capacity_binding,
                         ttft_at_rate_s=worst, sites=sites)


class _Prfaas:
    """PrfaaS-PD's configurations: each site's candidate (one t, one split) and the pool's size."""

    def __init__(self, sc: ScenarioSpec, p: Plan) -> None:
        self.sc, self.models, self.timings = sc, list(p.models), p.timings
        self.method = Method(sc.search.method)
        self.space = search_space(sc)

    def system(self, cands: list[Candidates], n_prfaas: int) -> TopologySystem:
        pt = joint.point(self.models, cands, [0] * len(cands), n_prfaas)
        configs = [site_config(self.sc, i, self.timings[i], name=PRFAAS, threshold=float(c.t[0]), n_prfaas=n_prfaas,
                               n_p=sp.n_p, n_d=sp.n_d, capacity=pt.lambda_max_rps * sp.demand_share,
                               binding=pt.stage) for i, (c, sp) in enumerate(zip(cands, pt.sites, strict=True))]
        return topology_system(self.sc, PRFAAS, n_prfaas, configs, pt.lambda_max_rps, pt.stage)

    def at(self, i: int, t: float, n_p: int) -> Candidates:
        return joint.at(self.models[i], [t], n_p, Method.EXACT)

    def split_maxima(self, i: int, held: list[Candidates]) -> tuple[np.ndarray, np.ndarray]:
        """Per (N_prfaas option, N_p option) of site i, the others held: the highest Lambda_max
        over the threshold grid (the plan's method) and the threshold reaching it first."""
        sp = self.space
        r = joint.at(self.models[i], sp.thresholds, 1, self.method)
        best = np.empty((len(sp.n_prfaas), len(sp.n_p)))
        best_t = np.empty_like(best)
        for j, n_p in enumerate(sp.n_p):
            c = replace(r, n_p=np.full(len(r.t), int(n_p), dtype=np.int64))
            for k, n in enumerate(sp.n_prfaas):
                caps = joint.capacities(self.models, held, i, float(n), c)
                a = int(caps.argmax())
                best[k, j], best_t[k, j] = caps[a], r.t[a]
        return best, best_t

    def special(self, i: int, held: list[Candidates]) -> list[tuple[Candidates, int]]:
        """Site i's two special cases (every request offloaded, N_p = 0, at its best N_prfaas;
        none offloaded at the fewest, its best split)."""
        sp, m = self.space, self.models[i]
        off = joint.at(m, [offload_all_threshold(m.lengths)], 0, Method.EXACT)
        caps = [float(joint.capacities(self.models, held, i, float(n), off)[0]) for n in sp.n_prfaas]
        out = [(off, int(sp.n_prfaas[int(np.argmax(caps))]))]
        hi = float(m.lengths.hi)
        if np.isfinite(hi) and len(sp.n_p):
            n = int(sp.n_prfaas.min())
            none = [joint.at(m, [hi], int(n_p), Method.EXACT) for n_p in sp.n_p]
            caps = [float(joint.capacities(self.models, held, i, float(n), c)[0]) for c in none]
            out.append((none[int(np.argmax(caps))], n))
        return out


def _site_search(pf: _Prfaas, b: _Bound, i: int, held: list[Candidates], best: Found | None) -> Found | None:
    """Site i's candidates with the other sites at ``held``; the best found (``best``: so far)."""
    sp = pf.space
    gain = 1 + (GAIN if len(held) > 1 else 0.0)
    per_split, best_t = pf.split_maxima(i, held)
    coarse = np.geomspace(max(sp.thresholds[0], 1.0), sp.thresholds[-1], COARSE_THRESHOLDS)

    def weigh(c: Candidates, n: int) -> None:
        nonlocal best
        best = _better(pf, b, [*held[:i], c, *held[i + 1:]], n, best, gain=gain, first=i)

    for idx in np.argsort(per_split, axis=None)[::-1]:
        ki, si = np.unravel_index(idx, per_split.shape)
        if best is not None and per_split[ki, si] <= best[0]:
            break
        n, n_p = int(sp.n_prfaas[ki]), int(sp.n_p[si])
        for th in np.unique(np.append(coarse, best_t[ki, si])):
            weigh(pf.at(i, float(th), n_p), n)
    for c, n in pf.special(i, held):
        weigh(c, n)
    if best is None:
        return None
    # refine t_i around the winner: a finer log grid between its coarse neighbours
    won = best[1].sites[i].config
    assert won.threshold_tokens is not None  # a PrfaaS-PD configuration's (Candidates.t)
    step = (coarse[-1] / coarse[0]) ** (1 / (COARSE_THRESHOLDS - 1))
    lo = pf.models[i].lengths.lo - 1
    for th in np.geomspace(won.threshold_tokens / step, won.threshold_tokens * step, 9):
        if lo <= th <= sp.thresholds[-1]:
            weigh(pf.at(i, float(th), won.n_p), won.n_prfaas)
    return best


def _better(pf: _Prfaas, b: _Bound, cands: list[Candidates], n: int, best: Found | None, *, gain: float = 1.0,
            first: int = 0) -> Found | None:
    """``best``, or the configuration of ``cands`` with a pool of ``n`` where it serves more than
    ``gain`` x best's rate (``first``: the site varied, whose candidate is ``cands[first]``)."""
    cap = float(joint.capacities(pf.models, cands, first, float(n), cands[first])[0])
    if best is not None and cap <= best[0] * gain:
        return best
    system = pf.system(cands, n)
    rate = b.max_rate(system, floor=best[0] * gain if best else 0.0, first=first)
    return (rate, system, cands) if rate is not None and (best is None or rate > best[0]) else best


def _prfaas(sc: ScenarioSpec, p: Plan, b: _Bound) -> Found | None:
    """Site by site, the others held, until every other site has been searched against the last
    change (one PD site: one search); after the first round, the throughput plan itself."""
    pf = _Prfaas(sc, p)
    plan = p.result.head.best
    n = len(plan.sites)
    own = [pf.at(i, s.threshold_tokens, s.n_p) for i, s in enumerate(plan.sites)]
    held = own
    best: Found | None = None
    searches = since = 0
    while searches < PASSES * n:
        before = best[0] if best else None
        best = _site_search(pf, b, searches % n, held, best)
        searches += 1
        if searches == n:  # the plan's own t_i (off the grids) and splits
            best = _better(pf, b, own, round(plan.n_prfaas), best)
        if best is None:  # nothing meets the bound with the others held as they are: the next site
            if searches >= n:
                return None
            continue
        held = best[2]
        since = 0 if before is None or best[0] > before else since + 1
        if searches >= n and since >= n - 1:
            break
    return best


def _homogeneous(sc: ScenarioSpec, b: _Bound, held: TopologySystem) -> tuple[float, TopologySystem] | None:
    """Each site's best split on its own cluster under the bound; the total is the smallest
    site's rate over its share (the sites share nothing)."""
    clusters = homogeneous_clusters(sc)
    assert clusters is not None
    sites = list(held.sites)
    rates = []
    for i, (s, cluster) in enumerate(zip(held.sites, clusters, strict=True)):
        _, splits = homogeneous_splits(site_scenario(sc, i), cluster, Method.EXACT)
        found = []
        for op in splits:
            cfg = replace(s.config, n_p=op.n_p, n_d=op.n_d, capacity_rps=op.lambda_max_rps,
                          capacity_binding=str(op.binding))
            one = replace(held, sites=tuple(replace(x, config=cfg) if k == i else x for k, x in enumerate(sites)),
                          capacity_rps=op.lambda_max_rps / s.demand_share)
            r = b.max_rate(one, only=s.site)
            if r is not None:
                found.append((r, cfg))
        if not found:
            return None
        r, cfg = max(found, key=lambda x: x[0])
        sites[i] = replace(s, config=cfg)
        rates.append(r)
    caps = [x.config.capacity_rps / x.demand_share for x in sites]
    k = int(np.argmin(caps))
    system = replace(held, sites=tuple(sites), capacity_rps=caps[k], capacity_binding=sites[k].config.capacity_binding)
    return min(rates), system


def bounded(sc: ScenarioSpec, p: Plan) -> SloPlan:
    """PrfaaS-PD and the baselines under the TTFT SLO; raises InfeasibleError if nothing meets it."""
    t0 = time.perf_counter()
    b = _Bound(sc)
    systems = topology_systems(sc)
    best = _prfaas(sc, p, b)
    if best is None:
        base = systems[PRFAAS]
        worst = b.worst(per_site(sc, base, base.capacity_rps * 1e-6)[2])
        raise InfeasibleError(
            f"ttft: no configuration meets {b.stat} TTFT <= {b.bound:g} s; at zero load the throughput-best one has "
            f"{b.stat} TTFT {worst or 0.0:.3f} s (prefill and transfer alone)", binding="ttft")
    prfaas = b.result(best[1], best[0])
    hom = None
    if HOMOGENEOUS in systems:
        found = _homogeneous(sc, b, systems[HOMOGENEOUS])
        hom = None if found is None else b.result(found[1], found[0])
    naive = None
    if NAIVE in systems:
        rate = b.max_rate(systems[NAIVE])
        naive = None if rate is None else b.result(systems[NAIVE], rate)
    return SloPlan(bound_s=b.bound, statistic=b.stat, prfaas=prfaas, homogeneous=hom, naive_heterogeneous=naive,
                   prfaas_vs_homogeneous=prfaas.lambda_ttft_rps / hom.lambda_ttft_rps if hom else None,
                   search_s=time.perf_counter() - t0)
