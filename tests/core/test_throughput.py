"""Eqs. 3-6 by hand, and the invariants of the throughput model."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prfaas_plan.core.lengths import Empirical, TruncatedLogNormal, Uniform
from prfaas_plan.core.throughput import Binding, Curves, Method, bounds, operating_point, routing


def linear(a, b):
    return lambda l: a + b * np.asarray(l, dtype=float)


CURVES = Curves(t_prfaas=linear(0.1, 1e-4), t_local=linear(0.2, 4e-4), s_kv=linear(1e6, 1e4))


@pytest.mark.parametrize("method", [Method.PAPER, Method.EXACT])
def test_hand_computed_uniform(method):
    # Uniform[1000, 9000], t = 5000: p = 0.5, l_long = 7000, l_short = 3000 (linear T: both methods agree)
    L = Uniform(lo=1000, hi=9000)
    r = routing(L, CURVES, [5000.0], method)
    assert r.p[0] == pytest.approx(0.5, rel=1e-9)
    assert r.l_long[0] == pytest.approx(7000, rel=1e-9)
    assert r.l_short[0] == pytest.approx(3000, rel=1e-9)
    op = operating_point(r, 0, n_prfaas=2, n_p=3, n_d=2, link_bytes_per_s=1e8, decode_rps_per_instance=1.0)
    # Eq. 3: compute 2 / T(7000) = 2 / 0.8 = 2.5; link 1e8 / S(7000) = 1e8 / 7.1e7 = 1.408
    assert op.theta_prfaas_compute_rps == pytest.approx(2.5, rel=1e-9)
    assert op.theta_prfaas_link_rps == pytest.approx(1e8 / 7.1e7, rel=1e-9)
    assert op.theta_prfaas_rps == pytest.approx(1e8 / 7.1e7, rel=1e-9)
    # Eq. 4: 3 / T_local(3000) = 3 / 1.4
    assert op.theta_pd_p_rps == pytest.approx(3 / 1.4, rel=1e-9)
    # Eq. 5 and Eq. 6: min(1.408 / 0.5, 2.143 / 0.5, 2 x 1.0) = 2.0, bound by decode
    assert op.theta_pd_d_rps == pytest.approx(2.0)
    assert op.lambda_max_rps == pytest.approx(2.0)
    assert op.binding == Binding.DECODE
    # egress at Lambda_max: 2.0 req/s x 0.5 x 7.1e7 B
    assert op.egress_bytes_per_s == pytest.approx(2.0 * 0.5 * 7.1e7, rel=1e-9)
    assert op.link_utilization == pytest.approx(0.71, rel=1e-9)


def test_link_binding_when_the_link_is_small():
    L = Uniform(lo=1000, hi=9000)
    r = routing(L, CURVES, [5000.0], Method.PAPER)
    op = operating_point(r, 0, n_prfaas=2, n_p=3, n_d=20, link_bytes_per_s=1e7, decode_rps_per_instance=1.0)
    assert op.binding == Binding.LINK
    assert op.lambda_max_rps == pytest.approx(1e7 / 7.1e7 / 0.5, rel=1e-9)
    assert op.link_utilization == pytest.approx(1.0, rel=1e-9)


def test_exact_differs_from_paper_for_convex_time():
    # T convex in l: E[T(L)] > T(E[L]) (Jensen), so the exact PrfaaS bound is lower
    L = TruncatedLogNormal(mu=9.9, sigma=1.0, lo=128, hi=131072)
    convex = Curves(t_prfaas=lambda l: 0.4 + 4e-5 * l + 1e-10 * l * l, t_local=linear(0.2, 1e-4),
                    s_kv=linear(1e8, 1e4))
    rp = routing(L, convex, [19400.0], Method.PAPER)
    re = routing(L, convex, [19400.0], Method.EXACT)
    assert re.t_long_s[0] > rp.t_long_s[0]
    assert re.t_short_s[0] == pytest.approx(rp.t_short_s[0], rel=1e-6)  # linear local curve


def test_no_offload_and_all_offload_edges_are_finite():
    L = Uniform(lo=1000, hi=9000)
    r = routing(L, CURVES, [9000.0, 999.0], Method.PAPER)
    b = bounds(r, n_prfaas=2, n_p=3, n_d=2, link_bytes_per_s=1e8, decode_rps_per_instance=1.0)
    assert np.all(np.isfinite(b.lambda_max))
    # t = hi: homogeneous local PD, min(3 / T_local(5000), 2)
    assert b.lambda_max[0] == pytest.approx(min(3 / 2.2, 2.0))
    # t < lo: everything offloaded, min(2 / T(5000), 1e8 / S(5000), 2)
    assert b.lambda_max[1] == pytest.approx(min(2 / 0.6, 1e8 / 5.1e7, 2.0))


@settings(max_examples=60, deadline=None)
@given(t=st.floats(min_value=128, max_value=131072), n_prfaas=st.integers(1, 16), n_p=st.integers(1, 15),
       n_d=st.integers(1, 15), link=st.floats(min_value=1e6, max_value=1e12), method=st.sampled_from(list(Method)))
def test_lambda_never_above_any_stage(t, n_prfaas, n_p, n_d, link, method):
    L = TruncatedLogNormal(mu=9.9, sigma=1.0, lo=128, hi=131072)
    r = routing(L, CURVES, [t], method)
    op = operating_point(r, 0, n_prfaas=n_prfaas, n_p=n_p, n_d=n_d, link_bytes_per_s=link,
                         decode_rps_per_instance=0.78)
    p = op.p_offload
    assert op.lambda_max_rps <= op.theta_pd_d_rps * (1 + 1e-12)
    if op.theta_prfaas_rps is not None and p > 0:
        assert op.lambda_max_rps * p <= op.theta_prfaas_rps * (1 + 1e-9)
    if op.theta_pd_p_rps is not None and p < 1:
        assert op.lambda_max_rps * (1 - p) <= op.theta_pd_p_rps * (1 + 1e-9)
    assert op.binding in op.tight
    assert np.isfinite(op.lambda_max_rps) and op.lambda_max_rps > 0


@settings(max_examples=30, deadline=None)
@given(link=st.floats(min_value=1e7, max_value=1e11))
def test_doubling_the_link_never_lowers_lambda(link):
    L = TruncatedLogNormal(mu=9.9, sigma=1.0, lo=128, hi=131072)
    r = routing(L, CURVES, np.linspace(200, 130000, 50), Method.PAPER)
    kw = {"n_prfaas": 4, "n_p": 3, "n_d": 5, "decode_rps_per_instance": 0.78}
    a = bounds(r, link_bytes_per_s=link, **kw).lambda_max
    b = bounds(r, link_bytes_per_s=2 * link, **kw).lambda_max
    assert np.all(b >= a - 1e-12)


@pytest.mark.parametrize("method", [Method.PAPER, Method.EXACT])
def test_routing_everything_offloads_exactly(method):
    # naive heterogeneous on a trace-like sample: t below the shortest length sends p = 1 exactly,
    # so PD-P (no instances, no traffic) never binds; before, 1 - p = 4e-15 gave it 0 / 4e-15 = 0
    L = Empirical(values=np.arange(1, 301))
    r = routing(L, CURVES, [L.lo - 1], method)
    assert r.p[0] == 1.0
    op = operating_point(r, 0, n_prfaas=4, n_p=0, n_d=8, link_bytes_per_s=1e12, decode_rps_per_instance=100.0)
    # compute bound 4 / E[T(L)] = 4 / (0.1 + 1e-4 x 150.5), linear T: both methods agree
    assert op.lambda_max_rps == pytest.approx(4 / (0.1 + 1e-4 * 150.5), rel=1e-12)
    assert op.binding == Binding.PRFAAS_COMPUTE and Binding.PD_PREFILL not in op.tight
    assert op.theta_pd_p_rps is None and op.l_short_tokens is None  # nothing local: not reported


def test_idle_stage_unbounded_and_empty_stage_with_traffic_binds_at_zero():
    L = Uniform(lo=1000, hi=9000)
    r = routing(L, CURVES, [9000.0, 5000.0], Method.EXACT)
    assert r.p.tolist()[0] == 0.0
    b = bounds(r, n_prfaas=np.array([0]), n_p=np.array([3]), n_d=np.array([2]), link_bytes_per_s=1e8,
               decode_rps_per_instance=1.0)
    # t = hi: nothing offloaded, so the PrfaaS pool (even with 0 instances) and the link do not bind
    assert b.prfaas_compute[0] > 1e299 and b.link[0] > 1e299
    assert b.lambda_max[0] == pytest.approx(min(3 / (0.2 + 4e-4 * 5000), 2.0))
    # t = 5000: half offloaded to a pool of 0 instances: its bound is 0, and it is the one named
    op = operating_point(r, 1, n_prfaas=0, n_p=3, n_d=2, link_bytes_per_s=1e8, decode_rps_per_instance=1.0)
    assert op.lambda_max_rps == 0.0 and op.binding == Binding.PRFAAS_COMPUTE
