"""Continuous length distributions on [lo, hi]: truncated log-normal, gamma, uniform, each by its
closed forms over the shared base ``core.lengths.continuous.ContinuousLaw``.

scipy.special is imported where it is used (see ``core.lengths.continuous``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core.lengths.base import (
    check_bounds,
    checked_number,
    pin_quantiles,
)
from prfaas_plan.core.lengths.continuous import NARROW, TINY_MASS, ContinuousLaw
from prfaas_plan.errors import SpecError


def _log_ndtr_diff(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.float64]:
    """log(Phi(y) - Phi(x)) for x <= y, accurate in both tails (-inf when x == y, and where even
    the larger of the two is below a float: |x|, |y| > ~1e154, as with sigma 1e-200)."""
    from scipy.special import log_ndtr  # here, as in every method below: see the module docstring

    right = x > 0  # both in the upper tail: Phi(y) - Phi(x) = Phi(-x) - Phi(-y)
    with np.errstate(all="ignore"):
        big = log_ndtr(np.where(right, -x, y))
        small = log_ndtr(np.where(right, -y, x))
        return np.where(big == -np.inf, -np.inf, big + np.log(-np.expm1(small - big)))


def _exp_tilted_mean(a: NDArray[np.float64], b: NDArray[np.float64], s: NDArray[np.float64]):
    """E[X | a < X < b] for a density proportional to exp(s x) on (a, b); b may be inf."""
    with np.errstate(all="ignore"):
        w = b - a
        r = s * w
        frac = np.where(np.abs(r) < 1e-3, 0.5 + r / 12.0, 1.0 / (-np.expm1(-r)) - 1.0 / r)
        finite = a + w * frac
        tail = a - 1.0 / s
        return np.where(np.isfinite(w), finite, np.where(s < 0, tail, a))


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncatedLogNormal(ContinuousLaw):
    """ln L ~ Normal(mu, sigma^2), truncated to [lo, hi] tokens (hi may be inf).

    Closed forms with z(l) = (ln l - mu) / sigma and Phi the normal CDF:
    P(a < L < b) = (Phi(z_b) - Phi(z_a)) / Z and the partial expectation
    E[L; a < L < b] = exp(mu + sigma^2/2) (Phi(z_b - sigma) - Phi(z_a - sigma)) / Z,
    Z = Phi(z_hi) - Phi(z_lo), all evaluated as log-differences of ``log_ndtr`` so both tails
    keep their precision.

    Examples
    --------
    The paper's workload at t = 19.4K = 19,400 tokens (docs/model.md#the-case-study):

    >>> d = TruncatedLogNormal.paper()
    >>> round(d.tail_prob(19_400), 4), round(d.mean_above(19_400)), round(d.mean_below(19_400))
    (0.4957, 45046, 10224)
    >>> round(d.mean)
    27486
    """

    mu: float
    sigma: float
    lo: float = 1.0
    hi: float = math.inf

    @classmethod
    def paper(cls) -> TruncatedLogNormal:
        """The case study's L: log-normal(mu = 9.90, sigma = 1.00) on [128, 128K]
        (docs/model.md#the-case-study)."""
        return cls(mu=9.90, sigma=1.00, lo=128.0, hi=131072.0)

    def describe(self) -> dict[str, Any]:
        return {"kind": "truncated_lognormal", "mu": self.mu, "sigma": self.sigma, "lo_tokens": self.lo,
                "hi_tokens": self.hi if math.isfinite(self.hi) else None, "mean_tokens": self.mean}

    def _validate(self) -> None:
        object.__setattr__(self, "mu", checked_number("mu", self.mu))
        object.__setattr__(self, "sigma", checked_number("sigma", self.sigma, positive=True))
        check_bounds(self, allow_inf_hi=True)
        if not np.isfinite(self._log_z()):
            raise SpecError(f"[{self.lo}, {self.hi}] holds no probability of log-normal(mu={self.mu}, "
                            f"sigma={self.sigma})", field="workload.lo")

    def _zeta(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", over="ignore"):  # +-inf at a subnormal sigma: Phi is then 0 or 1
            return (np.log(x) - self.mu) / self.sigma

    def _log_z(self) -> float:
        return float(_log_ndtr_diff(self._zeta(np.array(self.lo)), self._zeta(np.array(self.hi))))

    def _mass(self, a, b):
        with np.errstate(all="ignore"):
            m = np.exp(_log_ndtr_diff(self._zeta(a), self._zeta(b)) - self._log_z())
        return np.where(a < b, m, 0.0)

    def _interval_mean(self, a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        za, zb, s = self._zeta(a), self._zeta(b), self.sigma
        with np.errstate(all="ignore"):
            m = np.exp(self.mu + 0.5 * s * s + _log_ndtr_diff(za - s, zb - s) - _log_ndtr_diff(za, zb))
            mid = np.where(np.isfinite(b), 0.5 * (a + b), a)
            slope = -(1.0 + (np.log(mid) - self.mu) / (s * s)) / mid  # d/dl ln(density)
            bad = ((b - a) <= NARROW * a) | ~np.isfinite(m)
        m = np.where(bad, _exp_tilted_mean(a, b, slope), m)
        return np.clip(m, a, b)

    def _ppf(self, q):
        from scipy.special import log_ndtr, ndtr, ndtri, ndtri_exp

        q = np.asarray(q, dtype=np.float64)
        za, zb = self._zeta(np.array(self.lo)), self._zeta(np.array(self.hi))
        fa, fb, sa, sb = ndtr(za), ndtr(zb), ndtr(-za), ndtr(-zb)
        if fb - fa > 1e-200:  # linear-space inversion is exact enough and 3x faster
            q1 = np.atleast_1d(q)
            lower = fa + q1 * (fb - fa)
            up = lower >= 0.5  # invert the survival function there, for precision near hi
            z = ndtri(np.where(up, 0.5, lower))
            z[up] = -ndtri((1 - q1[up]) * sa + q1[up] * sb)
            return pin_quantiles(q, np.exp(self.mu + self.sigma * z).reshape(q.shape), self.lo, self.hi)
        with np.errstate(all="ignore"):  # far-tail truncation: invert in log space
            log_lower = np.logaddexp(log_ndtr(za), np.log(q) + self._log_z())  # ln P(X < x) untruncated
            log_upper = np.logaddexp(np.log1p(-q) + log_ndtr(-za), np.log(q) + log_ndtr(-zb))
            z = np.where(log_lower < math.log(0.5), ndtri_exp(log_lower), -ndtri_exp(log_upper))
            x = np.exp(self.mu + self.sigma * z)
        return pin_quantiles(q, x, self.lo, self.hi)


@dataclass(frozen=True, slots=True, kw_only=True)
class Gamma(ContinuousLaw):
    """L ~ Gamma(shape k, scale theta) truncated to [lo, hi] (default [1, inf)).

    Closed forms with the regularised incomplete gamma P(k, x) (``gammainc``) and its complement:
    P(a < L < b) = (P(k, b/theta) - P(k, a/theta)) / Z and
    E[L; a < L < b] = k theta (P(k+1, b/theta) - P(k+1, a/theta)) / Z (differences of the
    complement are used above the median). Where a mass underflows to 0 a local exponential
    expansion of the density stands in, so nothing is NaN.
    """

    shape: float
    scale: float
    lo: float = 1.0
    hi: float = math.inf

    def describe(self) -> dict[str, Any]:
        return {"kind": "gamma", "shape": self.shape, "scale_tokens": self.scale, "lo_tokens": self.lo,
                "hi_tokens": self.hi if math.isfinite(self.hi) else None, "mean_tokens": self.mean}

    def _validate(self) -> None:
        object.__setattr__(self, "shape", checked_number("shape", self.shape, positive=True))
        object.__setattr__(self, "scale", checked_number("scale", self.scale, positive=True))
        check_bounds(self, allow_inf_hi=True)
        if not self._raw_mass(np.array(self.lo), np.array(self.hi), self.shape) > 0:
            raise SpecError(f"[{self.lo}, {self.hi}] holds no probability of gamma(shape={self.shape}, "
                            f"scale={self.scale})", field="workload.lo")

    def _raw_mass(self, a, b, k):
        from scipy.special import gammainc, gammaincc

        xa, xb = a / self.scale, b / self.scale
        upper = gammainc(k, xa) > 0.5
        return np.where(upper, gammaincc(k, xa) - gammaincc(k, xb), gammainc(k, xb) - gammainc(k, xa))

    def _mass(self, a, b):
        z = self._raw_mass(np.array(self.lo), np.array(self.hi), self.shape)
        return np.where(a < b, np.clip(self._raw_mass(a, b, self.shape) / z, 0.0, 1.0), 0.0)

    def _interval_mean(self, a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        k, theta = self.shape, self.scale
        m0 = self._raw_mass(a, b, k)
        with np.errstate(all="ignore"):
            m = k * theta * self._raw_mass(a, b, k + 1) / m0
            mid = np.where(np.isfinite(b), 0.5 * (a + b), a)
            narrow = (b - a) <= NARROW * a
            # In an underflowed tail the mass sits at the end the density decays from.
            at_a = narrow | ~np.isfinite(b) | ((k - 1.0) / a - 1.0 / theta < 0)
            at = np.where(narrow, mid, np.where(at_a, a, b))
            slope = (k - 1.0) / at - 1.0 / theta
            bad = narrow | ~(m0 > TINY_MASS) | ~np.isfinite(m)
        m = np.where(bad, _exp_tilted_mean(a, b, slope), m)
        return np.clip(m, a, b)

    def _ppf(self, q):
        from scipy.special import gammainc, gammaincc, gammainccinv, gammaincinv

        q = np.asarray(q, dtype=np.float64)
        k, theta = self.shape, self.scale
        pa, pb = gammainc(k, self.lo / theta), gammainc(k, self.hi / theta)
        qa, qb = gammaincc(k, self.lo / theta), gammaincc(k, self.hi / theta)
        lower = pa + q * (pb - pa)
        with np.errstate(all="ignore"):
            x = np.where(lower < 0.5, gammaincinv(k, lower), gammainccinv(k, (1 - q) * qa + q * qb))
        return pin_quantiles(q, x * theta, self.lo, self.hi)


@dataclass(frozen=True, slots=True, kw_only=True)
class Uniform(ContinuousLaw):
    """L ~ Uniform(lo, hi) tokens: P(L > t) = (hi - t)/(hi - lo), E[L | a < L < b] = (a + b)/2."""

    lo: float
    hi: float

    def describe(self) -> dict[str, Any]:
        return {"kind": "uniform", "lo_tokens": self.lo, "hi_tokens": self.hi, "mean_tokens": self.mean}

    def _validate(self) -> None:
        check_bounds(self, allow_inf_hi=False)

    def _mass(self, a, b):
        return np.clip((b - a) / (self.hi - self.lo), 0.0, 1.0)

    def _interval_mean(self, a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        return np.clip(0.5 * (a + b), a, b)

    def _ppf(self, q):
        q = np.asarray(q, dtype=np.float64)
        return pin_quantiles(q, self.lo + q * (self.hi - self.lo), self.lo, self.hi)
