"""Hand-computed values and invariants of prfaas_plan.core.queueing."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prfaas_plan.core.queueing import (
    erlang_c,
    ggc_wait,
    ggc_wait_quantile,
    mg1_wait,
    mgc_wait,
    mgc_wait_quantile,
    mmc_wait,
    mmc_wait_quantile,
    utilisation,
)

EXACT = 1e-12


def erlang_c_factorial(c: int, a: float) -> float:
    """Textbook Erlang C with factorials, for small c only."""
    top = a**c / math.factorial(c) * c / (c - a)
    return top / (sum(a**k / math.factorial(k) for k in range(c)) + top)


# ---------------------------------------------------------------- hand-computed values


def test_utilisation():
    assert utilisation(3.0, 1.0, 4) == pytest.approx(0.75, rel=EXACT)
    assert utilisation(2.0, 0.5) == pytest.approx(1.0, rel=EXACT)  # never raises
    np.testing.assert_allclose(utilisation(np.array([1.0, 2.0]), 1.0, 4), [0.25, 0.5])


def test_mm1_mean_wait_by_hand():
    # lam = 0.5, mu = 1: rho = 0.5, Wq = rho / (mu - lam) = 1.0
    assert mmc_wait(0.5, 1.0, 1) == pytest.approx(1.0, rel=EXACT)
    # lam = 0.7, mu = 1: Wq = 0.7 / 0.3
    assert mmc_wait(0.7, 1.0) == pytest.approx(0.7 / 0.3, rel=EXACT)
    # time scaling: mu = 2 (E[S] = 0.5), lam = 1: Wq = rho / (mu - lam) = 0.5
    assert mmc_wait(1.0, 0.5, 1) == pytest.approx(0.5, rel=EXACT)


def test_mm1_erlang_c_is_rho():
    for rho in (0.0, 0.1, 0.5, 0.9, 0.999):
        assert erlang_c(1, rho) == pytest.approx(rho, rel=EXACT, abs=EXACT)


def test_mm2_by_hand():
    # lam = 1.5, mu = 1, c = 2: a = 1.5; C = (a^2/2 * 2/(2-a)) / (1 + a + a^2/2 * 2/(2-a)) = 4.5/7
    assert erlang_c(2, 1.5) == pytest.approx(4.5 / 7.0, rel=EXACT)
    assert erlang_c(2, 1.5) == pytest.approx(0.6428571428571429, rel=EXACT)
    assert mmc_wait(1.5, 1.0, 2) == pytest.approx(4.5 / 7.0 / 0.5, rel=EXACT)
    assert mmc_wait(1.5, 1.0, 2) == pytest.approx(1.2857142857, rel=1e-10)


def test_mm4_by_hand():
    # c = 4, a = 3: top = 81/24 * 4 = 13.5; sum_{k<4} 3^k/k! = 1 + 3 + 4.5 + 4.5 = 13
    assert erlang_c(4, 3.0) == pytest.approx(13.5 / 26.5, rel=EXACT)
    assert mmc_wait(3.0, 1.0, 4) == pytest.approx(13.5 / 26.5 / 1.0, rel=EXACT)


@pytest.mark.parametrize("c", [1, 2, 3, 5, 8, 13, 20])
@pytest.mark.parametrize("rho", [0.01, 0.3, 0.7, 0.95, 0.999])
def test_erlang_c_matches_factorial_formula(c, rho):
    a = rho * c
    assert erlang_c(c, a) == pytest.approx(erlang_c_factorial(c, a), rel=1e-10)


def test_erlang_c_large_c_is_stable():
    # 500 servers: factorials overflow, the recursion does not.
    for rho in (0.5, 0.9, 0.99):
        value = erlang_c(500, rho * 500)
        assert 0.0 <= value <= 1.0
        assert math.isfinite(value)
    # at rho = 0.5 with 500 servers nobody waits; at 0.99 many do
    assert erlang_c(500, 250.0) < 1e-30
    assert 0.1 < erlang_c(500, 495.0) < 1.0
    # square-root staffing (Halfin-Whitt): c = a + beta sqrt(a) gives C ~ constant in a
    beta = 1.0
    values = [erlang_c(int(a + beta * math.sqrt(a)), a) for a in (100.0, 400.0)]
    assert values[0] == pytest.approx(values[1], rel=0.1)


def test_mm1_wait_quantile_by_hand():
    # M/M/1 lam = 0.5, mu = 1: P(W > x) = 0.5 exp(-0.5 x)
    assert mmc_wait_quantile(0.5, 0.5, 1.0, 1) == 0.0  # q <= 1 - C
    assert mmc_wait_quantile(0.3, 0.5, 1.0, 1) == 0.0
    assert mmc_wait_quantile(0.9, 0.5, 1.0, 1) == pytest.approx(math.log(5.0) / 0.5, rel=EXACT)
    assert mmc_wait_quantile(0.99, 0.5, 1.0, 1) == pytest.approx(math.log(50.0) / 0.5, rel=EXACT)
    # the quantile function inverts the tail
    x = mmc_wait_quantile(0.95, 0.5, 1.0, 1)
    assert 0.5 * math.exp(-0.5 * x) == pytest.approx(0.05, rel=1e-12)


def test_mm2_wait_quantile_by_hand():
    c_prob = 4.5 / 7.0
    expected = math.log(c_prob / 0.1) / (2.0 - 1.5)
    assert mmc_wait_quantile(0.9, 1.5, 1.0, 2) == pytest.approx(expected, rel=EXACT)


def test_md1_pollaczek_khinchine_by_hand():
    # M/D/1, lam = 0.7, D = 1: Wq = lam D^2 / (2 (1 - rho)) = 0.7 / 0.6
    assert mg1_wait(0.7, 1.0, 1.0) == pytest.approx(0.7 / 0.6, rel=EXACT)
    # M/D/1 waits half as long as M/M/1
    assert mg1_wait(0.7, 1.0, 1.0) == pytest.approx(mmc_wait(0.7, 1.0, 1) / 2, rel=EXACT)
    # M/M/1 via P-K: E[S^2] = 2 / mu^2
    assert mg1_wait(0.5, 1.0, 2.0) == pytest.approx(1.0, rel=EXACT)
    # uniform(0, 2) service: E[S] = 1, E[S^2] = 4/3; lam = 0.5: Wq = 0.5 * 4/3 / (2 * 0.5) = 2/3
    assert mg1_wait(0.5, 1.0, 4.0 / 3.0) == pytest.approx(2.0 / 3.0, rel=EXACT)


def test_mgc_reduces_to_pk_for_one_server():
    for scv in (0.0, 0.25, 1.0, 3.0):
        second_moment = (1.0 + scv) * 0.8**2
        assert mgc_wait(1.0, 0.8, scv, 1) == pytest.approx(mg1_wait(1.0, 0.8, second_moment), rel=EXACT)


def test_mgc_lee_longton_factor():
    assert mgc_wait(3.0, 1.0, 0.0, 4) == pytest.approx(0.5 * 13.5 / 26.5, rel=EXACT)
    assert mgc_wait(3.0, 1.0, 2.0, 4) == pytest.approx(1.5 * 13.5 / 26.5, rel=EXACT)


def test_mgc_quantile_scaled_tail():
    # M/D/1, lam = 0.5: C = 0.5, Wq = 0.5; tail mean Wq/C = 1 s
    assert mgc_wait_quantile(0.9, 0.5, 1.0, 0.0, 1) == pytest.approx(math.log(5.0), rel=EXACT)
    assert mgc_wait_quantile(0.4, 0.5, 1.0, 0.0, 1) == 0.0
    # exponential service: identical to M/M/c
    assert mgc_wait_quantile(0.99, 3.0, 1.0, 1.0, 4) == pytest.approx(mmc_wait_quantile(0.99, 3.0, 1.0, 4), rel=EXACT)


def test_ggc_kingman_by_hand():
    # c = 1: Wq ~ rho/(1-rho) * (ca2 + cs2)/2 * E[S]; rho = 0.8, E[S] = 0.5
    lam, mean_s = 1.6, 0.5
    for ca2, cs2 in ((1.0, 1.0), (4.0, 0.0), (0.5, 2.0)):
        expected = 0.8 / 0.2 * (ca2 + cs2) / 2 * mean_s
        assert ggc_wait(lam, mean_s, cs2, ca2, 1) == pytest.approx(expected, rel=EXACT)
    # Poisson arrivals: same as M/G/c
    assert ggc_wait(3.0, 1.0, 0.3, 1.0, 4) == pytest.approx(mgc_wait(3.0, 1.0, 0.3, 4), rel=EXACT)
    assert ggc_wait_quantile(0.9, 3.0, 1.0, 0.3, 1.0, 4) == pytest.approx(
        mgc_wait_quantile(0.9, 3.0, 1.0, 0.3, 4), rel=EXACT
    )


def test_zero_arrival_rate_means_no_wait():
    assert erlang_c(3, 0.0) == 0.0
    assert mmc_wait(0.0, 1.0, 3) == 0.0
    assert mmc_wait_quantile(0.99, 0.0, 1.0, 3) == 0.0
    assert mg1_wait(0.0, 1.0, 1.0) == 0.0


# ---------------------------------------------------------------- stability contract and bad input


@pytest.mark.parametrize(
    "call",
    [
        lambda: erlang_c(2, 2.1),
        lambda: mmc_wait(1.05, 1.0, 1),
        lambda: mmc_wait(1.0, 1.0, 1),  # rho == 1 exactly
        lambda: mmc_wait_quantile(0.9, 4.0, 1.0, 4),
        lambda: mg1_wait(1.2, 1.0, 1.0),
        lambda: mgc_wait(5.0, 1.0, 0.5, 4),
        lambda: mgc_wait_quantile(0.9, 5.0, 1.0, 0.5, 4),
        lambda: ggc_wait(5.0, 1.0, 0.5, 2.0, 4),
        lambda: ggc_wait_quantile(0.9, 5.0, 1.0, 0.5, 2.0, 4),
        lambda: mmc_wait(np.array([0.5, 1.5]), 1.0, 1),  # one unstable element is enough
    ],
)
def test_unstable_raises_instead_of_inf(call):
    with pytest.raises(ValueError, match="unstable: utilisation"):
        call()


def test_unstable_message_names_utilisation():
    with pytest.raises(ValueError, match=r"^unstable: utilisation 1\.05 >= 1$"):
        mmc_wait(1.05, 1.0, 1)


@pytest.mark.parametrize(
    "call",
    [
        lambda: mmc_wait(-1.0, 1.0, 1),
        lambda: mmc_wait(0.5, 0.0, 1),
        lambda: mmc_wait(0.5, 1.0, 0),
        lambda: mmc_wait(0.5, 1.0, 1.5),
        lambda: mmc_wait(float("nan"), 1.0, 1),
        lambda: mmc_wait_quantile(1.0, 0.5, 1.0, 1),
        lambda: mmc_wait_quantile(-0.1, 0.5, 1.0, 1),
        lambda: mg1_wait(0.5, 1.0, 0.5),  # E[S^2] < E[S]^2
        lambda: mgc_wait(0.5, 1.0, -0.1, 1),
        lambda: ggc_wait(0.5, 1.0, 1.0, -1.0, 1),
    ],
)
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------- vectorisation


def test_vectorised_equals_scalar_loop():
    lam = np.array([0.1, 0.5, 1.5, 2.9, 7.5])
    c = np.array([1, 1, 2, 3, 8])
    mean_s = np.array([1.0, 1.2, 1.0, 0.9, 1.0])
    np.testing.assert_allclose(
        mmc_wait(lam, mean_s, c),
        [mmc_wait(x, m, k) for x, m, k in zip(lam, mean_s, c, strict=True)],
        rtol=1e-12,
    )
    np.testing.assert_allclose(
        erlang_c(c, lam * mean_s), [erlang_c(k, a) for k, a in zip(c, lam * mean_s, strict=True)], rtol=1e-12
    )
    np.testing.assert_allclose(
        mmc_wait_quantile(0.9, lam, mean_s, c),
        [mmc_wait_quantile(0.9, x, m, k) for x, m, k in zip(lam, mean_s, c, strict=True)],
        rtol=1e-12,
    )


def test_broadcasting_shapes():
    lam = np.linspace(0.1, 3.5, 7)[:, None]
    c = np.array([4, 8, 16])[None, :]
    assert np.shape(mmc_wait(lam, 1.0, c)) == (7, 3)
    assert np.shape(mgc_wait_quantile(np.array([0.5, 0.9, 0.99])[:, None], 3.0, 1.0, 0.5, c)) == (3, 3)
    assert isinstance(mmc_wait(0.5, 1.0, 1), float)
    assert isinstance(erlang_c(np.int64(3), np.float64(1.0)), float)


# ---------------------------------------------------------------- properties

servers = st.integers(min_value=1, max_value=300)
utilisations = st.floats(min_value=0.0, max_value=0.995)
means = st.floats(min_value=1e-3, max_value=1e3)
scvs = st.floats(min_value=0.0, max_value=20.0)


@given(c=servers, rho=utilisations)
def test_erlang_c_is_a_probability(c, rho):
    value = erlang_c(c, rho * c)
    assert 0.0 <= value <= 1.0


@given(c=st.integers(min_value=1, max_value=60), rho=utilisations)
def test_erlang_c_vectorised_path_matches_scalar(c, rho):
    a = rho * c
    vec = erlang_c(np.array([c, c]), np.array([a, a]))
    assert vec[0] == pytest.approx(erlang_c(c, a), rel=1e-12, abs=1e-300)


@given(c=servers, rho1=utilisations, rho2=utilisations, mean_s=means)
def test_mmc_wait_increases_with_arrival_rate(c, rho1, rho2, mean_s):
    lo, hi = sorted((rho1, rho2))
    w_lo = mmc_wait(lo * c / mean_s, mean_s, c)
    w_hi = mmc_wait(hi * c / mean_s, mean_s, c)
    assert w_lo <= w_hi * (1 + 1e-12)


@given(c=servers, rho=utilisations, mean_s=means)
def test_mgc_with_exponential_service_is_mmc(c, rho, mean_s):
    lam = rho * c / mean_s
    assert mgc_wait(lam, mean_s, 1.0, c) == pytest.approx(mmc_wait(lam, mean_s, c), rel=1e-12)
    assert ggc_wait(lam, mean_s, 1.0, 1.0, c) == pytest.approx(mmc_wait(lam, mean_s, c), rel=1e-12)


@given(c=st.integers(min_value=1, max_value=50), rho=utilisations, scv=scvs)
def test_more_servers_never_wait_longer(c, rho, scv):
    # same offered load spread over one more server
    a = rho * c
    assert mgc_wait(a, 1.0, scv, c + 1) <= mgc_wait(a, 1.0, scv, c) * (1 + 1e-12)


@given(
    c=st.integers(min_value=1, max_value=50),
    rho=utilisations,
    q1=st.floats(min_value=0.0, max_value=0.999),
    q2=st.floats(min_value=0.0, max_value=0.999),
    scv=scvs,
)
def test_quantiles_are_nondecreasing_and_nonnegative(c, rho, q1, q2, scv):
    lo, hi = sorted((q1, q2))
    x_lo = mgc_wait_quantile(lo, rho * c, 1.0, scv, c)
    x_hi = mgc_wait_quantile(hi, rho * c, 1.0, scv, c)
    assert 0.0 <= x_lo <= x_hi


@given(
    c=st.integers(min_value=1, max_value=50),
    rho=st.floats(min_value=0.01, max_value=0.99),
    q=st.floats(min_value=0.0, max_value=0.9999),
    scv=scvs,
)
def test_quantile_inverts_tail_with_the_stated_mean(c, rho, q, scv):
    # P(W > x) = C exp(-x C / Wq) has mean Wq; x_q must solve P(W > x_q) = 1 - q when q > 1 - C
    lam = rho * c
    p_wait = erlang_c(c, lam)
    mean_wait = mgc_wait(lam, 1.0, scv, c)
    x_q = mgc_wait_quantile(q, lam, 1.0, scv, c)
    if q <= 1.0 - p_wait or mean_wait == 0.0:
        assert x_q == 0.0
    else:
        assert p_wait * math.exp(-x_q * p_wait / mean_wait) == pytest.approx(1.0 - q, rel=1e-9)
