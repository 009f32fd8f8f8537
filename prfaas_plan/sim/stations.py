"""The shared link of the discrete-event simulator (processor sharing, the cross-datacenter
link is a :class:`SharedLink`, on ``sim.parts.Link``) and the arrival streams; on its own the link is
the processor-sharing queue the validation tests hold against :mod:`prfaas_plan.core.queueing`
(the FIFO pools are ``sim.entities``). Times are seconds, sizes bytes, rates per second. Job ids are
any hashable (ints in practice); per-job records live in dicts keyed by id, in insertion order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.sim import fast
from prfaas_plan.sim.engine import Engine

__all__ = ["SharedLink", "gamma_arrivals", "poisson_arrivals"]

OnDone = Callable[[Hashable], Any] | None

SERIES_WINDOWS = 100_000  # the longest utilisation series a link gives (windows are merged beyond)


def poisson_arrivals(rng: np.random.Generator, rate: float, n: int, start: float = 0.0) -> NDArray[np.float64]:
    """Absolute arrival times of a Poisson process: ``start`` + cumulative Exp(1/rate) gaps.

    The first arrival comes one gap after ``start`` (not at ``start``). ``rate`` in requests/s.
    """
    if not rate > 0:
        raise ValueError(f"arrival rate must be > 0, got {rate!r}")
    return start + np.cumsum(rng.exponential(1.0 / rate, size=int(n)))


def gamma_arrivals(rng: np.random.Generator, rate: float, cv: float, n: int, start: float = 0.0) -> NDArray[np.float64]:
    """Absolute arrival times of a Gamma renewal process with mean rate ``rate`` and gap CV ``cv``.

    Gaps are Gamma(shape k = 1/cv², scale = 1/(rate k)): mean 1/rate, squared CV cv² (the
    ``scv_arrival`` of :func:`prfaas_plan.core.queueing.ggc_wait`). cv = 1 is Poisson, cv > 1
    bursty, cv = 0 a deterministic clock (gaps exactly 1/rate).
    """
    if not rate > 0:
        raise ValueError(f"arrival rate must be > 0, got {rate!r}")
    if not cv >= 0:
        raise ValueError(f"coefficient of variation must be >= 0, got {cv!r}")
    if cv == 0:
        gaps = np.full(int(n), 1.0 / rate)
    else:
        shape = 1.0 / (cv * cv)
        gaps = rng.gamma(shape, 1.0 / (rate * shape), size=int(n))
    return start + np.cumsum(gaps)


class SharedLink(fast.parts().Link):
    """A link of fixed bandwidth shared equally by its transfers (egalitarian processor sharing).

    With n transfers in flight, each progresses at ``bandwidth_bytes_per_s / n``.
    ``submit(job_id, n_bytes)`` starts a transfer now; ``on_done(job_id)`` is called when its last
    byte has crossed.

    Implementation (``sim.parts.Link``): the standard PS virtual time V(t), dV/dt = bandwidth /
    n(t), the bytes any one transfer has received since V = 0. A transfer submitted at virtual time
    V finishes when V reaches V + n_bytes, so finish tags never change after submission; they sit
    in a heap and only the earliest tag has an engine event, held in the link's
    :class:`~prfaas_plan.sim.engine.Timer` (outside the heap) and replaced when n changes, so a
    reschedule leaves no cancelled entry behind. Each arrival or departure costs O(log n).

    Utilisation: ``busy_time`` (time with n > 0; the link is work-conserving, so it runs at full
    bandwidth then), ``bytes_carried``; with ``window_s`` set, bytes per fixed window for plots
    (:meth:`utilisation_series`). ``set_bandwidth`` changes the rate from now on (a replayed
    bandwidth series); at 0 the link is down: transfers in flight wait, no event is scheduled.
    ``records`` False keeps no per-transfer dicts (the lean simulator's memory stays flat).
    """

    __slots__ = ("_timer", "completed_at", "engine", "on_done", "records", "size_bytes", "started_at")

    def __init__(
        self,
        engine: Engine,
        bandwidth_bytes_per_s: float,
        on_done: OnDone = None,
        *,
        window_s: float | None = None,
        records: bool = True,
    ) -> None:
        if not bandwidth_bytes_per_s > 0:
            raise ValueError(f"bandwidth must be > 0 bytes/s, got {bandwidth_bytes_per_s!r}")
        if window_s is not None and not window_s > 0:
            raise ValueError(f"window_s must be > 0 s, got {window_s!r}")
        super().__init__(float(bandwidth_bytes_per_s), float(window_s or 0.0), engine.now)
        self.engine = engine
        self.on_done = on_done
        self.records = records
        self.started_at: dict[Hashable, float] = {}
        self.completed_at: dict[Hashable, float] = {}
        self.size_bytes: dict[Hashable, float] = {}
        self._timer = engine.timer()  # the next completion: its entry, or None

    @property
    def n_active(self) -> int:
        """Transfers in flight now."""
        return len(self.active)

    @property
    def bytes_carried(self) -> float:
        """Bytes that have crossed the link so far (partial transfers included)."""
        self.advance(self.engine.now)
        return self.carried

    @property
    def busy_s(self) -> float:
        """Time with a transfer in flight so far (at bandwidth 0 too: the transfers wait)."""
        self.advance(self.engine.now)
        return self.busy_time

    def set_bandwidth(self, bandwidth_bytes_per_s: float) -> None:
        """The rate from now on (>= 0; 0: down)."""
        if not bandwidth_bytes_per_s >= 0:
            raise ValueError(f"bandwidth must be >= 0 bytes/s, got {bandwidth_bytes_per_s!r}")
        self.advance(self.engine.now)
        self.bandwidth = float(bandwidth_bytes_per_s)
        self._reschedule()

    def window_bytes(self, limit: int | None = None) -> NDArray[np.float64]:
        """Bytes carried in each whole window of ``window_s`` so far, the first ``limit`` of them (a
        bandwidth change due long after the last request moves the clock, not the windows read)."""
        assert self.window_s > 0
        self.advance(self.engine.now)
        n_whole = int((self.engine.now - self.t0) // self.window_s)
        if limit is not None:
            n_whole = min(n_whole, limit)
        out = np.zeros(n_whole)
        upto = min(n_whole, len(self.windows))
        out[:upto] = self.windows[:upto]
        return out

    def _reschedule(self) -> None:
        delay = self.due()
        if delay >= 0:
            self.engine.set_timer(self._timer, delay, self._complete, self.active[0][0])
        else:
            self._timer.entry = None

    def submit(self, job_id: Hashable, n_bytes: float) -> None:
        """Start a transfer of ``n_bytes`` now (``n_bytes >= 0``; 0 completes at once, as an event)."""
        if not n_bytes >= 0:
            raise ValueError(f"transfer size must be >= 0 bytes, got {n_bytes!r}")
        n_bytes = float(n_bytes)
        now = self.engine.now
        if self.records:
            self.started_at[job_id] = now
            self.size_bytes[job_id] = n_bytes
        self.start(job_id, n_bytes, now)
        self._reschedule()

    def _complete(self, tag: float) -> None:
        now = self.engine.now
        done = self.complete(tag, now)
        if self.records:
            completed = self.completed_at
            for j in done:
                completed[j] = now
        self._reschedule()
        on_done = self.on_done
        if on_done is not None:
            for j in done:
                on_done(j)

    def utilisation(self) -> float:
        """Busy fraction of the time since creation (= bytes carried / (bandwidth x elapsed))."""
        self.advance(self.engine.now)
        elapsed = self.engine.now - self.t0
        return self.busy_time / elapsed if elapsed > 0 else math.nan

    def utilisation_series(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """(window start times, utilisation per window) over whole windows up to now.

        Utilisation of a window = bytes carried in it / (bandwidth x window). Requires
        ``window_s``. The last, partial window is left out. A run that lasts beyond
        ``SERIES_WINDOWS`` windows (a drain far past the arrivals, as behind an RTT of hours)
        has every k consecutive windows merged into one, k the fewest that fit.
        """
        if not self.window_s > 0:
            raise ValueError("SharedLink was created without window_s; no utilisation series")
        self.advance(self.engine.now)
        w = self.window_s
        n_whole = int((self.engine.now - self.t0) // w)
        k = 1 if n_whole <= SERIES_WINDOWS else -(-n_whole // SERIES_WINDOWS)
        n, m = n_whole // k, min(n_whole, len(self.windows))
        carried = np.zeros(n)
        if k == 1:
            carried[:m] = self.windows[:m]
            return self.t0 + w * np.arange(n), carried / (self.bandwidth * w)
        if m:  # k may be beyond an int64 when m is not: then every recorded window is in the first
            merged = np.arange(m) // k if k < m else np.zeros(m, dtype=np.int64)
            carried += np.bincount(merged, weights=self.windows[:m], minlength=n)[:n]
        window = w * k
        return self.t0 + window * np.arange(n), carried / window / self.bandwidth  # not bw x window: it may overflow
