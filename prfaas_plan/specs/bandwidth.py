"""A link's bandwidth as a law: the distribution of the bandwidth it offers over time.

``values_bytes_per_s`` are the distinct bandwidths, ascending, and ``weights`` the share of
samples (empirical), of time (a series) or of the quantile range (quantiles) at each; they sum
to 1. A series also keeps its samples in time order (``times_s``, ``series_bytes_per_s``): what
a simulator replays.

Quantiles are right-continuous: ``quantile(q)`` is the smallest value with MORE than q of the
weight at or below it, Q(q) = inf {v : F(v) > q}. With n equal samples sorted x_1..x_n that is
x_(floor(n q) + 1): the median of 10, 20, 30, 40 is 30, the P10 of 1..100 is 11. A quantiles law
(p50 and some lower percentiles given) is the step law that holds each given value from its
percentile up to the next one given (the lowest also below its own): p1 2, p10 8, p50 14.7 is 2
for 10% of the time, 8 for 40%, 14.7 for 50%, a lower bound of any law with those percentiles,
and its quantile at each given percentile is the value given. The NOMINAL bandwidth (a link's
single number) is the law's median, ``quantile(0.5)``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate, pairwise

__all__ = ["EMPIRICAL", "QUANTILES", "SERIES", "BandwidthLaw"]

EMPIRICAL, QUANTILES, SERIES = "empirical", "quantiles", "series"
_CUM_TOL = 1e-12  # cumulative weights within this of q count as equal to it (float sums)


@dataclass(frozen=True, slots=True, kw_only=True)
class BandwidthLaw:
    kind: str  # EMPIRICAL, QUANTILES or SERIES
    values_bytes_per_s: tuple[float, ...]  # distinct, ascending, >= 0
    weights: tuple[float, ...]  # > 0, sum 1
    source: str = ""  # the file read, or "" for quantiles given inline
    samples: int = 0  # rows read (quantiles: the percentiles given)
    times_s: tuple[float, ...] | None = None  # a series: its sample times, strictly increasing
    series_bytes_per_s: tuple[float, ...] | None = None  # a series: its values in time order
    hold_last_s: float | None = None  # a series: how long its last value holds (the median interval)

    def __post_init__(self) -> None:
        v, w = self.values_bytes_per_s, self.weights
        assert v and len(v) == len(w) and all(a < b for a, b in pairwise(v)), "ascending values"
        assert v[0] >= 0 and all(x > 0 for x in w) and abs(math.fsum(w) - 1.0) < 1e-9, "a law"

    @property
    def cumulative(self) -> tuple[float, ...]:
        """F at each value: the weight at or below it (the last is 1)."""
        cum = list(accumulate(self.weights))
        cum[-1] = 1.0
        return tuple(cum)

    def quantile(self, q: float) -> float:
        """Q(q) = inf {v : F(v) > q} in bytes/s, for 0 <= q < 1 (see the module docstring)."""
        if not 0.0 <= q < 1.0:
            raise ValueError(f"a quantile level is in [0, 1), got {q!r}")
        cum = self.cumulative
        k = bisect_right(cum, q + _CUM_TOL)
        return self.values_bytes_per_s[min(k, len(cum) - 1)]

    @property
    def median_bytes_per_s(self) -> float:
        """The nominal bandwidth."""
        return self.quantile(0.5)

    @property
    def mean_bytes_per_s(self) -> float:
        return math.fsum(v * w for v, w in zip(self.values_bytes_per_s, self.weights, strict=True))

    @property
    def down_fraction(self) -> float:
        """The weight at bandwidth 0 (the link down)."""
        return self.weights[0] if self.values_bytes_per_s[0] == 0 else 0.0

    @property
    def duration_s(self) -> float | None:
        """A series' span: first time to last plus the last value's hold."""
        if self.times_s is None or self.hold_last_s is None:
            return None
        return self.times_s[-1] - self.times_s[0] + self.hold_last_s
