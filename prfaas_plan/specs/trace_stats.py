"""What a request trace holds (`prfaas-plan trace stats`): typed results, SI units.

Built by ``api.trace_stats``; rendered by ``report.views_trace`` and ``report.plots_trace``.
Values that do not exist are ``None``, never NaN: a trace whose requests all arrive at one
instant has no arrival rate, a trace without prefix hashes has no hit rate.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = ["ArrivalBins", "CachePoint", "LengthStats", "PrefixReuse", "TraceStats"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LengthStats:
    """Quantiles of one per-request length (tokens), numpy's linear percentile."""

    mean: float
    p50: float
    p90: float
    p99: float
    max: int
    total: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ArrivalBins:
    """Arrivals per bin of ``bin_s`` from the first arrival; the last bin holds the last arrival.

    ``full_bins`` bins lie wholly inside the span; the rate statistics (req/s) are over those
    (a partial last bin would read low), None when no bin is full (the bin is longer than the span).
    """

    bin_s: float
    chosen: bool  # True: picked from the span; False: given with --bin
    starts_s: tuple[float, ...]  # bin starts, s after the first arrival
    counts: tuple[int, ...]
    full_bins: int
    min_rps: float | None
    median_rps: float | None
    max_rps: float | None
    peak_to_mean: float | None  # max_rps / the trace's mean rate


@dataclass(frozen=True, slots=True, kw_only=True)
class CachePoint:
    """The token-weighted prefix hit rate under one LRU cache size (``capacity_blocks`` None: unbounded)."""

    label: str
    capacity_blocks: int | None
    capacity_tokens: int | None
    hit_rate: float
    block_hit_rate: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefixReuse:
    """Prefix reuse over the hashed blocks: the working set and hit rates by cache size."""

    block_tokens: int
    total_blocks: int
    distinct_blocks: int
    sizing: str  # how the sized caches were chosen, in words
    unbounded: CachePoint
    sized: tuple[CachePoint, ...]
    curve: tuple[CachePoint, ...] = ()  # a finer size sweep, for the figure only

    @property
    def working_set_tokens(self) -> int:
        return self.distinct_blocks * self.block_tokens


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TraceStats:
    """One trace: counts, arrivals, lengths, prefix reuse (None: the trace has no prefix hashes)."""

    source: str
    format: str
    requests: int
    first_arrival_s: float
    span_s: float
    mean_rate_rps: float | None  # (n - 1) / span; None when span = 0
    bins: ArrivalBins | None  # None when span = 0
    input: LengthStats
    output: LengthStats
    reuse: PrefixReuse | None
    failed_excluded: int = 0
    filtered_out: int = 0
    models: tuple[str, ...] = ()
    model_filter: str | None = None
    input_tokens: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # sorted
    output_tokens: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # sorted
    # the windows the planner reads the rate in (core.arrivals.RateProfile) and the windowed rate's
    # percentiles over time, req/s (`--plan-at rate=pNN`); None without a rate
    planning_window_s: float | None = None
    planning_windows: int = 0
    windowed_rps: tuple[tuple[str, float], ...] = ()
