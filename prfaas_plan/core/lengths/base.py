"""Shared parts of the length distributions: the protocol and the argument helpers."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.errors import SpecError

FloatOrArray = float | NDArray[np.float64]
LengthFunction = Callable[[NDArray[np.float64]], ArrayLike]


@runtime_checkable
class LengthDistribution(Protocol):
    """What the throughput model and the simulator need of a length distribution."""

    @property
    def lo(self) -> float: ...
    @property
    def hi(self) -> float: ...
    @property
    def mean(self) -> float: ...
    def describe(self) -> dict[str, Any]: ...
    def tail_prob(self, t: ArrayLike) -> FloatOrArray: ...
    def mean_above(self, t: ArrayLike) -> FloatOrArray: ...
    def mean_below(self, t: ArrayLike) -> FloatOrArray: ...
    def expect_above(self, f: LengthFunction, t: ArrayLike) -> FloatOrArray: ...
    def expect_below(self, f: LengthFunction, t: ArrayLike) -> FloatOrArray: ...
    def quantile(self, q: ArrayLike) -> FloatOrArray: ...
    def sample(self, rng: np.random.Generator, n: int) -> NDArray[np.int64]: ...


# ----------------------------------------------------------------------------- helpers


def checked_threshold(t: ArrayLike) -> tuple[NDArray[np.float64], bool]:
    arr = np.asarray(t, dtype=np.float64)
    if np.isnan(arr).any():
        raise ValueError("threshold t contains NaN")
    return arr, arr.ndim == 0


def checked_probability(q: ArrayLike) -> tuple[NDArray[np.float64], bool]:
    arr = np.asarray(q, dtype=np.float64)
    if not np.all((arr >= 0.0) & (arr <= 1.0)):
        raise ValueError("quantile levels q must lie in [0, 1]")
    return arr, arr.ndim == 0


def as_output(x: ArrayLike, scalar: bool) -> FloatOrArray:
    return float(np.asarray(x)) if scalar else np.asarray(x, dtype=np.float64)


def apply_law(f: LengthFunction, x: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(all="ignore"):
        y = np.asarray(f(x), dtype=np.float64)
    return np.broadcast_to(y, x.shape)


def pin_quantiles(q: NDArray[np.float64], x: NDArray[np.float64], lo: float, hi: float) -> NDArray[np.float64]:
    """Quantile values clipped to [lo, hi], exactly lo at q = 0 and hi at q = 1."""
    return np.where(q <= 0, lo, np.where(q >= 1, hi, np.clip(x, lo, hi)))


def whole_tokens(x: NDArray[np.float64]) -> NDArray[np.int64]:
    return np.maximum(np.rint(x), 1.0).astype(np.int64)


def checked_number(name: str, value: Any, *, positive: bool = False, allow_inf: bool = False) -> float:
    where = f"workload.{name}"
    if isinstance(value, bool):
        raise SpecError(f"{name} must be a number, got {value!r}", field=where)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise SpecError(f"{name} must be a number, got {value!r}", field=where) from None
    if math.isnan(v) or (math.isinf(v) and not (allow_inf and v > 0)):
        raise SpecError(f"{name} must be finite, got {value!r}", field=where)
    if positive and v <= 0:
        raise SpecError(f"{name} must be > 0, got {value!r}", field=where)
    return v


def check_bounds(obj: Any, *, allow_inf_hi: bool) -> None:
    lo = checked_number("lo", obj.lo, positive=True)
    hi = checked_number("hi", obj.hi, positive=True, allow_inf=allow_inf_hi)
    if lo >= hi:
        raise SpecError(f"lo must be < hi, got lo={obj.lo!r}, hi={obj.hi!r}", field="workload.lo")
    object.__setattr__(obj, "lo", lo)
    object.__setattr__(obj, "hi", hi)
