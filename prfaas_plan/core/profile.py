"""Measured prefill profiles (PAPER.md Table 5) as functions of length.

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
from scipy.interpolate import PchipInterpolator

from prfaas_plan.specs.model import MeasuredProfile

INTERPOLATION = "quadratic least-squares fit + PCHIP of residuals (exact at measured points)"


@dataclass(frozen=True)
class ProfileCurve:
    """T_prefill(l) and S_kv(l) from a measured profile, vectorised over l (tokens)."""

    profile: MeasuredProfile
    coef: tuple[float, float, float]  # a, b, c of a + b*l + c*l^2
    residual: PchipInterpolator | None

    @classmethod
    def fit(cls, profile: MeasuredProfile) -> ProfileCurve:
        x = np.asarray(profile.lengths, dtype=np.float64)
        y = np.asarray(profile.prefill_s, dtype=np.float64)
        degree = min(2, len(x) - 1)
        design = np.vander(x, degree + 1, increasing=True)
        coef, *_ = np.linalg.lstsq(design, y, rcond=None)
        coef = np.pad(coef, (0, 3 - len(coef)))
        resid = y - (coef[0] + coef[1] * x + coef[2] * x * x)
        curve = PchipInterpolator(x, resid, extrapolate=False) if len(x) >= 2 else None
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
