"""Search for the threshold t and the split N_p / N_d (and optionally N_prfaas) maximising Lambda_max.

The paper solves Eqs. 7-8 by exhaustive 2-D grid search. Here: one vectorised evaluation of
Eq. 6 over the whole (t, N_prfaas, N_p) grid, N_d = N_local - N_p; then, at the best split,
the Eq. 7 crossing Theta_prfaas / p = Theta_pd-p / (1 - p) is located by a bracketing root finder
(regula falsi, Illinois variant) so t is not limited to the grid step. The refined point is kept
only if it beats the grid's best.

Two special cases of the configuration are evaluated apart from the grid, so the plan is never
below them whatever the threshold range: every request offloaded (p = 1, t below the shortest
length, N_p = 0 and N_d = N_local: naive heterogeneous PD; N_p = 0 only there, since with p < 1
short requests would have no local prefill) and none offloaded (p = 0, t = the longest length,
every split N_p / N_d: homogeneous PD on the local cluster). Either replaces the best only if it is
higher by more than a rounding margin, so a grid point that equals it is kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core.lengths import LengthDistribution
from prfaas_plan.core.roots import illinois
from prfaas_plan.core.stages import offload_all_threshold
from prfaas_plan.core.throughput import (
    Bounds,
    Curves,
    Method,
    OperatingPoint,
    Routing,
    bounds,
    operating_point,
    routing,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Space:
    """Candidates: thresholds (tokens), PrfaaS instance counts, local instance total."""

    thresholds: NDArray[np.float64]
    n_prfaas: NDArray[np.int64]
    n_local: int

    @property
    def n_p(self) -> NDArray[np.int64]:
        return np.arange(1, self.n_local, dtype=np.int64)

    @property
    def size(self) -> int:
        return len(self.thresholds) * len(self.n_prfaas) * len(self.n_p)


_MARGIN = 1e-9  # relative: a special case must beat the grid's best by more than this to replace it


@dataclass(frozen=True, slots=True, kw_only=True)
class Search:
    """The result of a search: the best point, runners-up and the grid it came from.

    ``evaluations`` counts the grid's cells (those of the root finder and of the two special
    cases are not counted).
    """

    best: OperatingPoint
    top: tuple[OperatingPoint, ...]
    routing: Routing
    lambda_grid: NDArray[np.float64]  # shape (T, K, S): thresholds x N_prfaas options x N_p options
    space: Space
    refined: bool
    evaluations: int


def grid_bounds(r: Routing, space: Space, *, link_bytes_per_s: float, decode_rps_per_instance: float) -> Bounds:
    n_prfaas = space.n_prfaas.reshape(1, -1, 1)
    n_p = space.n_p.reshape(1, 1, -1)
    return bounds(r, n_prfaas=n_prfaas, n_p=n_p, n_d=space.n_local - n_p, link_bytes_per_s=link_bytes_per_s,
                  decode_rps_per_instance=decode_rps_per_instance)


def _refine(lengths: LengthDistribution, curves: Curves, method: Method, r: Routing, i: int, *, n_prfaas: int,
            n_p: int, n_d: int, link_bytes_per_s: float, decode_rps_per_instance: float) -> float | None:
    """t of the Eq. 7 crossing in a grid cell next to index i, or None if there is none."""

    def gap(t: float) -> float:
        rr = routing(lengths, curves, [t], method)
        b = bounds(rr, n_prfaas=n_prfaas, n_p=n_p, n_d=n_d, link_bytes_per_s=link_bytes_per_s,
                   decode_rps_per_instance=decode_rps_per_instance)
        prfaas = min(float(b.prfaas_compute[0]), float(b.link[0]))
        return float(np.log(prfaas) - np.log(float(b.pd_prefill[0])))

    ts = r.t
    for a, b in ((i - 1, i), (i, i + 1)):
        if a < 0 or b >= len(ts):
            continue
        ga, gb = gap(float(ts[a])), gap(float(ts[b]))
        if ga == 0.0:
            return float(ts[a])
        if ga * gb < 0:
            return illinois(gap, float(ts[a]), float(ts[b]), ga, gb, xtol=1e-3)
    return None


def special_cases(lengths: LengthDistribution, curves: Curves, space: Space, *, method: Method,
                  link_bytes_per_s: float, decode_rps_per_instance: float) -> list[OperatingPoint]:
    """The best all-offloaded point (p = 1, N_p = 0; the most N_prfaas, ties to the fewest) and,
    for a finite longest length, the best none-offloaded point (p = 0; fewest N_prfaas)."""
    kw = {"link_bytes_per_s": link_bytes_per_s, "decode_rps_per_instance": decode_rps_per_instance}
    r = routing(lengths, curves, [offload_all_threshold(lengths)], method)
    lam = bounds(r, n_prfaas=space.n_prfaas.reshape(1, -1), n_p=0, n_d=space.n_local, **kw).lambda_max[0]
    k = int(lam.argmax())
    out = [operating_point(r, 0, n_prfaas=int(space.n_prfaas[k]), n_p=0, n_d=space.n_local, **kw)]
    hi = float(lengths.hi)
    if np.isfinite(hi) and len(space.n_p):
        r0 = routing(lengths, curves, [hi], method)
        n_prfaas = int(space.n_prfaas.min())
        lam0 = bounds(r0, n_prfaas=n_prfaas, n_p=space.n_p.reshape(1, -1), n_d=space.n_local - space.n_p.reshape(1, -1),
                      **kw).lambda_max[0]
        n_p = int(space.n_p[int(lam0.argmax())])
        out.append(operating_point(r0, 0, n_prfaas=n_prfaas, n_p=n_p, n_d=space.n_local - n_p, **kw))
    return out


def search(lengths: LengthDistribution, curves: Curves, space: Space, *, method: Method, link_bytes_per_s: float,
           decode_rps_per_instance: float, top: int = 5, refine: bool = True, special: bool = True) -> Search:
    """Maximise Lambda_max (Eq. 6) over the space; see the module docstring.

    ``special``: also weigh the all-offloaded and none-offloaded configurations (off: the grid only).
    """
    r = routing(lengths, curves, space.thresholds, method)
    kw = {"link_bytes_per_s": link_bytes_per_s, "decode_rps_per_instance": decode_rps_per_instance}
    gb = grid_bounds(r, space, **kw)
    lam = gb.lambda_max
    # best threshold per split, then splits ranked by their best Lambda. Where Lambda is flat in t
    # (decode binds), ties go to the t with the most prefill headroom, i.e. the Eq. 7 balance.
    per_split = lam.max(axis=0)
    headroom = np.minimum(np.minimum(gb.prfaas_compute, gb.link), gb.pd_prefill)
    t_best = np.where(lam >= per_split * (1 - 1e-9), headroom, -np.inf).argmax(axis=0)
    # splits with equal Lambda (e.g. when one stage is idle) rank by their second-tightest bound
    stack = np.sort(np.stack(np.broadcast_arrays(gb.prfaas_compute, gb.link, gb.pd_prefill, gb.decode)), axis=0)
    second = np.take_along_axis(stack[1], t_best[None], axis=0)[0]
    rounded = np.round(per_split / per_split.max(), 9) if per_split.max() > 0 else per_split
    order = np.lexsort((-second.ravel(), -rounded.ravel()))[:top]
    points = []
    for idx in order:
        ki, si = np.unravel_index(idx, per_split.shape)
        n_prfaas, n_p = int(space.n_prfaas[ki]), int(space.n_p[si])
        points.append(operating_point(r, int(t_best[ki, si]), n_prfaas=n_prfaas, n_p=n_p,
                                      n_d=space.n_local - n_p, **kw))
    best, refined = points[0], False
    if refine and len(space.thresholds) > 1:
        ki, si = np.unravel_index(order[0], per_split.shape)
        t_star = _refine(lengths, curves, method, r, int(t_best[ki, si]), n_prfaas=best.n_prfaas, n_p=best.n_p,
                         n_d=best.n_d, **kw)
        if t_star is not None:
            rr = routing(lengths, curves, [t_star], method)
            cand = operating_point(rr, 0, n_prfaas=best.n_prfaas, n_p=best.n_p, n_d=best.n_d, **kw)
            if cand.lambda_max_rps >= best.lambda_max_rps:
                best, refined = cand, True
    ranked = [best, *points[1:]]
    if special:
        for cand in special_cases(lengths, curves, space, method=method, **kw):
            if cand.lambda_max_rps > ranked[0].lambda_max_rps * (1 + _MARGIN):
                best, refined = cand, False
                ranked = [cand, *ranked][:max(top, 1)]
    return Search(best=best, top=tuple(ranked), routing=r, lambda_grid=lam, space=space, refined=refined,
                  evaluations=space.size)
