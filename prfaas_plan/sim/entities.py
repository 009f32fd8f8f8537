"""Lean entities of the two-cluster simulator: requests, prefill pools, decode slots, histograms.

Unlike :mod:`prfaas_plan.sim.stations` (textbook stations that keep a record of every job for the
validation tests), these keep no per-job state once a job has left them, so a run's memory is
flat in the number of requests: only requests in flight are alive. Times are seconds.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.sim.engine import Engine, EventHandle

__all__ = ["DecodeSlots", "Hist", "Pool", "Req"]

_heapreplace = heapq.heapreplace
_heappush = heapq.heappush


class Req:
    """One request in flight. ``path`` is "prfaas" or "local"; times are absolute seconds.

    ``part`` tracks the KV shipment of an offloaded request: 0 nothing sent yet, 1 the first
    n_layers - 1 layers in flight (pipelined), 2 those across and waiting for the prefill to end,
    3 the last layer (or everything, without pipelining) in flight, 4 the first layers still in
    flight after the prefill ended, -1 a prefix-cache prefetch in flight.
    """

    __slots__ = ("arrived_at", "decode_started_at", "hold", "i", "kv", "kv_transfer_completed_at", "l",
                 "measured", "offload", "part", "prefill_completed_at", "prefill_started_at",
                 "service")

    def __init__(self, i: int, arrived_at: float, l: int, offload: bool, service: float, kv: float,
                 hold: float, measured: bool) -> None:
        self.i = i
        self.arrived_at = arrived_at
        self.l = l
        self.offload = offload
        self.service = service
        self.kv = kv
        self.hold = hold
        self.measured = measured
        self.part = 0
        self.prefill_started_at = math.nan
        self.prefill_completed_at = math.nan
        self.kv_transfer_completed_at = math.nan
        self.decode_started_at = math.nan


class Pool:
    """``n`` prefill instances behind one FIFO queue (G/G/c, FCFS); servers can be added or removed.

    ``on_start(r)`` (optional) runs when a request starts, ``on_done(r)`` when it ends (after the
    next queued request has started). Keeps time integrals of the queue length and busy servers,
    and a completion counter, for the caller's measurement window.
    """

    __slots__ = ("area_busy", "area_queue", "area_servers", "busy", "completed", "engine", "last_t", "n", "name",
                 "on_done", "on_start", "queue")

    def __init__(self, engine: Engine, name: str, n: int, on_done: Callable[[Req], Any],
                 on_start: Callable[[Req], Any] | None = None) -> None:
        self.engine = engine
        self.name = name
        self.n = int(n)
        self.busy = 0
        self.queue: deque[Req] = deque()
        self.on_done = on_done
        self.on_start = on_start
        self.completed = 0
        self.area_queue = 0.0
        self.area_busy = 0.0
        self.area_servers = 0.0
        self.last_t = engine.now

    def advance(self, now: float) -> None:
        dt = now - self.last_t
        if dt > 0:
            self.area_queue += dt * len(self.queue)
            self.area_busy += dt * self.busy
            self.area_servers += dt * self.n
            self.last_t = now

    def submit(self, r: Req) -> None:
        now = self.engine.now
        dt = now - self.last_t
        if dt > 0:  # advance(now), inline
            self.area_queue += dt * len(self.queue)
            self.area_busy += dt * self.busy
            self.area_servers += dt * self.n
            self.last_t = now
        if self.busy < self.n:
            self.busy += 1
            self._start(r, now)
        else:
            self.queue.append(r)

    def _start(self, r: Req, now: float) -> None:
        r.prefill_started_at = now
        engine = self.engine  # Engine.schedule(r.service, self._finish, r), inline (the same entry)
        _heappush(engine._heap, [now + r.service, 0, next(engine._seq), self._finish, (r,)])
        if self.on_start is not None:
            self.on_start(r)

    def _finish(self, r: Req) -> None:
        now = self.engine.now
        dt = now - self.last_t
        if dt > 0:  # advance(now), inline
            self.area_queue += dt * len(self.queue)
            self.area_busy += dt * self.busy
            self.area_servers += dt * self.n
            self.last_t = now
        self.completed += 1
        r.prefill_completed_at = now
        if self.queue and self.busy <= self.n:
            self._start(self.queue.popleft(), now)
        else:
            self.busy -= 1
        self.on_done(r)

    def add_server(self) -> None:
        self.advance(self.engine.now)
        self.n += 1
        if self.queue:
            self.busy += 1
            self._start(self.queue.popleft(), self.engine.now)

    def remove_idle_server(self) -> bool:
        """Take one idle instance out of the pool (never the last one); False if none is idle."""
        if self.n <= 1 or self.busy >= self.n:
            return False
        self.advance(self.engine.now)
        self.n -= 1
        return True


class DecodeSlots:
    """N_d x BS_max continuous-batching slots, FIFO admission, each held for the request's decode time.

    The free time of every slot sits in a min-heap, so a slot release needs no event: a request
    whose KV is ready is admitted at once if a slot is free and nobody waits, else it queues and
    one pending event admits the queue head when the earliest slot frees. ``on_admit(r, now)`` is
    called at admission (the first token). Slots can be added (now free) or removed (the soonest
    free ones; the caller removes only idle slots).
    """

    __slots__ = ("_event", "admitted", "admitted_hold", "area_slots", "area_waiting", "engine", "free_at",
                 "last_t", "on_admit", "waiting")

    def __init__(self, engine: Engine, slots: int, on_admit: Callable[[Req, float], Any]) -> None:
        self.engine = engine
        self.free_at: list[float] = [engine.now] * int(slots)
        self.waiting: deque[Req] = deque()
        self.on_admit = on_admit
        self._event: EventHandle | None = None
        self.admitted = 0
        self.admitted_hold = 0.0
        self.area_waiting = 0.0
        self.area_slots = 0.0
        self.last_t = engine.now

    @property
    def slots(self) -> int:
        return len(self.free_at)

    def advance(self, now: float) -> None:
        dt = now - self.last_t
        if dt > 0:
            self.area_waiting += dt * len(self.waiting)
            self.area_slots += dt * len(self.free_at)
            self.last_t = now

    def busy_area(self) -> float:
        """Slot-seconds of decoding done so far: admitted work minus what the slots still hold."""
        now = self.engine.now
        return self.admitted_hold - sum(t - now for t in self.free_at if t > now)

    def idle(self) -> int:
        """Slots free now."""
        now = self.engine.now
        return sum(1 for t in self.free_at if t <= now)

    def ready(self, r: Req) -> None:
        """The request's KV is on a decode node now."""
        now = self.engine.now
        free_at = self.free_at
        if not self.waiting and free_at[0] <= now:
            _heapreplace(free_at, now + r.hold)
            self.admitted += 1
            self.admitted_hold += r.hold
            self.on_admit(r, now)
            return
        self.advance(now)
        self.waiting.append(r)
        if self._event is None:
            self._event = self.engine.schedule_at(max(now, free_at[0]), self._admit)

    def _admit(self) -> None:
        self._event = None
        now = self.engine.now
        self.advance(now)
        free_at, waiting = self.free_at, self.waiting
        while waiting and free_at[0] <= now:
            r = waiting.popleft()
            _heapreplace(free_at, now + r.hold)
            self.admitted += 1
            self.admitted_hold += r.hold
            self.on_admit(r, now)
        if waiting:
            self._event = self.engine.schedule_at(max(now, free_at[0]), self._admit)

    def _wake(self) -> None:
        if self._event is not None:
            Engine.cancel(self._event)
            self._event = None
        if self.waiting:
            self._event = self.engine.schedule_at(max(self.engine.now, self.free_at[0]), self._admit)

    def add(self, n: int) -> None:
        self.advance(self.engine.now)
        for _ in range(n):
            heapq.heappush(self.free_at, self.engine.now)
        self._wake()

    def remove(self, n: int) -> float:
        """Remove the ``n`` slots that free soonest; returns when the last of them is free."""
        self.advance(self.engine.now)
        last = self.engine.now
        for _ in range(n):
            last = max(last, heapq.heappop(self.free_at))
        self._wake()
        return last


# TTFT histogram: log-spaced bins, 1e-4 s .. 1e5 s; 4000 bins are 0.52% wide, and a quantile is
# interpolated inside its bin, so percentiles are within ~0.5% whatever the run length.
HIST_LO_S = 1e-4
HIST_HI_S = 1e5
HIST_BINS = 4000
LOG_LO = math.log(HIST_LO_S)
SCALE = HIST_BINS / (math.log(HIST_HI_S) - LOG_LO)


class Hist:
    """Counts of a positive quantity in fixed log-spaced bins, plus its exact sum, min and max."""

    __slots__ = ("counts", "hi", "lo", "n", "total")

    def __init__(self) -> None:
        self.counts = [0] * HIST_BINS
        self.n = 0
        self.total = 0.0
        self.lo = math.inf
        self.hi = -math.inf

    @staticmethod
    def bin_of(x: float) -> int:
        if x <= HIST_LO_S:
            return 0
        k = int((math.log(x) - LOG_LO) * SCALE)
        return k if k < HIST_BINS else HIST_BINS - 1

    def add(self, x: float, k: int) -> None:
        """Add ``x``, which falls in bin ``k`` (``bin_of(x)``, computed once for several histograms)."""
        self.counts[k] += 1
        self.n += 1
        self.total += x
        if x < self.lo:
            self.lo = x
        if x > self.hi:
            self.hi = x

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    def quantile(self, q: float) -> float | None:
        """The q-quantile as numpy's default (linear between order statistics at rank q (n - 1)).

        Each order statistic is placed inside its bin by its rank among the bin's counts (log
        scale), so the answer is within a bin width (~0.5%) of the exact sample quantile; it is
        clamped to the exact min and max.
        """
        if not self.n:
            return None
        counts = np.asarray(self.counts, dtype=np.float64)
        cum = np.cumsum(counts)
        h = q * (self.n - 1)
        lo_rank, hi_rank = math.floor(h), math.ceil(h)
        ks = np.searchsorted(cum, [lo_rank, hi_rank], side="right")
        values = []
        for rank, k in zip((lo_rank, hi_rank), ks.tolist(), strict=True):
            below = cum[k - 1] if k > 0 else 0.0
            frac = (rank - below + 0.5) / counts[k]
            values.append(math.exp(LOG_LO + (k + frac) / SCALE))
        value = values[0] + (h - lo_rank) * (values[1] - values[0])
        return min(max(value, self.lo), self.hi)

    def cdf(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(upper bin edges, cumulative fraction) over the occupied bins, for plotting."""
        counts = np.asarray(self.counts, dtype=np.float64)
        if not self.n:
            return np.zeros(0), np.zeros(0)
        nz = np.flatnonzero(counts)
        first, last = int(nz[0]), int(nz[-1])
        edges = np.exp(LOG_LO + np.arange(first + 1, last + 2) / SCALE)
        return edges, np.cumsum(counts[first:last + 1]) / self.n
