"""A link's bandwidth series replayed in a run, and the router's short-term threshold policies.

The series (``BandwidthSeries``: times and the line's bandwidth, each value holding until the next
time) sets the link's rate as the run's clock passes each time; a bandwidth of 0 is the link down
(transfers in flight wait). The router's threshold at each arrival comes from one policy:

- ``static``: the plan's t always;
- ``rule``: the paper's link-utilisation rule (``control.max_link_utilization``: requests just above
  t stay local while the link has been busy; ``sim.policies.LinkMonitor``), with the plan's t;
- ``table``: the threshold table (`prfaas-plan thresholds`) read at the current line bandwidth
  (the row at or below it) and the arrival rate of the last ``window_s`` seconds (the first
  entry serving at least that rate; past every entry, the throughput optimum); a link at 0 or
  an entry that does not offload sends every request local. The table's rows were planned with
  the split optimize chooses at their bandwidth, so the long-term loop follows it: every
  ``RESPLIT_S`` seconds one local instance moves between prefill and decode toward the row's
  N_p, when the instance it takes is idle (as ``sim.policies.RoleBalancer`` moves them).

``Timeline`` collects, per window of the run, what arrived then: TTFT quantiles and the share
meeting the SLO, the link's utilisation of the capacity the series gave it, the threshold in use.
"""

from __future__ import annotations

import bisect
import math
from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

STATIC, RULE, TABLE = "static", "rule", "table"
POLICIES = (STATIC, RULE, TABLE)
RESPLIT_S = 10.0


@dataclass(frozen=True, slots=True, kw_only=True)
class BandwidthSeries:
    """The line's bandwidth over time (bytes/s, >= 0) and B_out at each value (bytes/s)."""

    times_s: NDArray[np.float64]  # strictly increasing, from 0
    line_bytes_per_s: NDArray[np.float64]
    usable_bytes_per_s: NDArray[np.float64]

    def at(self, t: NDArray[np.float64]) -> NDArray[np.int64]:
        """Index of the value holding at each time (the series repeats past its end)."""
        span = self.span_s
        t = np.mod(t, span) if span > 0 else np.zeros_like(t)
        return np.maximum(np.searchsorted(self.times_s, t, side="right") - 1, 0)

    @property
    def span_s(self) -> float:
        """One period: the last time plus the first interval (the last value holds as long)."""
        t = self.times_s
        return float(t[-1] + (t[1] - t[0])) if len(t) > 1 else 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TableLookup:
    """One site's threshold table: rows by line bandwidth (ascending), per row the entries by rate."""

    bandwidths: tuple[float, ...]  # line bytes/s, ascending
    rates: tuple[tuple[float, ...], ...]  # per row: the entries' total arrival rates, ascending
    thresholds: tuple[tuple[float, ...], ...]  # per row: t, inf where the entry offloads nothing
    n_p: tuple[int, ...] | None = None  # per row: the local prefill instances its entries assume

    def row(self, line_bytes_per_s: float) -> int:
        return max(bisect.bisect_right(self.bandwidths, line_bytes_per_s * (1 + 1e-12)) - 1, 0)

    def threshold(self, line_bytes_per_s: float, rate_rps: float) -> float:
        if line_bytes_per_s <= 0:
            return math.inf
        row = self.row(line_bytes_per_s)
        rates, ts = self.rates[row], self.thresholds[row]
        k = bisect.bisect_left(rates, rate_rps)
        return ts[min(k, len(ts) - 1)]


class Router:
    """The threshold a run routes by, at each arrival, under one policy; and the run's bandwidth."""

    def __init__(self, run: Any, series: BandwidthSeries | None, policy: str, lookup: TableLookup | None,
                 window_s: float) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown policy {policy!r}")
        if policy == TABLE and lookup is None:
            raise ValueError("the table policy needs a threshold table")
        self.run, self.series, self.policy, self.lookup, self.window_s = run, series, policy, lookup, window_s
        self.k = 0
        self.recent: deque[float] = deque()
        self.n_d, self.moves = run.system.n_d, 0
        if series is not None:
            run.link.set_bandwidth(float(series.usable_bytes_per_s[0]))
            self._schedule_next()
        if policy == TABLE and lookup is not None and lookup.n_p is not None and run.pool_l is not None:
            run.engine.schedule(RESPLIT_S, self._resplit)

    def _resplit(self) -> None:
        """One instance toward the current row's N_p, if the one it takes is idle."""
        run, lk = self.run, self.lookup
        assert lk is not None and lk.n_p is not None
        line = self.line_bytes_per_s
        target = lk.n_p[lk.row(line if line is not None else math.inf)]
        pool, dec, bs = run.pool_l, run.decode, run.system.bs_max
        if pool.n < target and self.n_d > 1 and dec.idle() >= bs:
            dec.remove(bs)
            self.n_d -= 1
            pool.add_server()
            self.moves += 1
        elif pool.n > max(target, 1) and pool.remove_idle_server():
            dec.add(bs)
            self.n_d += 1
            self.moves += 1
        if not run.done_arriving:
            run.engine.schedule(RESPLIT_S, self._resplit)

    def _schedule_next(self) -> None:
        s = self.series
        assert s is not None
        k, n, span = self.k, len(s.times_s), s.span_s
        period, j = divmod(k + 1, n)
        at = period * span + float(s.times_s[j])
        self.run.engine.schedule_at(at, self._change)

    def _change(self) -> None:
        s = self.series
        assert s is not None
        self.k += 1
        self.run.link.set_bandwidth(float(s.usable_bytes_per_s[self.k % len(s.times_s)]))
        if not self.run.done_arriving:
            self._schedule_next()

    @property
    def line_bytes_per_s(self) -> float | None:
        s = self.series
        return None if s is None else float(s.line_bytes_per_s[self.k % len(s.times_s)])

    def threshold(self, now: float, planned: float) -> float:
        """The threshold for an arrival now: the plan's, or the table's at the bandwidth and rate."""
        recent = self.recent
        recent.append(now)
        while recent and recent[0] < now - self.window_s:
            recent.popleft()
        if self.policy != TABLE:
            return planned
        assert self.lookup is not None
        line = self.line_bytes_per_s
        rate = len(recent) / min(self.window_s, now) if now > 0 else 0.0
        return self.lookup.threshold(line if line is not None else math.inf, rate)


@dataclass(frozen=True, slots=True, kw_only=True)
class Timeline:
    """Per window of ``window_s`` (by arrival time): what the requests that arrived then saw."""

    window_s: float
    starts_s: NDArray[np.float64]
    arrived: NDArray[np.int64]
    ttft_p50_s: NDArray[np.float64]  # nan: nothing arrived (written as null at the edge)
    ttft_p90_s: NDArray[np.float64]
    attainment: NDArray[np.float64] | None  # share of TTFT <= the SLO; None without one
    link_utilization: NDArray[np.float64]  # bytes carried / capacity the series gave (nan: down)
    capacity_bytes_per_s: NDArray[np.float64]  # mean B_out in the window
    threshold_tokens: NDArray[np.float64]  # mean threshold of the window's decisions (inf: none)
    offloaded: NDArray[np.float64]  # share routed over the link


def timeline(arrivals: NDArray[np.float64], ttft: NDArray[np.float64], offload: NDArray[np.bool_],
             thresholds: NDArray[np.float64], window_s: float, horizon_s: float, *, bound_s: float | None,
             window_bytes: NDArray[np.float64], series: BandwidthSeries | None, fixed_bytes_per_s: float) -> Timeline:
    n = max(math.ceil(horizon_s / window_s), 1)
    k = np.minimum((arrivals // window_s).astype(np.int64), n - 1)
    starts = window_s * np.arange(n)
    count = np.bincount(k, minlength=n)
    p50, p90, att = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    thr, off = np.full(n, np.nan), np.full(n, np.nan)
    order = np.argsort(k, kind="stable")
    edges = np.concatenate([[0], np.cumsum(count)])
    for w in range(n):
        idx = order[edges[w]:edges[w + 1]]
        if not len(idx):
            continue
        x = ttft[idx]
        p50[w], p90[w] = np.quantile(x, 0.5), np.quantile(x, 0.9)
        if bound_s is not None:
            att[w] = float(np.mean(x <= bound_s))
        finite = thresholds[idx][np.isfinite(thresholds[idx])]
        thr[w] = float(finite.mean()) if len(finite) else math.inf
        off[w] = float(offload[idx].mean())
    cap = np.full(n, fixed_bytes_per_s)
    if series is not None:  # the mean B_out over each window, from the step function
        grid = np.linspace(0.0, n * window_s, n * 64, endpoint=False) + window_s / 128
        cap = series.usable_bytes_per_s[series.at(grid)].reshape(n, 64).mean(axis=1)
    carried = np.zeros(n)
    carried[:min(n, len(window_bytes))] = window_bytes[:n]
    with np.errstate(divide="ignore", invalid="ignore"):
        util = np.where(cap > 0, carried / (cap * window_s), np.nan)
    return Timeline(window_s=window_s, starts_s=starts, arrived=count, ttft_p50_s=p50, ttft_p90_s=p90,
                    attainment=att if bound_s is not None else None, link_utilization=util,
                    capacity_bytes_per_s=cap, threshold_tokens=thr, offloaded=off)
