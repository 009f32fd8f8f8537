"""Continuous length distributions on [lo, hi]: truncated log-normal, gamma, uniform.

scipy.special (the normal and incomplete-gamma functions) is imported where it is used, not
here: it costs a quarter of a second, more than a whole `kv-rate`, and a uniform, fixed or
empirical workload needs none of it; nor does a distribution loaded from the cache (io/cache.py)
that is asked only what it was asked before (see ``_Continuous._recall``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core.lengths.base import (
    FloatOrArray,
    LengthFunction,
    _apply,
    _bounds,
    _number,
    _out,
    _pin,
    _probability,
    _threshold,
    _whole_tokens,
)
from prfaas_plan.errors import SpecError

_GRID_CELLS = 2048  # log-spaced cells, merged with as many equal-probability cells
_NARROW = 1e-6  # relative interval width below which a local expansion replaces CDF differences
_UNBOUNDED_TOP_Q = 1.0 - 1e-12  # log-spaced grid of an unbounded support stops at this quantile
_TINY_MASS = 1e-200  # below this, masses may be subnormal: one node at the conditional mean instead
_MEMO_CELLS = 1 << 17  # numbers (inputs and results) a distribution remembers, 1 MiB: see _recall




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


@dataclass(frozen=True, slots=True)
class _Grid:
    """Quadrature cells [edges[i], edges[i+1]] with probability masses and conditional means."""

    edges: NDArray[np.float64]
    masses: NDArray[np.float64]
    nodes: NDArray[np.float64]
    head_mass: NDArray[np.float64]  # head_mass[j] = sum(masses[:j])
    tail_mass: NDArray[np.float64]  # tail_mass[j] = sum(masses[j:])
    mean: float


@dataclass(slots=True)
class _Memo:
    """Results of a distribution's hooks by their exact inputs, up to ``_MEMO_CELLS`` numbers."""

    results: dict[tuple[Any, ...], Any] = field(default_factory=dict)
    cells: int = 0


# ----------------------------------------------------------------------------- parametric


@dataclass(frozen=True, slots=True, kw_only=True)
class _Continuous:
    """Shared machinery of the continuous distributions on [lo, hi].

    Subclasses supply ``_validate``, ``_mass(a, b)`` = P(a < L < b), ``_interval_mean(a, b)`` =
    E[L | a < L < b] (never NaN, inside [a, b], = a when a == b) and ``_ppf(q)``.

    ``expect_above`` / ``expect_below`` use a grid built once per distribution: 2,048 log-spaced
    cells merged with 2,048 equal-probability cells, each with its exact mass (CDF difference) and
    its exact conditional mean c_i as node, so E[f(L)] ~ sum m_i f(c_i) (exact for f(l) = l, error
    ~ f'' x within-cell variance otherwise). Per call, f is evaluated once on the nodes, cumulative
    sums of m_i f(c_i) give the whole cells, and the cell holding t contributes its part beyond
    (below) t with that part's exact mass and conditional mean, which keeps the result continuous
    in t. An unbounded support's last cell starts at the 1 - 1e-12 quantile. A conditioning set
    of probability below 1e-200 (masses could be subnormal) takes f at its conditional mean.
    Measured on the paper's workload: f(l) = l matches ``mean_above`` to 1e-14, f(l) = l^2 matches
    its closed form to 1e-6, 2,000 thresholds cost ~2 ms.
    """

    _grid: _Grid = field(init=False, repr=False, compare=False)
    _memo: _Memo = field(init=False, repr=False, compare=False)
    if TYPE_CHECKING:  # fields of every subclass, declared there so they keep their own order
        lo: float
        hi: float

    def __post_init__(self) -> None:
        self._validate()
        object.__setattr__(self, "_grid", self._build_grid())
        object.__setattr__(self, "_memo", _Memo())

    def _recall(self, hook: Any, *args: NDArray[np.float64]) -> Any:
        """``hook(*args)`` (``_mass``, ``_interval_mean``, ``_ppf``), remembered by the exact bytes,
        dtype and shape of its inputs: a pure function, so a remembered result is the very result
        (bit for bit) of computing it again. The memo travels with the distribution when it is
        pickled (the cache of loaded scenarios keeps it), so a command run again on a cached
        scenario asks scipy nothing; it is no part of the distribution's value (not compared, not
        shown), and stops growing at ``_MEMO_CELLS`` numbers."""
        arrays = [np.asarray(x) for x in args]
        key = (hook.__name__, *((x.dtype.str, x.shape, x.tobytes()) for x in arrays))
        memo = self._memo
        if key in memo.results:
            out = memo.results[key]
        else:
            out = hook(*args)
            cells = sum(x.size for x in arrays) + np.size(out)
            if memo.cells + cells <= _MEMO_CELLS:
                memo.results[key] = out.copy() if isinstance(out, np.ndarray) else out
                memo.cells += cells
                return out
        return out.copy() if isinstance(out, np.ndarray) else out

    # hooks
    def _validate(self) -> None:
        raise NotImplementedError

    def _mass(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _interval_mean(self, a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _ppf(self, q: NDArray[np.float64]) -> NDArray[np.float64]:
        raise NotImplementedError

    def _build_grid(self) -> _Grid:
        lo, hi = self.lo, self.hi
        top = hi if math.isfinite(hi) else float(self._ppf(np.array(_UNBOUNDED_TOP_Q)))
        geometric = np.geomspace(lo, max(top, lo * (1 + 1e-9)), _GRID_CELLS + 1)
        quantiles = self._ppf(np.linspace(0.0, 1.0, _GRID_CELLS + 1))
        edges = np.unique(np.concatenate([geometric, quantiles, [lo, hi]]))
        edges = edges[(edges >= lo) & (edges <= hi)]
        a, b = edges[:-1], edges[1:]
        masses = self._mass(a, b)
        nodes = self._interval_mean(a, b)
        head = np.concatenate([[0.0], np.cumsum(masses)])
        tail = np.concatenate([np.cumsum(masses[::-1])[::-1], [0.0]])
        mean = float(self._interval_mean(np.array(lo), np.array(hi)))
        for arr in (edges, masses, nodes, head, tail):
            arr.setflags(write=False)
        return _Grid(edges=edges, masses=masses, nodes=nodes, head_mass=head, tail_mass=tail, mean=mean)

    # public API
    @property
    def mean(self) -> float:
        """E[L], tokens."""
        return self._grid.mean

    def tail_prob(self, t: ArrayLike) -> FloatOrArray:
        """p = P(L > t); exactly 1.0 for t <= lo and 0.0 for t >= hi (a rule that routes all or
        nothing must do so exactly, not by a mass that rounds to 1 - 1e-16)."""
        arr, scalar = _threshold(t)
        tc = np.clip(arr, self.lo, self.hi)
        p = np.clip(self._recall(self._mass, tc, np.full_like(tc, self.hi)), 0.0, 1.0)
        return _out(np.where(arr <= self.lo, 1.0, np.where(arr >= self.hi, 0.0, p)), scalar)

    def mean_above(self, t: ArrayLike) -> FloatOrArray:
        """l_long = E[L | L > t]; hi where P(L > t) = 0."""
        arr, scalar = _threshold(t)
        tc = np.clip(arr, self.lo, self.hi)
        return _out(self._recall(self._interval_mean, tc, np.full_like(tc, self.hi)), scalar)

    def mean_below(self, t: ArrayLike) -> FloatOrArray:
        """l_short = E[L | L <= t]; lo where P(L <= t) = 0."""
        arr, scalar = _threshold(t)
        tc = np.clip(arr, self.lo, self.hi)
        return _out(self._recall(self._interval_mean, np.full_like(tc, self.lo), tc), scalar)

    def expect_above(self, f: LengthFunction, t: ArrayLike) -> FloatOrArray:
        """E[f(L) | L > t] by the cached grid; f(hi) where P(L > t) = 0."""
        return self._expect(f, t, above=True)

    def expect_below(self, f: LengthFunction, t: ArrayLike) -> FloatOrArray:
        """E[f(L) | L <= t] by the cached grid; f(lo) where P(L <= t) = 0."""
        return self._expect(f, t, above=False)

    def quantile(self, q: ArrayLike) -> FloatOrArray:
        """The length l with P(L <= l) = q."""
        arr, scalar = _probability(q)
        return _out(self._recall(self._ppf, arr), scalar)

    def sample(self, rng: np.random.Generator, n: int) -> NDArray[np.int64]:
        """n lengths by inversion, rounded to whole tokens (>= 1)."""
        return _whole_tokens(self._ppf(rng.random(int(n))))

    def _expect(self, f: LengthFunction, t: ArrayLike, *, above: bool) -> FloatOrArray:
        arr, scalar = _threshold(t)
        g = self._grid
        lo, hi = self.lo, self.hi
        tc = np.clip(arr, lo, hi)
        cells = len(g.masses)
        j = np.clip(np.searchsorted(g.edges, tc, side="right") - 1, 0, cells - 1)
        if above:
            part_mass = self._recall(self._mass, tc, g.edges[j + 1])
            part_node = self._recall(self._interval_mean, tc, g.edges[j + 1])
            whole_node = self._recall(self._interval_mean, tc, np.full_like(tc, hi))
        else:
            part_mass = self._recall(self._mass, g.edges[j], tc)
            part_node = self._recall(self._interval_mean, g.edges[j], tc)
            whole_node = self._recall(self._interval_mean, np.full_like(tc, lo), tc)
        fv = _apply(f, np.concatenate([g.nodes, part_node.ravel(), whole_node.ravel()]))
        weighted = g.masses * fv[:cells]
        part_f = fv[cells:cells + tc.size].reshape(tc.shape)
        whole_f = fv[cells + tc.size:].reshape(tc.shape)
        if above:
            cells_f = np.concatenate([np.cumsum(weighted[::-1])[::-1], [0.0]])[j + 1]
            den = g.tail_mass[j + 1] + part_mass
        else:
            cells_f = np.concatenate([[0.0], np.cumsum(weighted)])[j]
            den = g.head_mass[j] + part_mass
        with np.errstate(all="ignore"):
            num = cells_f + part_mass * part_f
            # A conditioning set of (nearly) zero probability, t at or beyond the support edge or in
            # an underflowed tail, takes f at its conditional mean (hi or lo at the edge).
            res = np.where(den > _TINY_MASS, num / np.where(den > 0, den, 1.0), whole_f)
        return _out(res, scalar)


@dataclass(frozen=True, slots=True, kw_only=True)
class TruncatedLogNormal(_Continuous):
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
        """The case study's L: log-normal(mu = 9.90, sigma = 1.00) on [128, 128K] (docs/model.md#the-case-study)."""
        return cls(mu=9.90, sigma=1.00, lo=128.0, hi=131072.0)

    def describe(self) -> dict[str, Any]:
        return {"kind": "truncated_lognormal", "mu": self.mu, "sigma": self.sigma, "lo_tokens": self.lo,
                "hi_tokens": self.hi if math.isfinite(self.hi) else None, "mean_tokens": self.mean}

    def _validate(self) -> None:
        object.__setattr__(self, "mu", _number("mu", self.mu))
        object.__setattr__(self, "sigma", _number("sigma", self.sigma, positive=True))
        _bounds(self, allow_inf_hi=True)
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
            bad = ((b - a) <= _NARROW * a) | ~np.isfinite(m)
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
            return _pin(q, np.exp(self.mu + self.sigma * z).reshape(q.shape), self.lo, self.hi)
        with np.errstate(all="ignore"):  # far-tail truncation: invert in log space
            log_lower = np.logaddexp(log_ndtr(za), np.log(q) + self._log_z())  # ln P(X < x) untruncated
            log_upper = np.logaddexp(np.log1p(-q) + log_ndtr(-za), np.log(q) + log_ndtr(-zb))
            z = np.where(log_lower < math.log(0.5), ndtri_exp(log_lower), -ndtri_exp(log_upper))
            x = np.exp(self.mu + self.sigma * z)
        return _pin(q, x, self.lo, self.hi)


@dataclass(frozen=True, slots=True, kw_only=True)
class Gamma(_Continuous):
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
        object.__setattr__(self, "shape", _number("shape", self.shape, positive=True))
        object.__setattr__(self, "scale", _number("scale", self.scale, positive=True))
        _bounds(self, allow_inf_hi=True)
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
            narrow = (b - a) <= _NARROW * a
            # In an underflowed tail the mass sits at the end the density decays from.
            at_a = narrow | ~np.isfinite(b) | ((k - 1.0) / a - 1.0 / theta < 0)
            at = np.where(narrow, mid, np.where(at_a, a, b))
            slope = (k - 1.0) / at - 1.0 / theta
            bad = narrow | ~(m0 > _TINY_MASS) | ~np.isfinite(m)
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
        return _pin(q, x * theta, self.lo, self.hi)


@dataclass(frozen=True, slots=True, kw_only=True)
class Uniform(_Continuous):
    """L ~ Uniform(lo, hi) tokens: P(L > t) = (hi - t)/(hi - lo), E[L | a < L < b] = (a + b)/2."""

    lo: float
    hi: float

    def describe(self) -> dict[str, Any]:
        return {"kind": "uniform", "lo_tokens": self.lo, "hi_tokens": self.hi, "mean_tokens": self.mean}

    def _validate(self) -> None:
        _bounds(self, allow_inf_hi=False)

    def _mass(self, a, b):
        return np.clip((b - a) / (self.hi - self.lo), 0.0, 1.0)

    def _interval_mean(self, a, b):
        a, b = np.broadcast_arrays(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64))
        return np.clip(0.5 * (a + b), a, b)

    def _ppf(self, q):
        q = np.asarray(q, dtype=np.float64)
        return _pin(q, self.lo + q * (self.hi - self.lo), self.lo, self.hi)
