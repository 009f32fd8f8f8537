"""Discrete length distributions: a point mass and a finite weighted sample."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core.lengths.base import (
    FloatOrArray,
    LengthFunction,
    apply_law,
    as_output,
    checked_number,
    checked_probability,
    checked_threshold,
    whole_tokens,
)
from prfaas_plan.errors import SpecError


@dataclass(frozen=True, slots=True, kw_only=True)
class Fixed:
    """Every request has L = value tokens (a point mass)."""

    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", checked_number("value", self.value, positive=True))

    @property
    def lo(self) -> float:
        return self.value

    @property
    def hi(self) -> float:
        return self.value

    @property
    def mean(self) -> float:
        return self.value

    def describe(self) -> dict[str, Any]:
        return {"kind": "fixed", "value_tokens": self.value, "mean_tokens": self.value}

    def tail_prob(self, t: ArrayLike) -> FloatOrArray:
        arr, scalar = checked_threshold(t)
        return as_output(np.where(arr < self.value, 1.0, 0.0), scalar)

    def mean_above(self, t: ArrayLike) -> FloatOrArray:
        arr, scalar = checked_threshold(t)
        return as_output(np.full(arr.shape, self.value), scalar)

    mean_below = mean_above

    def expect_above(self, f: LengthFunction, t: ArrayLike) -> FloatOrArray:
        arr, scalar = checked_threshold(t)
        return as_output(np.full(arr.shape, apply_law(f, np.array([self.value]))[0]), scalar)

    expect_below = expect_above

    def quantile(self, q: ArrayLike) -> FloatOrArray:
        arr, scalar = checked_probability(q)
        return as_output(np.full(arr.shape, self.value), scalar)

    def sample(self, rng: np.random.Generator, n: int) -> NDArray[np.int64]:
        return whole_tokens(np.full(int(n), self.value))


@dataclass(frozen=True, slots=True, kw_only=True, eq=False, repr=False)
class Empirical:
    """A finite sample of lengths with optional weights (counts); exact expectations.

    Values are sorted once with cumulative sums of weight and weight x value from both ends, so
    every threshold query is a ``searchsorted`` plus a division; ``expect_*`` evaluates f once on
    the distinct values. Zero-weight values are dropped (they are outside the support).
    """

    values: NDArray[np.float64]
    weights: NDArray[np.float64] | None = None
    _support: NDArray[np.float64] = field(init=False, compare=False)
    _prob: NDArray[np.float64] = field(init=False, compare=False)
    _head: NDArray[np.float64] = field(init=False, compare=False)  # _head[k] = P(L <= support[k-1])
    _tail: NDArray[np.float64] = field(init=False, compare=False)  # _tail[k] = P(L >= support[k])
    _head_sum: NDArray[np.float64] = field(init=False, compare=False)
    _tail_sum: NDArray[np.float64] = field(init=False, compare=False)

    @classmethod
    def from_histogram(cls, lengths: ArrayLike, counts: ArrayLike) -> Empirical:
        """From a histogram: ``counts[i]`` requests of ``lengths[i]`` tokens."""
        return cls(values=lengths, weights=counts)

    def __post_init__(self) -> None:
        v = np.asarray(self.values, dtype=np.float64).ravel()
        if v.size == 0:
            raise SpecError("an empirical distribution needs at least one length", field="workload.values")
        if not np.all(np.isfinite(v)) or np.any(v <= 0):
            bad = v[~(np.isfinite(v) & (v > 0))][0]
            raise SpecError(f"lengths must be finite and > 0, got {bad!r}", field="workload.values")
        if self.weights is None:
            w = np.ones_like(v)
        else:
            w = np.asarray(self.weights, dtype=np.float64).ravel()
            if w.shape != v.shape:
                raise SpecError(f"{w.size} weights for {v.size} lengths", field="workload.weights")
            if not np.all(np.isfinite(w)) or np.any(w < 0) or not w.sum() > 0:
                raise SpecError("weights must be finite, >= 0 and not all 0", field="workload.weights")
        support, inverse = np.unique(v, return_inverse=True)
        prob = np.bincount(inverse, weights=w, minlength=support.size)
        keep = prob > 0
        support, prob = support[keep], prob[keep] / prob[keep].sum()
        head = np.concatenate([[0.0], np.cumsum(prob)])
        tail = np.concatenate([np.cumsum(prob[::-1])[::-1], [0.0]])
        head[-1] = tail[0] = 1.0  # the whole sample, exactly: the sums may round to 1 - 1e-16
        head_sum = np.concatenate([[0.0], np.cumsum(prob * support)])
        tail_sum = np.concatenate([np.cumsum((prob * support)[::-1])[::-1], [0.0]])
        for name, arr in (("values", v), ("weights", w), ("_support", support), ("_prob", prob),
                          ("_head", head), ("_tail", tail), ("_head_sum", head_sum),
                          ("_tail_sum", tail_sum)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    def __repr__(self) -> str:
        return f"Empirical(n={self.values.size}, distinct={self._support.size}, mean={self.mean:.1f})"

    @property
    def lo(self) -> float:
        return float(self._support[0])

    @property
    def hi(self) -> float:
        return float(self._support[-1])

    @property
    def mean(self) -> float:
        return float(self._tail_sum[0] / self._tail[0])

    def describe(self) -> dict[str, Any]:
        return {"kind": "empirical", "n_values": int(self.values.size), "n_distinct": int(self._support.size),
                "lo_tokens": self.lo, "hi_tokens": self.hi, "mean_tokens": self.mean}

    def _split(self, t: ArrayLike) -> tuple[NDArray[np.intp], bool]:
        arr, scalar = checked_threshold(t)
        return np.searchsorted(self._support, arr, side="right"), scalar  # number of values <= t

    def tail_prob(self, t: ArrayLike) -> FloatOrArray:
        """p = P(L > t); exactly 1.0 for t < lo and 0.0 for t >= hi."""
        k, scalar = self._split(t)
        return as_output(np.clip(self._tail[k], 0.0, 1.0), scalar)

    def mean_above(self, t: ArrayLike) -> FloatOrArray:
        k, scalar = self._split(t)
        s, n = self._support, self._support.size
        with np.errstate(all="ignore"):
            m = self._tail_sum[k] / self._tail[k]
        kk = np.minimum(k, n - 1)
        return as_output(np.where(k < n, np.clip(m, s[kk], s[-1]), s[-1]), scalar)

    def mean_below(self, t: ArrayLike) -> FloatOrArray:
        k, scalar = self._split(t)
        s = self._support
        with np.errstate(all="ignore"):
            m = self._head_sum[k] / self._head[k]
        kk = np.maximum(k - 1, 0)
        return as_output(np.where(k > 0, np.clip(m, s[0], s[kk]), s[0]), scalar)

    def expect_above(self, f: LengthFunction, t: ArrayLike) -> FloatOrArray:
        k, scalar = self._split(t)
        fv = apply_law(f, self._support)
        tail_f = np.concatenate([np.cumsum((self._prob * fv)[::-1])[::-1], [0.0]])
        with np.errstate(all="ignore"):
            res = np.where(k < self._support.size, tail_f[k] / self._tail[k], fv[-1])
        return as_output(res, scalar)

    def expect_below(self, f: LengthFunction, t: ArrayLike) -> FloatOrArray:
        k, scalar = self._split(t)
        fv = apply_law(f, self._support)
        head_f = np.concatenate([[0.0], np.cumsum(self._prob * fv)])
        with np.errstate(all="ignore"):
            res = np.where(k > 0, head_f[k] / self._head[k], fv[0])
        return as_output(res, scalar)

    def quantile(self, q: ArrayLike) -> FloatOrArray:
        """Smallest value v with P(L <= v) >= q."""
        arr, scalar = checked_probability(q)
        idx = np.searchsorted(self._head[1:], arr * self._head[-1], side="left")
        return as_output(self._support[np.minimum(idx, self._support.size - 1)], scalar)

    def sample(self, rng: np.random.Generator, n: int) -> NDArray[np.int64]:
        """n draws with replacement, rounded to whole tokens (>= 1)."""
        idx = np.searchsorted(self._head[1:], rng.random(int(n)) * self._head[-1], side="right")
        return whole_tokens(self._support[np.minimum(idx, self._support.size - 1)])
