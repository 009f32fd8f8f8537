"""The chunked search (issue 13) against the whole-grid algorithm it replaced, kept here as the
oracle: the same best point, top list and refined flag, bit for bit (compared by repr, which
tells every float apart, -0.0 from 0.0 included), over random small spaces, length distributions
and chunk sizes; the lazily recomputed grid equal to the old stored one; and a working set
bounded by a chunk, not by the grid."""

from __future__ import annotations

import tracemalloc
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prfaas_plan.core import optimize
from prfaas_plan.core.lengths import Empirical, Fixed, Gamma, TruncatedLogNormal, Uniform
from prfaas_plan.core.optimize import Space, search
from prfaas_plan.core.throughput import Curves, Method, bounds, operating_point, routing


def reference_search(lengths, curves, space, *, method, link_bytes_per_s, decode_rps_per_instance, top=5,
                     refine=True, special=True):
    """The search as it was before issue 13 (whole (T, K, S) grid in memory, np.sort of the four
    bounds stacked): (best, top, refined, lambda_grid)."""
    r = routing(lengths, curves, space.thresholds, method)
    kw = {"link_bytes_per_s": link_bytes_per_s, "decode_rps_per_instance": decode_rps_per_instance}
    n_prfaas = space.n_prfaas.reshape(1, -1, 1)
    n_p = space.n_p.reshape(1, 1, -1)
    gb = bounds(r, n_prfaas=n_prfaas, n_p=n_p, n_d=space.n_local - n_p, **kw)
    lam = gb.lambda_max
    per_split = lam.max(axis=0)
    headroom = np.minimum(np.minimum(gb.prfaas_compute, gb.link), gb.pd_prefill)
    t_best = np.where(lam >= per_split * (1 - 1e-9), headroom, -np.inf).argmax(axis=0)
    stack = np.sort(np.stack(np.broadcast_arrays(gb.prfaas_compute, gb.link, gb.pd_prefill, gb.decode)), axis=0)
    second = np.take_along_axis(stack[1], t_best[None], axis=0)[0]
    rounded = np.round(per_split / per_split.max(), 9) if per_split.max() > 0 else per_split
    order = np.lexsort((-second.ravel(), -rounded.ravel()))[:top]
    points = []
    for idx in order:
        ki, si = np.unravel_index(idx, per_split.shape)
        n_prf, n_p_ = int(space.n_prfaas[ki]), int(space.n_p[si])
        points.append(operating_point(r, int(t_best[ki, si]), n_prfaas=n_prf, n_p=n_p_, n_d=space.n_local - n_p_,
                                      **kw))
    best, refined = points[0], False
    if refine and len(space.thresholds) > 1:
        ki, si = np.unravel_index(order[0], per_split.shape)
        t_star = optimize._refine(lengths, curves, method, r, int(t_best[ki, si]), n_prfaas=best.n_prfaas,
                                  n_p=best.n_p, n_d=best.n_d, **kw)
        if t_star is not None:
            rr = routing(lengths, curves, [t_star], method)
            cand = operating_point(rr, 0, n_prfaas=best.n_prfaas, n_p=best.n_p, n_d=best.n_d, **kw)
            if cand.lambda_max_rps >= best.lambda_max_rps:
                best, refined = cand, True
    ranked = [best, *points[1:]]
    if special:
        for cand in optimize.special_cases(lengths, curves, space, method=method, **kw):
            if cand.lambda_max_rps > ranked[0].lambda_max_rps * (1 + optimize._MARGIN):
                best, refined = cand, False
                ranked = [cand, *ranked][:max(top, 1)]
    return best, tuple(ranked), refined, lam


def curves(a, b, c, factor, kv_per_token, state):
    def t_fast(x):
        return a + b * np.asarray(x, float) + c * np.asarray(x, float) ** 2

    return Curves(t_prfaas=t_fast, t_local=lambda x: a + factor * (t_fast(x) - a),
                  s_kv=lambda x: state + kv_per_token * np.asarray(x, float))


LENGTHS = [
    TruncatedLogNormal(mu=9.9, sigma=1.0, lo=128, hi=131072),
    Uniform(lo=100, hi=50000),
    Gamma(shape=2.0, scale=8000.0, lo=64, hi=200000),
    Fixed(value=8192),
    Empirical(values=np.array([300.0, 1000.0, 2000.0, 2000.0, 9000.0, 60000.0])),
]


@st.composite
def cases(draw):
    L = draw(st.sampled_from(LENGTHS))
    lo, hi = float(L.lo), float(L.hi) if np.isfinite(L.hi) else 131072.0
    n_t = draw(st.integers(1, 40))
    if draw(st.booleans()):  # evenly spaced, the planner's grid
        thresholds = np.linspace(max(lo - 1, 1.0), hi, n_t)
    else:  # anywhere in (and a little past) the range, repeats allowed
        thresholds = np.array(sorted(draw(st.lists(st.floats(1.0, hi * 1.2), min_size=n_t, max_size=n_t))))
    n_prfaas = np.array(draw(st.lists(st.integers(1, 12), min_size=1, max_size=5)), dtype=np.int64)
    space = Space(thresholds=thresholds, n_prfaas=n_prfaas, n_local=draw(st.integers(2, 12)))
    c = curves(draw(st.floats(0.05, 0.5)), draw(st.floats(1e-6, 1e-4)), draw(st.floats(0.0, 2e-10)),
               draw(st.floats(1.0, 6.0)), draw(st.sampled_from([11520.0, 17280.0, 250000.0])),
               draw(st.sampled_from([0.0, 1.8e8])))
    link = 10 ** draw(st.floats(6.0, 11.0))
    # decode rates from far below to far above prefill: decode-bound (Lambda flat in t, the
    # headroom tie rule) and prefill-bound grids; a round rate makes exact ties between splits
    dec = draw(st.one_of(st.floats(0.01, 20.0), st.sampled_from([0.25, 0.5, 1.0])))
    method = draw(st.sampled_from([Method.PAPER, Method.EXACT]))
    kw = {"method": method, "link_bytes_per_s": link, "decode_rps_per_instance": dec,
          "top": draw(st.integers(1, 8)), "refine": draw(st.booleans()), "special": draw(st.booleans())}
    # a working set from one threshold a chunk up to the whole grid in one
    chunk = draw(st.integers(1, 64)) * optimize._ARRAYS * 8 * len(n_prfaas) * (space.n_local - 1)
    return L, c, space, kw, chunk


def _same(a, b):
    assert repr(a) == repr(b)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_chunked_search_is_the_whole_grid_search(case):
    L, c, space, kw, chunk = case
    best, top, refined, lam = reference_search(L, c, space, **kw)
    with mock.patch.object(optimize, "CHUNK_BYTES", chunk):
        res = search(L, c, space, **kw)
        _same(res.best, best)
        _same(res.top, top)
        assert res.refined is refined
        grid = res.lambda_grid
        assert grid.shape == lam.shape and grid.tobytes() == lam.tobytes()
        per_split, at = res.split_maxima()
        assert per_split.tobytes() == lam.max(axis=0).tobytes()
        assert np.array_equal(at, lam.argmax(axis=0))


@pytest.mark.parametrize("chunk", [1, 10**9])
def test_ties_everywhere(chunk):
    """Lambda flat in t and equal across N_prfaas (decode binds everywhere): the first t of most
    headroom and the first split in order, as before, whatever the chunking."""
    L = Fixed(value=8192)
    c = curves(0.389, 4.1e-5, 9.5e-11, 1.0, 17280, 1.8e8)
    space = Space(thresholds=np.arange(128, 16385, 128.0), n_prfaas=np.array([4, 4, 8, 2]), n_local=8)
    kw = {"method": Method.PAPER, "link_bytes_per_s": 12.5e9, "decode_rps_per_instance": 0.01, "top": 12}
    best, top, refined, _ = reference_search(L, c, space, **kw)
    with mock.patch.object(optimize, "CHUNK_BYTES", chunk):
        res = search(L, c, space, **kw)
    _same((res.best, res.top, res.refined), (best, top, refined))


def test_second_smallest_is_the_sort():
    rng = np.random.default_rng(13)
    x = rng.choice([0.0, -0.0, 1.0, 2.0, np.inf, -np.inf, np.nan, 1e300], size=(4, 20000))
    x[:, :5000] = rng.normal(size=(4, 5000))
    ref = np.sort(x, axis=0)[1]
    got = optimize._second_smallest(*x)
    assert np.array_equal(got, ref, equal_nan=True)


def test_working_set_is_a_chunk_not_the_grid():
    """~3.3M candidates: the old search held ~15 grid-sized arrays (~26 MB each); now the peak of
    traced allocations is about one chunk's budget plus the per-split arrays."""
    L = TruncatedLogNormal(mu=9.9, sigma=1.0, lo=128, hi=131072)
    c = curves(0.389, 4.1e-5, 9.5e-11, 3.3, 17280, 1.8e8)
    space = Space(thresholds=np.linspace(128, 131072, 8192), n_prfaas=np.arange(1, 58), n_local=8)
    grid_bytes = space.size * 8
    assert grid_bytes > 25e6
    budget = 8 << 20
    with mock.patch.object(optimize, "CHUNK_BYTES", budget):
        tracemalloc.start()
        try:
            res = search(L, c, space, method=Method.PAPER, link_bytes_per_s=12.5e9, decode_rps_per_instance=0.78)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert res.evaluations == space.size
    assert peak < budget * 1.25 + 64 * len(space.n_prfaas) * len(space.n_p) * 8, peak
    assert peak < grid_bytes / 2
