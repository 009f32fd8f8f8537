"""Joint search of a topology: every site's t_i and split and the shared N_prfaas, maximising Lambda.

For a target Lambda, site i needs a candidate whose own bounds (``core.stages``) all reach
Lambda, and it should take the one that loads the shared compute least: g_i(Lambda) = min {c_i :
local_i >= Lambda}, a step function that never falls as Lambda rises. The topology serves Lambda
iff Lambda x sum_i g_i(Lambda) <= N_prfaas. On the interval ending at each breakpoint b (every
candidate's local bound, of every site) sum g is constant, G(b), so

    Lambda* = max_b min(b, N_prfaas / G(b)),

evaluated for all breakpoints at once with sorted arrays and ``searchsorted``: the work grows with
the SUM of the sites' grids (times the N_prfaas options), never with their product.

Then, with each site's split fixed, t_i is refined off the grid: the same kernel on a grid 256
times finer between each site's grid neighbours, zoomed in three times (to ~1e-4 tokens; each
level is one vectorised routing per site), and each site's t_i then set where its stages balance
with the others held (``balance``: for one PD site, Eq. 7's crossing, the refinement of
``core.optimize``). The refined point is kept only if it beats the grid's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core.roots import illinois
from prfaas_plan.core.stages import (
    UNBOUNDED,
    Candidates,
    SiteModel,
    SiteStages,
    compute_bounds,
    offload_all_threshold,
    site_stages,
)
from prfaas_plan.core.throughput import TIGHT, Method, Routing, routing
from prfaas_plan.specs.results import SitePoint, TopologyPoint

# kinds of stage, in the order the headline names a tie (what a user would change first)
LINK, COMPUTE, DECODE, PREFILL = "link", "prfaas-compute", "decode", "pd-prefill"
_PRIORITY = (LINK, COMPUTE, DECODE, PREFILL)


def _flat(r: Routing, ti: NDArray[np.int64], n_p: NDArray[np.int64]) -> Candidates:
    return Candidates(t=r.t[ti], n_p=n_p, p=r.p[ti], t_long_s=r.t_long_s[ti], s_long_bytes=r.s_long_bytes[ti],
                      t_short_s=r.t_short_s[ti])


def candidates(site: SiteModel, thresholds: NDArray[np.float64], method: Method) -> Candidates:
    """Every (t, N_p) of the grid with 1 <= N_p < N_local, plus the two special cases: every
    request offloaded (t below the shortest length, N_p = 0) and, for a finite longest length,
    none offloaded (t = the longest, every split)."""
    ts = [np.asarray(thresholds, dtype=np.float64), [offload_all_threshold(site.lengths)]]
    hi = float(site.lengths.hi)
    if np.isfinite(hi):
        ts.append([hi])
    r = routing(site.lengths, site.curves, np.concatenate(ts), method)
    splits = np.arange(1, site.n_local, dtype=np.int64)
    n_grid = len(ts[0])
    grid_t = np.repeat(np.arange(n_grid), len(splits))
    parts_t = [grid_t, [n_grid]]
    parts_n = [np.tile(splits, n_grid), [0]]
    if np.isfinite(hi):
        parts_t.append(np.full(len(splits), n_grid + 1))
        parts_n.append(splits)
    return _flat(r, np.concatenate(parts_t).astype(np.int64), np.concatenate(parts_n).astype(np.int64))


def _frontier(st: SiteStages) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]]:
    """(local bounds ascending, g: min compute load among candidates at least that high, which)."""
    local = st.local
    order = np.lexsort((st.compute_load, -local))  # local descending, then least load
    loc, load = local[order], st.compute_load[order]
    run = np.minimum.accumulate(load)
    new = load < np.concatenate(([np.inf], run[:-1]))  # a strictly lower load: ties keep the higher bound
    idx = order[np.maximum.accumulate(np.where(new, np.arange(len(load)), 0))]
    return loc[::-1], run[::-1], idx[::-1]


def _g(front: tuple, b: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """g_i(b) for each breakpoint b (inf above the site's best local bound) and the candidate."""
    loc, run, idx = front
    k = np.searchsorted(loc, b, side="left")  # first local >= b; ascending, so all after are too
    ok = k < len(loc)
    kk = np.minimum(k, len(loc) - 1)
    return np.where(ok, run[kk], np.inf), np.where(ok, idx[kk], -1)


def joint_grid(stages: Sequence[SiteStages], n_prfaas: NDArray[np.float64]) -> tuple[NDArray[np.float64],
                                                                                       list[NDArray[np.int64]]]:
    """Lambda* per N_prfaas option and, for each option, each site's candidate index."""
    fronts = [_frontier(st) for st in stages]
    b = np.unique(np.concatenate([f[0] for f in fronts]))
    gs = [_g(f, b) for f in fronts]
    total = np.sum([g for g, _ in gs], axis=0)  # G(b)
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = np.where(total[None, :] > 0, n_prfaas[:, None] / total[None, :], UNBOUNDED)
    value = np.where(np.isfinite(total)[None, :], np.minimum(b[None, :], cap), 0.0)
    j = value.argmax(axis=1)
    lam = value[np.arange(len(n_prfaas)), j]
    return lam, [np.asarray([g[1][jj] for g in gs], dtype=np.int64) for jj in j]


def point(sites: Sequence[SiteModel], cands: Sequence[Candidates], chosen: Sequence[int],
          n_prfaas: float) -> TopologyPoint:
    """The configuration taking candidate ``chosen[i]`` at site i, evaluated exactly (``n_prfaas``:
    a count of instances, carried as an int so that every output prints it whole, or independent
    planning's share s_i x N_prfaas of the pool)."""
    n_prfaas = int(n_prfaas) if float(n_prfaas).is_integer() else float(n_prfaas)
    one = [_pick(c, k) for c, k in zip(cands, chosen, strict=True)]
    stages = [site_stages(s, c) for s, c in zip(sites, one, strict=True)]
    load = float(sum(st.compute_load[0] for st in stages))
    compute = min(n_prfaas / load, UNBOUNDED) if load > 0 else UNBOUNDED
    named = [(COMPUTE, "", compute)]
    for s, st in zip(sites, stages, strict=True):
        named += [(PREFILL, s.name, float(st.pd_prefill[0])), (LINK, s.link, float(st.link[0])),
                  (DECODE, s.name, float(st.decode[0]))]
    lam = min(v for _, _, v in named)
    tight = [(kind, where) for kind, where, v in named if v <= lam * (1 + TIGHT)]
    kind, where = next((k, w) for pk in _PRIORITY for k, w in tight if k == pk)
    out = []
    for s, c, st in zip(sites, one, stages, strict=True):
        p = float(c.p[0])
        rate = s.demand_share * lam
        egress = rate * p * float(c.s_long_bytes[0]) if p > 0 else 0.0
        out.append(SitePoint(
            site=s.name, link=s.link, demand_share=s.demand_share, threshold_tokens=float(c.t[0]), n_p=int(c.n_p[0]),
            n_d=s.n_local - int(c.n_p[0]), p_offload=p, lambda_rps=rate,
            theta_pd_p_rps=float(st.pd_prefill[0]) * s.demand_share if p < 1 else None,
            theta_link_rps=float(st.link[0]) * s.demand_share if p > 0 else None,
            theta_pd_d_rps=float(st.decode[0]) * s.demand_share, egress_bytes_per_s=egress,
            link_utilization=egress / s.link_bytes_per_s, prfaas_seconds_per_s=lam * float(st.compute_load[0])))
    return TopologyPoint(n_prfaas=n_prfaas, lambda_max_rps=lam, sites=tuple(out),
                         prfaas_utilization=lam * load / n_prfaas if n_prfaas > 0 else 0.0,
                         binding=f"{kind} {where}".strip(), tight=tuple(f"{k} {w}".strip() for k, w in tight))


def capacities(sites: Sequence[SiteModel], held: Sequence[Candidates], i: int, n_prfaas: float,
               cands: Candidates) -> NDArray[np.float64]:
    """Lambda_max (total) of each of site i's ``cands`` with the other sites at ``held`` (one
    candidate each; ``held[i]`` is ignored): ``point``'s min over the shared compute and every
    site's stages, vectorised over site i's candidates."""
    own = site_stages(sites[i], cands)
    rest, others = 0.0, UNBOUNDED
    for j, (s, c) in enumerate(zip(sites, held, strict=True)):
        if j != i:
            st = site_stages(s, c)
            rest += float(st.compute_load[0])
            others = min(others, float(st.local[0]))
    load = rest + own.compute_load
    with np.errstate(divide="ignore"):
        compute = np.where(load > 0, np.minimum(n_prfaas / np.where(load > 0, load, 1.0), UNBOUNDED), UNBOUNDED)
    return np.minimum(np.minimum(compute, own.local), others)


def _pick(c: Candidates, k: int) -> Candidates:
    sl = slice(k, k + 1)
    return Candidates(t=c.t[sl], n_p=c.n_p[sl], p=c.p[sl], t_long_s=c.t_long_s[sl], s_long_bytes=c.s_long_bytes[sl],
                      t_short_s=c.t_short_s[sl])


def at(site: SiteModel, t: Any, n_p: int, method: Method) -> Candidates:
    """Candidates at thresholds ``t`` (a number or an array), all with split N_p."""
    r = routing(site.lengths, site.curves, t, method)
    return Candidates(t=r.t, n_p=np.full(len(r.t), n_p, dtype=np.int64), p=r.p, t_long_s=r.t_long_s,
                      s_long_bytes=r.s_long_bytes,
                      t_short_s=r.t_short_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class JointSearch:
    best: TopologyPoint
    candidates: tuple[Candidates, ...]
    chosen: tuple[int, ...]  # the grid's best candidate per site
    refined: bool
    evaluations: int  # candidates weighed: the sum of the sites' grids, per N_prfaas option


def search(sites: Sequence[SiteModel], thresholds: NDArray[np.float64], n_prfaas: NDArray[np.int64], *,
           method: Method, refine: bool = True) -> JointSearch:
    """Maximise the total Lambda over every site's (t_i, N_p,i) and the shared N_prfaas options."""
    cands = tuple(candidates(s, thresholds, method) for s in sites)
    stages = [site_stages(s, c) for s, c in zip(sites, cands, strict=True)]
    ns = np.asarray(n_prfaas, dtype=np.float64)
    lam, picks = joint_grid(stages, ns)
    k = int(np.flatnonzero(lam >= lam.max() * (1 - 1e-12))[0])  # ties: the fewest PrfaaS instances
    chosen = tuple(int(i) for i in picks[k])
    best = point(sites, cands, chosen, float(ns[k]))
    refined = False
    if refine and best.lambda_max_rps > 0:
        cand = _refine(sites, best, np.asarray(thresholds, dtype=np.float64), method)
        if cand is not None and cand.lambda_max_rps > best.lambda_max_rps:
            best, refined = cand, True
    return JointSearch(best=best, candidates=cands, chosen=chosen, refined=refined,
                       evaluations=sum(c.size for c in cands) * len(ns))


_ZOOM_POINTS = 257  # thresholds per site per zoom level of the refinement
_ZOOMS = 3  # grid step / 128 per level: 128 tokens -> 1 -> 0.008 -> 6e-5


def _refine(sites: Sequence[SiteModel], best: TopologyPoint, thresholds: NDArray[np.float64],
            method: Method) -> TopologyPoint | None:
    """Off-grid t_i at the grid's splits: the kernel on a finer grid of t between each free site's
    grid neighbours, zoomed in a few times (each level one vectorised routing per site)."""
    free = [i for i, sp in enumerate(best.sites) if 0 < sp.p_offload < 1 and sp.n_p > 0]
    if not free or len(thresholds) < 2:
        return None
    spans = {}
    for i in free:
        k = int(np.clip(np.searchsorted(thresholds, best.sites[i].threshold_tokens), 0, len(thresholds) - 1))
        spans[i] = (float(thresholds[max(k - 1, 0)]), float(thresholds[min(k + 1, len(thresholds) - 1)]))
    found, last = None, None
    for _ in range(_ZOOMS):
        cands = [at(s, np.linspace(*spans[i], _ZOOM_POINTS) if i in spans else [sp.threshold_tokens], sp.n_p,
                     method) for i, (s, sp) in enumerate(zip(sites, best.sites, strict=True))]
        stages = [site_stages(s, c) for s, c in zip(sites, cands, strict=True)]
        _, picks = joint_grid(stages, np.array([best.n_prfaas]))
        chosen = [int(k) for k in picks[0]]
        if min(chosen) < 0:
            break
        found, last = point(sites, cands, chosen, best.n_prfaas), (cands, chosen)
        for i in free:
            lo, hi = spans[i]
            step = (hi - lo) / (_ZOOM_POINTS - 1)
            t = float(cands[i].t[chosen[i]])
            spans[i] = (max(lo, t - step), min(hi, t + step))
    return found if found is None or last is None else _balanced(sites, found, free, *last, method)


def _balanced(sites: Sequence[SiteModel], found: TopologyPoint, free: list[int], cands: Sequence[Candidates],
              chosen: Sequence[int], method: Method) -> TopologyPoint:
    """``found`` with each free site's t_i moved to its balance between the last zoom's neighbours
    of its t (``balance``, the others held), where that serves at least as much: off the zoom's
    grid, as Eq. 7 is."""
    held = [_pick(c, k) for c, k in zip(cands, chosen, strict=True)]
    for i in free:
        k, top = chosen[i], len(cands[i].t) - 1
        hit = balance(sites, held, i, found.n_prfaas, method,
                      ends=(_pick(cands[i], max(k - 1, 0)), _pick(cands[i], min(k + 1, top))))
        if hit is not None:
            held[i] = hit
    cand = point(sites, held, [0] * len(sites), found.n_prfaas)
    return cand if cand.lambda_max_rps >= found.lambda_max_rps * (1 - _ROUND_OFF) else found


_ROUND_OFF = 1e-12  # the balance's Lambda may sit this far below the zoom's by round-off alone


def balance(sites: Sequence[SiteModel], held: Sequence[Candidates], i: int, n_prfaas: float, method: Method, *,
            ends: tuple[Candidates, Candidates]) -> Candidates | None:
    """Site i at the t_i between ``ends`` (its candidates at two thresholds, one split) where its
    stages balance, the other sites held at ``held``: the root of log min(Theta_compute,
    Theta_link,i) - log Theta_pd-p,i (each bound on the total Lambda), the first two rising with t_i
    and the last falling; None without a sign change. For one PD site this is Eq. 7's crossing
    Theta_prfaas / p = Theta_pd-p / (1 - p) (``core.optimize``)."""
    site, n_p = sites[i], int(ends[0].n_p[0])
    rest = sum(float(site_stages(s, c).compute_load[0]) for j, (s, c) in enumerate(zip(sites, held, strict=True))
               if j != i)
    seen: dict[float, Candidates] = {}

    def gap_of(c: Candidates) -> float:
        st = site_stages(site, c)
        prfaas = min(float(compute_bounds(n_prfaas, rest + st.compute_load)[0]), float(st.link[0]))
        with np.errstate(divide="ignore"):  # a link below a float's resolution carries 0 req/s: gap -inf
            return float(np.log(prfaas) - np.log(float(st.pd_prefill[0])))

    def gap(t: float) -> float:
        seen[t] = at(site, [t], n_p, method)
        return gap_of(seen[t])

    ga, gb = gap_of(ends[0]), gap_of(ends[1])
    if ga == 0.0:
        return ends[0]
    if not ga * gb < 0:
        return None
    t = illinois(gap, float(ends[0].t[0]), float(ends[1].t[0]), ga, gb, xtol=1e-3)
    return seen[t] if t in seen else at(site, [t], n_p, method)
