"""Arrivals as a trace measured them: the rate over time, for a piecewise-stationary TTFT.

A trace's requests do not arrive as one Poisson stream: over minutes the rate swings (the Azure
LLM inference 2023 code trace peaks at 4.1x its mean in one-minute bins). The analytic model
(``core.latency``) holds for a stationary stream; this module cuts the trace into windows (the
bins `trace stats` shows: the smallest readable width giving at most 60 of them) and gives each
window's rate as a factor of the mean rate and its share of the requests. The latency model then
evaluates each window at its own rate (Poisson inside it) and weighs the windows by their
requests: a request in a busy minute sees that minute's queues. A window over capacity has no
stationary law: the stage is unstable there, and the output says so.

Neglected: a queue built in one window and drained in the next (the windows are independent),
and variability inside a window beyond Poisson.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike

TARGET_BINS = 60
# bin widths a person reads at a glance, s: the default bin is the smallest of them giving <= 60 bins
NICE_BINS_S = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 20, 30, 60, 120, 300, 600,
               900, 1800, 3600, 7200, 3 * 3600, 6 * 3600, 12 * 3600, 86400)
# windows whose rates differ by less than this ratio are evaluated as one (at their request-weighted
# mean rate): a 58-window trace then costs about 20 evaluations, not 58
GROUP_RATIO = 1.02
# requests a bin holds at least at the mean rate, so that its count measures a rate (Poisson noise 10%)
MIN_PER_BIN = 100
MIN_GAPS = 10  # gaps a window needs for its variability to count


def default_bin_s(span_s: float) -> float:
    """The smallest of ``NICE_BINS_S`` (then whole days) splitting ``span_s`` into at most 60 bins."""
    want = span_s / TARGET_BINS
    for b in NICE_BINS_S:
        if b >= want * (1 - 1e-12):
            return float(b)
    return float(math.ceil(want / 86400) * 86400)


@dataclass(frozen=True, slots=True, kw_only=True)
class RateProfile:
    """A trace's arrival rate over time, relative to its mean rate (n - 1) / span.

    ``factors[k]``: the rate of window group k over the mean rate; ``weights[k]``: its share of the
    requests (they sum to 1). ``windows`` and ``bin_s``: how the trace was cut; ``peak_to_mean``:
    the busiest window's factor before grouping."""

    factors: tuple[float, ...]
    weights: tuple[float, ...]
    windows: int
    bin_s: float
    peak_to_mean: float
    # squared coefficient of variation of the gaps between arrivals inside a window (each gap over
    # its window's mean gap; windows weighted by their gaps): 1 for Poisson, far above for batches
    arrival_scv: float = 1.0
    # every window's (shrunk) factor in time order, and its share of the span: the law of the rate
    # over time that `--plan-at` reads (``rate_at``); empty for a profile built by hand
    window_factors: tuple[float, ...] = ()
    window_shares: tuple[float, ...] = ()

    @property
    def stationary(self) -> bool:
        """One rate throughout (a single group): the Poisson model at the mean rate is the law."""
        return len(self.factors) == 1

    def rate_at(self, q: float) -> float:
        """The windowed rate's q-quantile over time, as a factor of the mean rate: the factor of the
        slowest window such that windows no faster fill at least a share q of the span (a rate the
        trace ran at, not an interpolation). P90: 90% of the time the rate was at most this."""
        if not self.window_factors:
            return 1.0
        f = np.asarray(self.window_factors)
        order = np.argsort(f, kind="stable")
        cum = np.cumsum(np.asarray(self.window_shares)[order])
        k = int(np.searchsorted(cum, q * cum[-1] * (1 - 1e-12)))
        return float(f[order][min(k, len(f) - 1)])

    def held(self) -> RateProfile:
        """The stream at one rate throughout (one window group), keeping the variability inside a
        window and the description of the trace's windows: a window planned for as if it lasted."""
        return replace(self, factors=(1.0,), weights=(1.0,))


def rate_profile(arrival_s: ArrayLike, bin_s: float | None = None) -> RateProfile | None:
    """The rate profile of arrivals ``arrival_s`` (s, any order) in bins of ``bin_s``; None for
    fewer than two requests or no span.

    The default bin is the smallest readable width giving at most 60 bins and at least
    ``MIN_PER_BIN`` requests per bin at the mean rate. A bin's count is noisy even for a steady
    stream (Poisson: variance = its mean), so the factors are shrunk towards 1 by the share of their
    spread that noise explains (empirical Bayes): s = max(0, 1 - mean(1 / m_k) / var(f)), f' = 1 + s
    (f - 1), with m_k the bin's expected count; a Poisson stream comes out (nearly) stationary. A
    partial last bin joins the one before it (that window is then wider; its rate is its count over
    its width)."""
    t = np.sort(np.asarray(arrival_s, dtype=np.float64))
    n = len(t)
    span = float(t[-1] - t[0]) if n else 0.0
    if n < 2 or not span > 0:
        return None
    mean = (n - 1) / span
    width = bin_s if bin_s is not None else default_bin_s(max(span, MIN_PER_BIN / mean * TARGET_BINS))
    n_bins = max(1, math.floor(span / width + 1e-9))  # a partial last bin joins the one before it
    idx = np.minimum(np.floor((t - t[0]) / width).astype(np.int64), n_bins - 1)
    counts = np.bincount(idx, minlength=n_bins).astype(np.float64)
    widths = np.full(n_bins, float(width))  # a float array: an int bin_s must not truncate the last width
    widths[-1] = span - (n_bins - 1) * width
    f = counts / widths / mean
    expected = mean * widths
    spread = float(np.average((f - np.average(f, weights=widths)) ** 2, weights=widths)) if n_bins > 1 else 0.0
    noise = float(np.average(1.0 / expected, weights=widths))
    shrink = max(0.0, 1.0 - noise / spread) if spread > 0 else 0.0
    f = 1.0 + shrink * (f - 1.0)
    w = f * widths  # requests in each window at its (shrunk) rate
    keep = w > 0
    return replace(_grouped(f[keep], w[keep] / w[keep].sum(), windows=n_bins, bin_s=width),
                   arrival_scv=_scv_inside(t, idx), window_factors=tuple(float(x) for x in f),
                   window_shares=tuple(float(x) for x in widths / span))


def _scv_inside(t: np.ndarray, idx: np.ndarray) -> float:
    """The SCV of the gaps inside windows (both ends in one window), each over its window's mean
    gap, pooled over windows with at least ``MIN_GAPS`` gaps; 1 (Poisson) when none has, and
    shrunk towards 1 by the share of its departure that sampling noise explains."""
    gaps, same = np.diff(t), idx[1:] == idx[:-1]
    k, g = idx[1:][same], gaps[same]
    n = np.bincount(k, minlength=int(idx[-1]) + 1)
    total = np.bincount(k, weights=g, minlength=len(n))
    ok = n >= MIN_GAPS
    if not ok.any():
        return 1.0
    mean = np.divide(total, n, out=np.ones(len(n)), where=n > 0)
    use = ok[k] & (mean[k] > 0)
    x = g[use] / mean[k][use]
    if not len(x):
        return 1.0
    # shrunk towards Poisson's 1 by its sampling noise (for exponential gaps Var((x - 1)^2) = 8): a
    # few dozen gaps measure no departure from Poisson, thousands of batched ones do
    scv = float(np.mean((x - 1.0) ** 2))
    keep = max(0.0, 1.0 - (8.0 / len(x)) / (scv - 1.0) ** 2) if scv != 1.0 else 0.0
    return 1.0 + keep * (scv - 1.0)


def _grouped(f: np.ndarray, w: np.ndarray, *, windows: int, bin_s: float) -> RateProfile:
    """Windows whose factors lie within ``GROUP_RATIO`` of the group's first (sorted) as one group
    at their request-weighted mean factor."""
    order = np.argsort(f, kind="stable")
    f, w = f[order], w[order]
    factors, weights = [], []
    start = 0
    for k in range(1, len(f) + 1):
        if k == len(f) or f[k] > f[start] * GROUP_RATIO:
            ws = float(w[start:k].sum())
            factors.append(float((f[start:k] * w[start:k]).sum() / ws))
            weights.append(ws)
            start = k
    total = sum(weights)
    return RateProfile(factors=tuple(factors), weights=tuple(x / total for x in weights), windows=windows,
                       bin_s=bin_s, peak_to_mean=float(f[-1]))
