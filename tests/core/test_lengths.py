"""Length distributions: paper numbers, closed forms vs quadrature, conventions, invariants."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate
from scipy.special import ndtr

from prfaas_plan.core.lengths import (
    Empirical,
    Fixed,
    Gamma,
    LengthDistribution,
    TruncatedLogNormal,
    Uniform,
)
from prfaas_plan.errors import SpecError

PAPER = TruncatedLogNormal.paper()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _lognormal_moment(d: TruncatedLogNormal, a, b, k: int):
    """E[L^k | a < L < b] of a truncated log-normal, closed form (test's own, plain ndtr)."""
    z = lambda x: (np.log(x) - d.mu) / d.sigma  # noqa: E731
    num = np.exp(k * d.mu + 0.5 * k * k * d.sigma**2) * (ndtr(z(b) - k * d.sigma) - ndtr(z(a) - k * d.sigma))
    return num / (ndtr(z(b)) - ndtr(z(a)))


def _quad_conditional(d, f, a, b):
    """E[f(L) | a < L < b] by adaptive quadrature of the density (independent reference)."""
    pdf = {
        TruncatedLogNormal: lambda x: np.exp(-0.5 * ((np.log(x) - d.mu) / d.sigma) ** 2) / x,
        Gamma: lambda x: x ** (d.shape - 1) * np.exp(-x / d.scale),
    }[type(d)]
    pts = np.geomspace(a, b, 40)
    num = sum(integrate.quad(lambda x: f(x) * pdf(x), u, v, epsrel=1e-12)[0] for u, v in itertools.pairwise(pts))
    den = sum(integrate.quad(pdf, u, v, epsrel=1e-12)[0] for u, v in itertools.pairwise(pts))
    return num / den


# ----------------------------------------------------------------------------- the paper's workload


@pytest.mark.paper
def test_paper_threshold_split():
    """docs/model.md#the-case-study derived facts at t = 19.4K = 19,400 tokens.

    Tolerance: half a unit of the last printed digit (p to 4 decimals, lengths to whole tokens).
    """
    t = 19_400
    assert PAPER.tail_prob(t) == pytest.approx(0.4957, abs=5e-5)  # p
    assert PAPER.mean_above(t) == pytest.approx(45_046, abs=0.5)  # l_long
    assert PAPER.mean_below(t) == pytest.approx(10_224, abs=0.5)  # l_short, printed "~10,224"
    assert PAPER.mean == pytest.approx(27_486, abs=0.5)
    p, l_long, l_short = PAPER.tail_prob(t), PAPER.mean_above(t), PAPER.mean_below(t)
    assert p * l_long + (1 - p) * l_short == pytest.approx(PAPER.mean, rel=1e-12)
    assert PAPER.lo == 128.0 and PAPER.hi == 131_072.0


def test_paper_closed_forms_match_independent_quadrature():
    for t in (128.0, 1_000.0, 19_400.0, 100_000.0):
        ref_above = _quad_conditional(PAPER, lambda x: x, t, PAPER.hi)
        assert PAPER.mean_above(t) == pytest.approx(ref_above, rel=1e-9)
    assert PAPER.mean == pytest.approx(_quad_conditional(PAPER, lambda x: x, 128.0, 131_072.0), rel=1e-9)
    assert PAPER.mean_below(19_400) == pytest.approx(_quad_conditional(PAPER, lambda x: x, 128, 19_400), rel=1e-9)


# ----------------------------------------------------------------------------- quadrature


T_GRID = np.concatenate([np.geomspace(128.0, 131_072.0, 2_500)[:-1], [131_071.5]])


def test_expect_identity_equals_closed_form_mean():
    """f(l) = l: target rel 1e-4; the conditional-mean nodes make it exact up to rounding."""
    assert np.allclose(PAPER.expect_above(lambda x: x, T_GRID), PAPER.mean_above(T_GRID), rtol=1e-9, atol=0)
    assert np.allclose(PAPER.expect_below(lambda x: x, T_GRID[1:]), PAPER.mean_below(T_GRID[1:]), rtol=1e-9,
                       atol=0)


def test_expect_square_matches_closed_form():
    """f(l) = l^2: target rel 1e-3; measured ~1e-6 over the whole range of t."""
    above = PAPER.expect_above(lambda x: x * x, T_GRID)
    below = PAPER.expect_below(lambda x: x * x, T_GRID[1:])
    assert np.max(np.abs(above / _lognormal_moment(PAPER, T_GRID, PAPER.hi, 2) - 1)) < 1e-5
    assert np.max(np.abs(below / _lognormal_moment(PAPER, PAPER.lo, T_GRID[1:], 2) - 1)) < 1e-5


@pytest.mark.parametrize("dist", [PAPER, Gamma(shape=1.5, scale=12_000.0, lo=64.0, hi=200_000.0),
                                  Gamma(shape=0.7, scale=9_000.0)])
def test_expect_smooth_function_matches_adaptive_quadrature(dist):
    prefill = lambda x: 0.389 + 2.0e-5 * x + 1.5e-10 * x * x  # noqa: E731  a T_prefill-like polynomial
    for t in (500.0, 19_400.0, 60_000.0):
        top = dist.hi if math.isfinite(dist.hi) else float(dist.quantile(1 - 1e-13))
        assert dist.expect_above(prefill, t) == pytest.approx(_quad_conditional(dist, prefill, t, top), rel=1e-6)
        assert dist.expect_below(np.sqrt, t) == pytest.approx(_quad_conditional(dist, np.sqrt, dist.lo, t),
                                                               rel=1e-6)


def test_expect_is_continuous_across_grid_cells():
    edges = PAPER._grid.edges[1:-1:97]
    left = np.nextafter(edges, -np.inf)
    f = lambda x: x**1.5  # noqa: E731
    for method in (PAPER.expect_above, PAPER.expect_below):
        assert np.allclose(method(f, left), method(f, edges), rtol=1e-12, atol=0)


def test_expect_scalar_function_and_shapes():
    t = np.array([[1_000.0, 19_400.0], [50_000.0, 200_000.0]])
    out = PAPER.expect_above(lambda x: 2.0, t)
    assert isinstance(out, np.ndarray) and out.shape == (2, 2) and np.all(out == 2.0)
    assert isinstance(PAPER.expect_above(np.log, 19_400), float)
    assert isinstance(PAPER.tail_prob(19_400), float)
    assert isinstance(PAPER.mean_above(np.float64(19_400)), float)
    assert PAPER.tail_prob(t).shape == (2, 2)


# ----------------------------------------------------------------------------- conventions at the edges


ALL = [
    PAPER,
    TruncatedLogNormal(mu=8.0, sigma=1.5),
    Gamma(shape=2.0, scale=5_000.0, hi=1e6),
    Uniform(lo=10.0, hi=20.0),
    Fixed(value=4_096),
    Empirical(values=[100, 200, 200, 5_000]),
]


@pytest.mark.parametrize("dist", ALL, ids=lambda d: type(d).__name__)
def test_zero_probability_sets_use_edge_values(dist):
    sq = lambda x: x * x  # noqa: E731
    above_all, below_all = dist.hi * 2, dist.lo / 2
    assert dist.tail_prob(above_all) == 0.0 and dist.tail_prob(below_all) == 1.0
    assert dist.mean_above(above_all) == dist.hi
    assert dist.mean_below(below_all) == dist.lo
    assert dist.expect_above(sq, above_all) == pytest.approx(dist.hi**2, rel=1e-12)
    assert dist.expect_below(sq, below_all) == pytest.approx(dist.lo**2, rel=1e-12)
    assert dist.mean_above(below_all) == pytest.approx(dist.mean, rel=1e-12)
    assert dist.mean_below(above_all) == pytest.approx(dist.mean, rel=1e-12)
    assert isinstance(dist, LengthDistribution)
    json.dumps(dist.describe(), allow_nan=False)


def test_unbounded_support_far_tail_stays_finite():
    g = Gamma(shape=2.0, scale=5_000.0)
    x = 1e6 / 5_000.0  # closed form for k = 2: E[L | L > t] = 2 theta (1 + x + x^2/2) / (1 + x)
    assert g.mean_above(1e6) == pytest.approx(2 * 5_000.0 * (1 + x + x * x / 2) / (1 + x), rel=1e-9)
    assert g.expect_above(lambda v: v, 1e9) == pytest.approx(1e9 + 5_000.0, rel=1e-6)  # tail mass underflows
    assert g.describe()["hi_tokens"] is None
    lognormal = TruncatedLogNormal(mu=9.9, sigma=1.0)
    assert math.isfinite(lognormal.mean_above(1e12)) and lognormal.mean_above(1e12) > 1e12


@pytest.mark.parametrize("sigma", [1e-100, 1e-160, 1e-200, 1e-300, 5e-324])
def test_a_log_normal_narrower_than_a_float_is_a_point_mass_not_nan(sigma):
    """(ln l - mu) / sigma beyond 1e154 (its square overflows) or inf (a subnormal sigma): the
    cells away from the median have mass 0, not NaN, and the law is its median e^mu."""
    d = TruncatedLogNormal(mu=9.9, sigma=sigma, lo=128, hi=131072)
    median = math.exp(9.9)
    assert d.mean == pytest.approx(median, rel=1e-12)
    t = np.array([128.0, 1000.0, median * 0.999, median * 1.001, 100_000.0, 131072.0])
    np.testing.assert_array_equal(d.tail_prob(t), [1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    np.testing.assert_allclose(d.mean_above(t[:3]), median, rtol=1e-9)
    np.testing.assert_allclose(d.mean_below(t[3:]), median, rtol=1e-9)
    np.testing.assert_allclose(d.expect_above(np.sqrt, t[:3]), math.sqrt(median), rtol=1e-9)
    np.testing.assert_allclose(d.quantile([0.1, 0.9]), median, rtol=1e-9)
    assert np.isfinite(d._grid.masses).all() and d._grid.masses.sum() == pytest.approx(1.0, rel=1e-12)


def test_nan_threshold_and_bad_quantile_rejected():
    with pytest.raises(ValueError, match="NaN"):
        PAPER.tail_prob([1.0, math.nan])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        PAPER.quantile(1.5)


# ----------------------------------------------------------------------------- hand-computed cases


def test_uniform_hand_computed():
    u = Uniform(lo=10, hi=20)
    assert u.mean == 15.0
    assert u.tail_prob(12.5) == 0.75
    assert u.mean_above(12.5) == 16.25 and u.mean_below(12.5) == 11.25
    assert u.expect_above(lambda x: x * x, 15.0) == pytest.approx((15**2 + 15 * 20 + 20**2) / 3, rel=1e-7)
    assert u.quantile(0.3) == pytest.approx(13.0)


def test_fixed_hand_computed():
    d = Fixed(value=2_048)
    assert d.tail_prob([2_047.9, 2_048.0]).tolist() == [1.0, 0.0]
    assert d.mean_above(10) == d.mean_below(10_000) == d.mean == 2_048.0
    assert d.expect_above(np.sqrt, 5.0) == pytest.approx(math.sqrt(2_048))
    assert d.sample(np.random.default_rng(0), 3).tolist() == [2_048] * 3


def test_empirical_hand_computed():
    e = Empirical(values=[3, 1, 2, 2])
    assert (e.lo, e.hi, e.mean) == (1.0, 3.0, 2.0)
    assert e.tail_prob([0.5, 1, 2, 2.5, 3]).tolist() == [1.0, 0.75, 0.25, 0.25, 0.0]
    assert e.mean_above(1) == pytest.approx(7 / 3) and e.mean_below(2) == pytest.approx(5 / 3)
    assert e.expect_above(lambda x: x * x, 1) == pytest.approx((4 + 4 + 9) / 3)
    assert e.quantile([0.0, 0.25, 0.26, 0.75, 1.0]).tolist() == [1.0, 1.0, 2.0, 2.0, 3.0]


def test_empirical_histogram_equals_expanded_sample():
    h = Empirical.from_histogram([128, 1_024, 8_192], [5, 3, 2])
    e = Empirical(values=[128] * 5 + [1_024] * 3 + [8_192] * 2)
    t = np.array([0, 128, 500, 1_024, 8_192, 10_000])
    for name in ("tail_prob", "mean_above", "mean_below"):
        assert np.allclose(getattr(h, name)(t), getattr(e, name)(t), rtol=1e-15)
    assert h.mean == pytest.approx((5 * 128 + 3 * 1_024 + 2 * 8_192) / 10, rel=1e-15)
    zero = Empirical.from_histogram([10, 20, 30], [0, 1, 1])  # zero weight: outside the support
    assert zero.lo == 20.0


# ----------------------------------------------------------------------------- sampling and quantiles


@pytest.mark.parametrize("dist", ALL, ids=lambda d: type(d).__name__)
def test_sample_whole_tokens_reproducible_and_unbiased(dist):
    n = 100_000
    x = dist.sample(np.random.default_rng(7), n)
    assert x.dtype == np.int64 and x.shape == (n,) and x.min() >= 1
    assert np.array_equal(x, dist.sample(np.random.default_rng(7), n))
    assert x.min() >= math.floor(dist.lo) and x.max() <= min(math.ceil(min(dist.hi, 1e18)), 2**62)
    sd = math.sqrt(dist.expect_above(lambda v: (v - dist.mean) ** 2, -1.0))
    assert abs(x.mean() - dist.mean) < 5 * sd / math.sqrt(n) + 0.5  # 0.5: rounding to whole tokens


@pytest.mark.parametrize("dist", ALL[:4], ids=lambda d: type(d).__name__)
def test_quantile_inverts_tail_prob(dist):
    q = np.linspace(0.01, 0.99, 25)
    assert np.allclose(1 - dist.tail_prob(dist.quantile(q)), q, rtol=0, atol=1e-9)
    assert dist.quantile(0.0) == dist.lo and dist.quantile(1.0) == dist.hi


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(("make", "field"), [
    (lambda: TruncatedLogNormal(mu=9.9, sigma=0.0, lo=128, hi=1e5), "workload.sigma"),
    (lambda: TruncatedLogNormal(mu=9.9, sigma=-1.0), "workload.sigma"),
    (lambda: TruncatedLogNormal(mu=math.nan, sigma=1.0), "workload.mu"),
    (lambda: TruncatedLogNormal(mu=9.9, sigma=1.0, lo=1e5, hi=128), "workload.lo"),
    (lambda: TruncatedLogNormal(mu=9.9, sigma=1.0, lo=0, hi=128), "workload.lo"),
    (lambda: TruncatedLogNormal(mu=9.9, sigma=1.0, lo=1, hi=math.nan), "workload.hi"),
    (lambda: Uniform(lo=5, hi=5), "workload.lo"),
    (lambda: Uniform(lo=1, hi=math.inf), "workload.hi"),
    (lambda: Gamma(shape=0, scale=1.0), "workload.shape"),
    (lambda: Gamma(shape=1.0, scale=-3.0), "workload.scale"),
    (lambda: Gamma(shape=1.0, scale="big"), "workload.scale"),
    (lambda: Fixed(value=0), "workload.value"),
    (lambda: Empirical(values=[]), "workload.values"),
    (lambda: Empirical(values=[10, -1]), "workload.values"),
    (lambda: Empirical(values=[10, math.nan]), "workload.values"),
    (lambda: Empirical(values=[10, 20], weights=[1]), "workload.weights"),
    (lambda: Empirical(values=[10, 20], weights=[0, 0]), "workload.weights"),
    (lambda: Empirical.from_histogram([10, 20], [1, -2]), "workload.weights"),
])
def test_invalid_parameters_raise_spec_error(make, field):
    with pytest.raises(SpecError) as info:
        make()
    assert info.value.field == field
    assert field.split(".")[1] in str(info.value)


def test_frozen_and_hashable():
    with pytest.raises(AttributeError):
        PAPER.mu = 1.0  # type: ignore[misc]
    assert TruncatedLogNormal.paper() == PAPER and hash(TruncatedLogNormal.paper()) == hash(PAPER)


# ----------------------------------------------------------------------------- invariants (hypothesis)


@st.composite
def distributions(draw):
    kind = draw(st.sampled_from(["lognormal", "gamma", "uniform", "empirical"]))
    lo = draw(st.floats(1.0, 2_000.0))
    hi = lo * draw(st.floats(1.5, 2_000.0))
    if kind == "lognormal":
        return TruncatedLogNormal(mu=draw(st.floats(4.0, 13.0)), sigma=draw(st.floats(0.2, 2.5)), lo=lo, hi=hi)
    if kind == "gamma":
        return Gamma(shape=draw(st.floats(0.3, 8.0)), scale=draw(st.floats(100.0, 50_000.0)), lo=lo,
                     hi=draw(st.sampled_from([hi, math.inf])))
    if kind == "uniform":
        return Uniform(lo=lo, hi=hi)
    values = draw(st.lists(st.integers(1, 200_000), min_size=1, max_size=40))
    weights = draw(st.lists(st.floats(0.1, 100.0), min_size=len(values), max_size=len(values)))
    return Empirical(values=values, weights=weights)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(dist=distributions(), u=st.lists(st.floats(0.0, 1.0), min_size=2, max_size=12))
def test_threshold_invariants(dist, u):
    top = dist.hi if math.isfinite(dist.hi) else float(dist.quantile(1 - 1e-9))
    t = np.sort(dist.lo / 2 + np.asarray(u) * (2 * top - dist.lo / 2))
    p, above, below = dist.tail_prob(t), dist.mean_above(t), dist.mean_below(t)
    assert np.all((p >= 0) & (p <= 1))
    assert np.all(np.diff(p) <= 1e-12)  # p non-increasing in t
    assert np.all(np.diff(above) >= -1e-9 * above[1:])  # l_long non-decreasing
    assert np.all(below <= np.maximum(t, dist.lo)) and np.all(above >= np.minimum(t, dist.hi))
    inside = (p > 0) & (dist.hi - t > 1e-9 * dist.hi)
    assert np.all(above[inside] > t[inside])
    assert np.all(np.isfinite(above)) and np.all(np.isfinite(below))
    tol = 1e-9 if isinstance(dist, Empirical) else 1e-6
    assert np.allclose(p * above + (1 - p) * below, dist.mean, rtol=tol, atol=0)
    assert np.allclose(dist.expect_above(lambda x: x, t), above, rtol=tol, atol=0)
    assert np.allclose(dist.expect_below(lambda x: x, t), below, rtol=tol, atol=0)


# ----------------------------------------------------------------------------- routing all or nothing, exactly

# A rule that sends every request (t below the shortest length) or none (t at the longest) to a
# pool must give p = 1.0 / 0.0 exactly: 1 - p = 9e-16 gave the idle pool a bound of 0 / 9e-16 = 0.
EDGES = [*ALL, Empirical(values=np.arange(1, 11)), Empirical(values=np.arange(1, 301)),
         Empirical(values=[1, 2, 3], weights=[0.1, 0.2, 0.7])]


@pytest.mark.parametrize("dist", EDGES, ids=lambda d: type(d).__name__)
def test_tail_prob_is_exact_at_the_ends(dist):
    lo, hi = dist.lo, dist.hi
    for t in (lo - 1, lo / 2, 0.0, -5.0):
        assert dist.tail_prob(t) == 1.0 and 1.0 - dist.tail_prob(t) == 0.0
    if not isinstance(dist, Fixed | Empirical):  # continuous: P(L > lo) = 1 too
        assert dist.tail_prob(lo) == 1.0
    if math.isfinite(hi):
        for t in (hi, hi + 1, 2 * hi):
            assert dist.tail_prob(t) == 0.0
    arr = dist.tail_prob(np.array([lo - 1, hi if math.isfinite(hi) else math.inf]))
    assert arr.tolist() == [1.0, 0.0]
    # and the conditional means there are the whole distribution's
    assert dist.mean_above(lo - 1) == pytest.approx(dist.mean, rel=1e-12)


def test_tail_prob_is_exact_on_a_trace_replay():
    from prfaas_plan.core.trace import replay_prefix_cache
    from prfaas_plan.io.trace import load_mooncake_trace

    trace = load_mooncake_trace(FIXTURES / "mooncake_300.jsonl")
    d = replay_prefix_cache(trace, capacity_blocks=None).uncached_distribution()
    assert d.tail_prob(d.lo - 1) == 1.0  # was 0.9999999999999961
    assert d.tail_prob(d.hi) == 0.0


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.floats(1.0, 1e6), min_size=1, max_size=60),
       weights=st.lists(st.floats(0.001, 1000.0), min_size=60, max_size=60),
       below=st.floats(0.0, 1.0, exclude_max=True), above=st.floats(0.0, 10.0))
def test_empirical_tail_prob_exact_ends_hypothesis(values, weights, below, above):
    d = Empirical(values=values, weights=weights[:len(values)])
    assert d.tail_prob(d.lo * below) == 1.0
    assert d.tail_prob(d.hi * (1 + above)) == 0.0
    assert d.tail_prob(d.hi) == 0.0
