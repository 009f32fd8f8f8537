import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.interpolate import PchipInterpolator

from prfaas_plan.core.profile import Pchip, ProfileCurve
from prfaas_plan.specs.model import MeasuredProfile

TABLE5 = MeasuredProfile(hardware="H200", gpus=8, lengths=(1024, 8192, 32768, 131072),
                         prefill_s=(0.44, 0.72, 1.84, 7.40),
                         kv_bytes=tuple(m * 2**20 for m in (190.8, 308.9, 701.3, 2316.3)))


def test_measured_points_are_exact():
    c = ProfileCurve.fit(TABLE5)
    np.testing.assert_allclose(c.prefill_s(np.array(TABLE5.lengths)), TABLE5.prefill_s, rtol=1e-12)
    np.testing.assert_allclose(c.kv_bytes(np.array(TABLE5.lengths)), TABLE5.kv_bytes, rtol=1e-12)


def test_fit_matches_paper_derived_quadratic():
    # docs/model.md#the-case-study: T_prefill ~= 0.389 + 4.107e-5 l + 9.476e-11 l^2 s (least squares over Table 5)
    a, b, c = ProfileCurve.fit(TABLE5).coef
    assert a == pytest.approx(0.389, abs=1e-3)
    assert b == pytest.approx(4.107e-5, rel=1e-3)
    assert c == pytest.approx(9.476e-11, rel=1e-3)


def test_between_points_monotone_and_near_the_fit():
    c = ProfileCurve.fit(TABLE5)
    x = np.linspace(1024, 131072, 2000)
    t = c.prefill_s(x)
    assert np.all(np.diff(t) > 0)
    a, b, q = c.coef
    # residuals of the fit are under 0.012 s at the points, so the curve stays that close between them
    assert np.max(np.abs(t - (a + b * x + q * x * x))) < 0.012


def test_kv_bytes_extrapolate_with_end_slopes():
    c = ProfileCurve.fit(TABLE5)
    y = np.array(TABLE5.kv_bytes)
    slope = (y[-1] - y[-2]) / (131072 - 32768)
    assert c.kv_bytes(131072 + 1000) == pytest.approx(y[-1] + 1000 * slope, rel=1e-12)


@given(st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=2, max_size=8, unique=True),
       st.integers(min_value=0, max_value=2**31))
def test_pchip_equals_scipy(xs, seed):
    x = np.sort(np.array(xs))
    if np.min(np.diff(x)) < 1e-3:
        return
    y = np.random.default_rng(seed).normal(size=len(x))
    xi = np.linspace(x[0], x[-1], 101)
    np.testing.assert_allclose(Pchip.fit(x, y)(xi), PchipInterpolator(x, y)(xi), rtol=1e-9, atol=1e-9)


def test_basis_names_measured_interpolated_and_extrapolated():
    c = ProfileCurve.fit(TABLE5)
    got = c.basis([512, 1024, 4096, 32768, 131072, 131073, 10 * 2**20])
    assert list(got) == ["extrapolated", "measured", "interpolated", "measured", "measured", "extrapolated",
                         "extrapolated"]
