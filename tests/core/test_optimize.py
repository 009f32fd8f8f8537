"""The optimizer against brute force over the same grid, plus its two special cases."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prfaas_plan.core.lengths import Empirical, Fixed, Gamma, TruncatedLogNormal, Uniform
from prfaas_plan.core.optimize import Space, offload_all_threshold, search
from prfaas_plan.core.throughput import Curves, Method, operating_point, routing


def brute_force(L, curves, space, method, link, dec, *, special=True):
    """Every (t, N_prfaas, N_p) one by one; with ``special`` also t below the shortest length and t
    at the longest, and N_p = 0 (only p = 1 serves anything there: short requests need N_p > 0)."""
    best = None
    extra = [offload_all_threshold(L), L.hi] if special else []
    for t in [*space.thresholds, *extra]:
        r = routing(L, curves, [t], method)
        for n_prfaas in space.n_prfaas:
            for n_p in ([0] if special else []) + list(space.n_p):
                op = operating_point(r, 0, n_prfaas=int(n_prfaas), n_p=int(n_p), n_d=space.n_local - int(n_p),
                                     link_bytes_per_s=link, decode_rps_per_instance=dec)
                if best is None or op.lambda_max_rps > best.lambda_max_rps:
                    best = op
    return best


def curves(a, b, c, h20_factor, kv_per_token, state):
    def t_fast(l):
        return a + b * np.asarray(l, float) + c * np.asarray(l, float) ** 2

    return Curves(t_prfaas=t_fast, t_local=lambda l: a + h20_factor * (t_fast(l) - a),
                  s_kv=lambda l: state + kv_per_token * np.asarray(l, float))


SCENARIOS = [
    (TruncatedLogNormal(mu=9.9, sigma=1.0, lo=128, hi=131072), curves(0.389, 4.1e-5, 9.5e-11, 3.3, 17280, 1.8e8),
     Space(thresholds=np.linspace(128, 131072, 60), n_prfaas=np.array([4]), n_local=8), 12.5e9, 0.78),
    (Uniform(lo=100, hi=50000), curves(0.2, 2e-5, 5e-11, 5.0, 250000, 0.0),
     Space(thresholds=np.linspace(100, 50000, 40), n_prfaas=np.array([1, 2, 3]), n_local=10), 1.25e9, 0.5),
    (Gamma(shape=2.0, scale=8000.0, lo=64, hi=200000), curves(0.3, 3e-5, 1e-10, 2.0, 11520, 2.9e8),
     Space(thresholds=np.linspace(64, 200000, 50), n_prfaas=np.array([2, 6]), n_local=6), 2.5e8, 1.2),
]


@pytest.mark.slow
@pytest.mark.parametrize("method", [Method.PAPER, Method.EXACT])
@pytest.mark.parametrize("case", range(len(SCENARIOS)))
def test_search_matches_brute_force(case, method):
    L, c, space, link, dec = SCENARIOS[case]
    bf = brute_force(L, c, space, method, link, dec)
    res = search(L, c, space, method=method, link_bytes_per_s=link, decode_rps_per_instance=dec, refine=False)
    assert res.best.lambda_max_rps == pytest.approx(bf.lambda_max_rps, rel=1e-9)
    grid = search(L, c, space, method=method, link_bytes_per_s=link, decode_rps_per_instance=dec, refine=False,
                  special=False)
    assert grid.best.lambda_max_rps == pytest.approx(brute_force(L, c, space, method, link, dec, special=False)
                                                     .lambda_max_rps, rel=1e-12)
    refined = search(L, c, space, method=method, link_bytes_per_s=link, decode_rps_per_instance=dec)
    # refinement never loses against any grid point
    assert refined.best.lambda_max_rps >= bf.lambda_max_rps * (1 - 1e-12)


def test_refined_threshold_sits_on_the_eq7_crossing():
    L, c, space, link, dec = SCENARIOS[0]
    res = search(L, c, space, method=Method.PAPER, link_bytes_per_s=link, decode_rps_per_instance=dec)
    b = res.best
    assert res.refined
    # Eq. 7: Theta_prfaas / p = Theta_pd-p / (1 - p) at the refined t
    assert b.theta_prfaas_rps / b.p_offload == pytest.approx(b.theta_pd_p_rps / (1 - b.p_offload), rel=1e-6)


@settings(max_examples=15, deadline=None)
@given(n_local=st.integers(2, 12), factor=st.floats(1.5, 8.0), link_gbps=st.floats(0.5, 400),
       dec=st.floats(0.1, 3.0), sigma=st.floats(0.3, 1.5))
def test_search_never_worse_than_any_grid_point(n_local, factor, link_gbps, dec, sigma):
    L = TruncatedLogNormal(mu=9.9, sigma=sigma, lo=128, hi=131072)
    c = curves(0.389, 4.1e-5, 9.5e-11, factor, 17280, 1.8e8)
    space = Space(thresholds=np.linspace(128, 131072, 25), n_prfaas=np.array([2, 4]), n_local=n_local)
    res = search(L, c, space, method=Method.PAPER, link_bytes_per_s=link_gbps * 1.25e8, decode_rps_per_instance=dec)
    assert res.best.lambda_max_rps >= res.lambda_grid.max() * (1 - 1e-12)
    lams = [p.lambda_max_rps for p in res.top[1:]]
    assert lams == sorted(lams, reverse=True)


FAST, SLOW = curves(0.389, 4.1e-5, 9.5e-11, 1.0, 17280, 1.8e8), curves(0.389, 4.1e-5, 9.5e-11, 3.3, 17280, 1.8e8)


@pytest.mark.parametrize("method", [Method.PAPER, Method.EXACT])
def test_every_request_offloaded_when_that_is_best(method):
    """The issue's case: every request 8,192 tokens, decode-bound splits. N_p = 0 with p = 1 (naive
    heterogeneous PD) gives min(N_prfaas / T(8192), N_local x decode rate); any N_p >= 1 loses a
    decode instance for a prefill instance that only helps with requests it never gets."""
    L = Fixed(value=8192)
    space = Space(thresholds=np.arange(128, 131073, 128.0), n_prfaas=np.array([4]), n_local=8)
    t_8k = float(FAST.t_prfaas(8192.0))  # 0.389 + 4.1e-5 x 8192 + 9.5e-11 x 8192^2 = 0.7333 s
    assert t_8k == pytest.approx(0.389 + 4.1e-5 * 8192 + 9.5e-11 * 8192**2)
    dec = 0.78125  # 20 / (25 ms x 1024)
    res = search(L, FAST, space, method=method, link_bytes_per_s=12.5e9, decode_rps_per_instance=dec)
    b = res.best
    assert (b.n_prfaas, b.n_p, b.n_d, b.p_offload) == (4, 0, 8, 1.0)
    assert b.threshold_tokens == 8191.0
    assert b.lambda_max_rps == pytest.approx(min(4 / t_8k, 8 * dec), rel=1e-12)  # 5.455 req/s, compute-bound
    assert b.theta_pd_p_rps is None and b.l_short_tokens is None
    # the grid alone (N_p >= 1) stops at 7 decode instances
    grid = search(L, FAST, space, method=method, link_bytes_per_s=12.5e9, decode_rps_per_instance=dec, special=False)
    assert grid.best.lambda_max_rps == pytest.approx(7 * dec, rel=1e-12)
    assert res.top[1] == grid.best  # the grid's best is the runner-up


def test_nothing_offloaded_when_the_range_stops_short():
    """A threshold range that ends below the longest length still weighs t = max (p = 0): with a
    link too slow for any offload, that is homogeneous PD on the local cluster's best split."""
    L = Empirical(values=np.array([1000.0, 2000.0, 60000.0]))
    space = Space(thresholds=np.linspace(1000, 30000, 10), n_prfaas=np.array([1, 3]), n_local=6)
    res = search(L, SLOW, space, method=Method.EXACT, link_bytes_per_s=1e3, decode_rps_per_instance=5.0)
    b = res.best
    assert (b.p_offload, b.threshold_tokens, b.n_prfaas) == (0.0, 60000.0, 1)
    t_mean = float(np.mean(SLOW.t_local(np.array([1000.0, 2000.0, 60000.0]))))
    hom = max(min(n_p / t_mean, (6 - n_p) * 5.0) for n_p in range(1, 6))
    assert b.lambda_max_rps == pytest.approx(hom, rel=1e-12)
    assert b.lambda_max_rps > res.lambda_grid.max() * 10  # the grid's every t offloads the 60K request


@pytest.mark.parametrize(("f", "a", "b", "root"), [
    (lambda x: x * x - 2, 0.0, 2.0, 2**0.5),
    (lambda x: np.exp(x) - 10, 0.0, 5.0, np.log(10)),
    (lambda x: np.log(x / 19400.0) ** 3, 128.0, 131072.0, 19400.0),  # flat near the root
])
def test_illinois_root_finder(f, a, b, root):
    from prfaas_plan.core.roots import illinois

    assert illinois(f, a, b, f(a), f(b), xtol=1e-9) == pytest.approx(root, rel=1e-6)
