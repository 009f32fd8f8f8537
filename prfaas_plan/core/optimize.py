"""Search for the threshold t and the split N_p / N_d (and optionally N_prfaas) maximising Lambda_max.

The paper solves Eqs. 7-8 by exhaustive 2-D grid search. Here: a vectorised evaluation of Eq. 6
over the whole (t, N_prfaas, N_p) grid, N_d = N_local - N_p, in chunks of thresholds so memory is
bounded by a chunk and the per-split results, not by the grid (two passes: the best Lambda of each
split, then the threshold that reaches it with the most prefill headroom); then, at the best split,
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

from dataclasses import dataclass, fields

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core import joint
from prfaas_plan.core.lengths import LengthDistribution
from prfaas_plan.core.stages import SiteModel, offload_all_threshold
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


CHUNK_BYTES = 32 << 20  # the grid is weighed in chunks of thresholds of about this many bytes of working set
_ARRAYS = 8  # (T_chunk, K, S) float64 arrays alive at once while a chunk is weighed


@dataclass(frozen=True, slots=True, kw_only=True)
class Search:
    """The result of a search: the best point, runners-up and the space it came from.

    ``evaluations`` counts the grid's cells (those of the root finder and of the two special
    cases are not counted). The grid itself is not kept: ``lambda_at`` (and ``lambda_grid``, the
    whole of it) and ``split_maxima`` recompute it from the routing, the space and the two rates.
    """

    best: OperatingPoint
    top: tuple[OperatingPoint, ...]
    routing: Routing
    space: Space
    refined: bool
    evaluations: int
    link_bytes_per_s: float
    decode_rps_per_instance: float

    def lambda_at(self, ts: slice = slice(None)) -> NDArray[np.float64]:
        """Lambda_max of the grid over thresholds[ts], shape (T_ts, K, S), recomputed."""
        return grid_bounds(self.routing, self.space, link_bytes_per_s=self.link_bytes_per_s,
                           decode_rps_per_instance=self.decode_rps_per_instance, ts=ts).lambda_max

    @property
    def lambda_grid(self) -> NDArray[np.float64]:
        """The whole grid, shape (T, K, S): thresholds x N_prfaas options x N_p options; recomputed
        at each access and as large as the grid (``split_maxima`` needs only a chunk)."""
        return self.lambda_at()

    def split_maxima(self) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
        """Per split (N_prfaas option, N_p option): the grid's highest Lambda over t and the first
        threshold index reaching it, i.e. ``lambda_grid.max(axis=0)``, ``lambda_grid.argmax(axis=0)``,
        computed a chunk of thresholds at a time."""
        kw = {"link_bytes_per_s": self.link_bytes_per_s, "decode_rps_per_instance": self.decode_rps_per_instance}
        best, at = None, None
        for ts in _chunks(self.space):
            m, i = _chunk_max(_lambda(grid_bounds(self.routing, self.space, ts=ts, **kw)), ts.start)
            if best is None or at is None:
                best, at = m, i
            else:
                take = _later_wins(best, m)
                best, at = np.where(take, m, best), np.where(take, i, at)
        assert best is not None and at is not None
        return best, at


def _routing_at(r: Routing, ts: slice) -> Routing:
    return Routing(**{f.name: getattr(r, f.name)[ts] for f in fields(Routing)})


def grid_bounds(r: Routing, space: Space, *, link_bytes_per_s: float, decode_rps_per_instance: float,
                ts: slice | None = None) -> Bounds:
    """The four bounds over the grid, shape (T, K, S); with ``ts`` over thresholds[ts] only."""
    n_prfaas = space.n_prfaas.reshape(1, -1, 1)
    n_p = space.n_p.reshape(1, 1, -1)
    return bounds(r if ts is None else _routing_at(r, ts), n_prfaas=n_prfaas, n_p=n_p, n_d=space.n_local - n_p,
                  link_bytes_per_s=link_bytes_per_s, decode_rps_per_instance=decode_rps_per_instance)


def _chunks(space: Space) -> list[slice]:
    """Slices of the threshold axis whose (T_chunk, K, S) arrays stay within ``CHUNK_BYTES`` (at
    least one threshold a chunk; one empty chunk for no thresholds)."""
    cells = max(len(space.n_prfaas) * len(space.n_p), 1)
    step = max(1, CHUNK_BYTES // (cells * 8 * _ARRAYS))
    n = len(space.thresholds)
    return [slice(a, min(a + step, n)) for a in range(0, n, step)] or [slice(0, 0)]


def _lambda(b: Bounds) -> NDArray[np.float64]:
    """``b.lambda_max`` (the same operations in the same order) with one temporary fewer."""
    out = np.minimum(b.pd_prefill, b.decode)
    return np.minimum(np.minimum(b.prfaas_compute, b.link), out, out=out)


def _chunk_max(x: NDArray[np.float64], offset: int) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """np.max and np.argmax over axis 0 of one chunk (offset: the chunk's first index)."""
    if not len(x):
        x.max(axis=0)  # no thresholds: the whole grid's np.max raises this ValueError
    i = x.argmax(axis=0)
    return np.take_along_axis(x, i[None], axis=0)[0], i + offset


def _later_wins(best: NDArray[np.float64], m: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Where a later chunk's maximum m replaces the running one, as np.argmax over the whole axis
    would choose: only if strictly higher (the first index keeps a tie), a NaN being the highest
    (the first NaN wins)."""
    return ~np.isnan(best) & (np.isnan(m) | (m > best))


def _second_smallest(a: NDArray[np.float64], b: NDArray[np.float64], c: NDArray[np.float64],
                     d: NDArray[np.float64]) -> NDArray[np.float64]:
    """np.sort([a, b, c, d], axis=0)[1] by a sorting network, NaN ordered last as np.sort orders
    it (fmin ignores a NaN, maximum keeps it): the smallest is min(lo1, lo2), the second the
    smallest of the other three, of which max(lo1, lo2) and min(hi1, hi2) are the candidates."""
    lo1, hi1 = np.fmin(a, b), np.maximum(a, b)
    lo2, hi2 = np.fmin(c, d), np.maximum(c, d)
    return np.fmin(np.maximum(lo1, lo2), np.fmin(hi1, hi2))


def _refine(lengths: LengthDistribution, curves: Curves, method: Method, r: Routing, i: int, *, n_prfaas: int,
            n_p: int, n_d: int, link_bytes_per_s: float, decode_rps_per_instance: float) -> float | None:
    """t of the Eq. 7 crossing in a grid cell next to index i, or None if there is none: the joint
    search's balance (``core.joint.balance``) at the one site."""
    site = SiteModel(name="", link="", lengths=lengths, curves=curves, demand_share=1.0,
                     link_bytes_per_s=link_bytes_per_s, decode_rps_per_instance=decode_rps_per_instance,
                     n_local=n_p + n_d)
    ts = r.t
    for a, b in ((i - 1, i), (i, i + 1)):
        if a < 0 or b >= len(ts):
            continue
        lo = joint.at(site, [float(ts[a])], n_p, method)
        hit = joint.balance([site], [lo], 0, n_prfaas, method, ends=(lo, joint.at(site, [float(ts[b])], n_p, method)))
        if hit is not None:
            return float(hit.t[0])
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
    chunks = _chunks(space)
    # best threshold per split, then splits ranked by their best Lambda. Where Lambda is flat in t
    # (decode binds), ties go to the t with the most prefill headroom, i.e. the Eq. 7 balance.
    # Pass 1: per_split = max over t of Lambda (np.maximum keeps a NaN as np.max does).
    per_split: NDArray[np.float64] | None = None
    for ts in chunks:
        m = _lambda(grid_bounds(r, space, ts=ts, **kw)).max(axis=0)
        per_split = m if per_split is None else np.maximum(per_split, m)
    assert per_split is not None
    # Pass 2: t_best = the first t of most headroom among those within 1e-9 of per_split, and the
    # split's four bounds there (for its second-tightest bound)
    floor = per_split * (1 - 1e-9)
    best_room, t_best, at_best = None, None, None
    for ts in chunks:
        gb = grid_bounds(r, space, ts=ts, **kw)
        # Lambda as Bounds.lambda_max computes it, and the headroom min(compute, link, PD-P) from
        # the same min(compute, link)
        room = np.minimum(gb.prfaas_compute, gb.link)
        lam = np.minimum(gb.pd_prefill, gb.decode)
        np.minimum(room, lam, out=lam)
        np.minimum(room, gb.pd_prefill, out=room)
        np.copyto(room, -np.inf, where=~(lam >= floor))  # np.where(lam >= floor, headroom, -inf)
        del lam
        m, i = _chunk_max(room, ts.start)
        del room
        here = [np.take_along_axis(x, (i - ts.start)[None], axis=0)[0]
                for x in (gb.prfaas_compute, gb.link, gb.pd_prefill, gb.decode)]
        if best_room is None or t_best is None or at_best is None:
            best_room, t_best, at_best = m, i, here
        else:
            take = _later_wins(best_room, m)
            best_room, t_best = np.where(take, m, best_room), np.where(take, i, t_best)
            at_best = [np.where(take, h, old) for h, old in zip(here, at_best, strict=True)]
        del gb
    assert t_best is not None and at_best is not None
    # splits with equal Lambda (e.g. when one stage is idle) rank by their second-tightest bound
    second = _second_smallest(*at_best)
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
    return Search(best=best, top=tuple(ranked), routing=r, space=space, refined=refined, evaluations=space.size,
                  **kw)
