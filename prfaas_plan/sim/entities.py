"""The reference path's stations on the engine: the prefill pool and the decode slots, and the TTFT
histogram. Their state and time integrals are ``sim.parts``' (``Fifo``, ``Slots``; the request
record ``Req``), shared with the fast path; these schedule what those say starts. They keep no
per-job state once a job has left them, so a run's memory is flat in the number of requests:
only requests in flight are alive. Times are seconds.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.sim import fast
from prfaas_plan.sim.engine import Engine, EventHandle
from prfaas_plan.sim.parts import HIST_BINS, HIST_HI_S, HIST_LO_S, LOG_LO, SCALE

__all__ = ["HIST_BINS", "HIST_HI_S", "HIST_LO_S", "LOG_LO", "SCALE", "DecodeSlots", "Hist", "Pool", "Req"]

Req = fast.parts().Req  # one request in flight (the compiled record when there is one)


class Pool(fast.parts().Fifo):
    """``n`` prefill instances behind one FIFO queue (G/G/c, FCFS) on the engine; servers can be added
    or removed.

    ``on_start(r)`` (optional) runs when a request starts, ``on_done(r)`` when it ends (after the
    next queued request has started). The time integrals of the queue length and busy servers and
    the completion count (``Fifo``'s) are for the caller's measurement window.
    """

    __slots__ = ("engine", "name", "on_done", "on_start")

    def __init__(self, engine: Engine, name: str, n: int, on_done: Callable[[Any], Any],
                 on_start: Callable[[Any], Any] | None = None) -> None:
        super().__init__(n, engine.now)
        self.engine = engine
        self.name = name
        self.on_done = on_done
        self.on_start = on_start

    def submit(self, r: Any) -> None:
        if self.arrive(r, self.engine.now):
            self._start(r)

    def _start(self, r: Any) -> None:
        r.prefill_started_at = self.engine.now
        self.engine.schedule(r.service, self._finish, r)
        if self.on_start is not None:
            self.on_start(r)

    def _finish(self, r: Any) -> None:
        nxt = self.depart(self.engine.now)
        r.prefill_completed_at = self.engine.now
        if nxt is not None:
            self._start(nxt)
        self.on_done(r)

    def add_server(self) -> None:
        self.advance(self.engine.now)
        self.n += 1
        if self.queue:
            self.busy += 1
            self._start(self.queue.popleft())

    def remove_idle_server(self) -> bool:
        """Take one idle instance out of the pool (never the last one); False if none is idle."""
        if self.n <= 1 or self.busy >= self.n:
            return False
        self.advance(self.engine.now)
        self.n -= 1
        return True


class DecodeSlots(fast.parts().Slots):
    """N_d x BS_max continuous-batching slots on the engine, FIFO admission, each held for the request's
    decode time.

    A slot release needs no event (``Slots.free_at``): a request whose KV is ready is admitted at
    once if a slot is free and nobody waits, else it queues and one pending event admits the queue
    head when the earliest slot frees. ``on_admit(r, now)`` is called at admission (the first
    token). Slots can be added (now free) or removed (the soonest free ones; the caller removes
    only idle slots).
    """

    __slots__ = ("_event", "engine", "on_admit")

    def __init__(self, engine: Engine, slots: int, on_admit: Callable[[Any, float], Any]) -> None:
        super().__init__(slots, engine.now)
        self.engine = engine
        self.on_admit = on_admit
        self._event: EventHandle | None = None

    @property
    def slots(self) -> int:
        return len(self.free_at)

    def busy_area(self) -> float:
        """Slot-seconds of decoding done so far: admitted work minus what the slots still hold."""
        now = self.engine.now
        return self.admitted_hold - sum(t - now for t in self.free_at if t > now)

    def idle(self) -> int:
        """Slots free now."""
        now = self.engine.now
        return sum(1 for t in self.free_at if t <= now)

    def ready(self, r: Any) -> None:
        """The request's KV is on a decode node now."""
        now = self.engine.now
        if self.open(now):
            self.take(r.hold, now)
            self.on_admit(r, now)
            return
        self.wait(r, now)
        if self._event is None:
            self._event = self.engine.schedule_at(self.next_free(now), self._admit)

    def _admit(self) -> None:
        self._event = None
        now = self.engine.now
        self.advance(now)
        while self.head(now):
            r = self.waiting.popleft()
            self.take(r.hold, now)
            self.on_admit(r, now)
        if self.waiting:
            self._event = self.engine.schedule_at(self.next_free(now), self._admit)

    def _wake(self) -> None:
        if self._event is not None:
            Engine.cancel(self._event)
            self._event = None
        if self.waiting:
            self._event = self.engine.schedule_at(self.next_free(self.engine.now), self._admit)

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


# TTFT histogram: log-spaced bins, 1e-4 s .. 1e5 s (sim.parts); 4000 bins are 0.52% wide, and a quantile
# is interpolated inside its bin, so percentiles are within ~0.5% whatever the run length.


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
