"""Measured prefill profiles (docs/sources.md#table-5) as functions of length.

Interpolation, stated so a user can judge it: T_prefill(l) is the least-squares fit
a + b*l + c*l^2 (fixed overhead + linear GEMM/state work + quadratic attention, the shape the
analytic model predicts) plus a monotone PCHIP interpolation of the fit's residuals, so every
measured point is reproduced exactly and values between points follow the physical shape.
Beyond the measured range the residual is held at its end value. KV bytes are interpolated
piecewise-linearly (S_kv is affine in l up to SWA windows) and extended with the end slopes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.specs.model import MeasuredProfile

INTERPOLATION = "quadratic least-squares fit + PCHIP of residuals (exact at measured points)"
EXTRAPOLATION = "the quadratic fit with the residual held at its end value"


def _pchip_slopes(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """Fritsch-Carlson monotone slopes (as scipy's PchipInterpolator; kept here to spare the
    import of scipy.interpolate, which costs more than the whole kv-rate command)."""
    h = np.diff(x)
    delta = np.diff(y) / h
    d = np.zeros_like(y)
    if len(x) == 2:
        return np.full_like(y, delta[0])
    w1, w2 = 2 * h[1:] + h[:-1], h[1:] + 2 * h[:-1]
    same = (delta[:-1] * delta[1:]) > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = (w1 + w2) / (w1 / delta[:-1] + w2 / delta[1:])
    d[1:-1] = np.where(same, inner, 0.0)

    def end(h0: float, h1: float, m0: float, m1: float) -> float:
        e = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
        if np.sign(e) != np.sign(m0):
            return 0.0
        if np.sign(m0) != np.sign(m1) and abs(e) > abs(3 * m0):
            return 3 * m0
        return float(e)

    d[0] = end(h[0], h[1], delta[0], delta[1])
    d[-1] = end(h[-1], h[-2], delta[-1], delta[-2])
    return d


@dataclass(frozen=True)
class Pchip:
    """Piecewise cubic Hermite interpolation with monotone (Fritsch-Carlson) slopes."""

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    d: NDArray[np.float64]

    @classmethod
    def fit(cls, x: NDArray[np.float64], y: NDArray[np.float64]) -> Pchip:
        return cls(x, y, _pchip_slopes(x, y))

    def __call__(self, xi: NDArray[np.float64]) -> NDArray[np.float64]:
        i = np.clip(np.searchsorted(self.x, xi, side="right") - 1, 0, len(self.x) - 2)
        h = self.x[i + 1] - self.x[i]
        s = (xi - self.x[i]) / h
        h00, h10 = (1 + 2 * s) * (1 - s) ** 2, s * (1 - s) ** 2
        h01, h11 = s * s * (3 - 2 * s), s * s * (s - 1)
        return h00 * self.y[i] + h10 * h * self.d[i] + h01 * self.y[i + 1] + h11 * h * self.d[i + 1]


@dataclass(frozen=True)
class ProfileCurve:
    """T_prefill(l) and S_kv(l) from a measured profile, vectorised over l (tokens)."""

    profile: MeasuredProfile
    coef: tuple[float, float, float]  # a, b, c of a + b*l + c*l^2
    residual: Pchip | None

    @classmethod
    def fit(cls, profile: MeasuredProfile) -> ProfileCurve:
        x = np.asarray(profile.lengths, dtype=np.float64)
        y = np.asarray(profile.prefill_s, dtype=np.float64)
        degree = min(2, len(x) - 1)
        design = np.vander(x, degree + 1, increasing=True)
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        coef = np.pad(coef, (0, 3 - len(coef)))
        resid = y - (coef[0] + coef[1] * x + coef[2] * x * x)
        curve = Pchip.fit(x, resid) if len(x) >= 2 else None
        return cls(profile, (float(coef[0]), float(coef[1]), float(coef[2])), curve)

    def prefill_s(self, lengths: ArrayLike) -> NDArray[np.float64] | float:
        length = np.asarray(lengths, dtype=np.float64)
        a, b, c = self.coef
        out = a + b * length + c * length * length
        if self.residual is not None:
            x = np.asarray(self.profile.lengths, dtype=np.float64)
            clipped = np.clip(length, x[0], x[-1])
            out = out + self.residual(clipped)
        return float(out) if out.ndim == 0 else out

    def kv_bytes(self, lengths: ArrayLike) -> NDArray[np.float64] | float | None:
        if self.profile.kv_bytes is None:
            return None
        length = np.asarray(lengths, dtype=np.float64)
        x = np.asarray(self.profile.lengths, dtype=np.float64)
        y = np.asarray(self.profile.kv_bytes, dtype=np.float64)
        out = np.interp(length, x, y)
        lo_slope = (y[1] - y[0]) / (x[1] - x[0])
        hi_slope = (y[-1] - y[-2]) / (x[-1] - x[-2])
        out = np.where(length < x[0], y[0] + lo_slope * (length - x[0]), out)
        out = np.where(length > x[-1], y[-1] + hi_slope * (length - x[-1]), out)
        return float(out) if out.ndim == 0 else out

    def is_measured_point(self, lengths: ArrayLike) -> NDArray[np.bool_]:
        return np.isin(np.asarray(lengths), np.asarray(self.profile.lengths))

    def basis(self, lengths: ArrayLike) -> NDArray[np.str_]:
        """Per length: MEASURED at a profile point, INTERPOLATED between points, EXTRAPOLATED outside."""
        return profile_basis(self.profile, lengths)


MEASURED, INTERPOLATED, EXTRAPOLATED = "measured", "interpolated", "extrapolated"


def profile_basis(profile: MeasuredProfile, lengths: ArrayLike) -> NDArray[np.str_]:
    """Where a profile value at each length comes from: a measured point, between points, or outside."""
    length = np.asarray(lengths, dtype=np.float64)
    x = np.asarray(profile.lengths, dtype=np.float64)
    inside = (length >= x[0]) & (length <= x[-1])
    return np.where(np.isin(length, x), MEASURED, np.where(inside, INTERPOLATED, EXTRAPOLATED))
