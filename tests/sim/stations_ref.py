"""A textbook G/G/c FIFO station (per-job records) on the simulator's pool state and the public
engine API, and an arrival feeder, for the engine's own tests and ``benchmarks/bench_engine.py``
(the simulator's pools are ``sim.entities.Pool``, on the same ``sim.parts.Fifo``)."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.sim import fast
from prfaas_plan.sim.engine import Engine

OnDone = Callable[[Hashable], Any] | None


def feed_arrivals(
    engine: Engine, times: Sequence[float] | NDArray[np.float64], on_arrival: Callable[[int], Any]
) -> None:
    """Call ``on_arrival(i)`` at ``times[i]`` for each i, in order (times must be non-decreasing).

    Arrivals are chained, one pending at a time, so the heap stays small however long the trace.
    """
    times_list: list[float] = np.asarray(times, dtype=np.float64).tolist()
    n = len(times_list)
    if n == 0:
        return

    def arrive(i: int) -> None:
        if i + 1 < n:
            engine.schedule_at(times_list[i + 1], arrive, i + 1)
        on_arrival(i)

    engine.schedule_at(times_list[0], arrive, 0)


class FifoServers(fast.parts().Fifo):
    """``n_servers`` identical servers fed by one FIFO queue (a G/G/c station, FCFS), on the simulator's
    own pool state (``sim.parts.Fifo``), so the validation tests hold that against the analytic model.

    ``submit(job_id, service_s)`` starts the job at once on a free server or queues it; when its
    service ends, ``on_done(job_id)`` is called (after the next queued job has started).

    Records per job: ``arrived_at``, ``started_at``, ``completed_at`` (dicts keyed by job id).
    Time averages: number waiting (L_q) and busy servers, integrated over time since creation.
    """

    def __init__(self, engine: Engine, n_servers: int, on_done: OnDone = None) -> None:
        if int(n_servers) != n_servers or n_servers < 1:
            raise ValueError(f"n_servers must be a whole number >= 1, got {n_servers!r}")
        super().__init__(int(n_servers), engine.now)
        self.engine = engine
        self.on_done = on_done
        self.arrived_at: dict[Hashable, float] = {}
        self.started_at: dict[Hashable, float] = {}
        self.completed_at: dict[Hashable, float] = {}
        self._t0 = engine.now

    @property
    def n_servers(self) -> int:
        return self.n

    @property
    def queue_length(self) -> int:
        """Jobs waiting (not in service) now."""
        return len(self.queue)

    def submit(self, job_id: Hashable, service_s: float) -> None:
        """A job arrives now and needs ``service_s`` seconds of one server."""
        if not service_s >= 0:
            raise ValueError(f"service time must be >= 0 s, got {service_s!r}")
        service_s = float(service_s)  # numpy scalars in the heap would slow every comparison
        now = self.engine.now
        self.arrived_at[job_id] = now
        if self.arrive((job_id, service_s), now):
            self._start(job_id, service_s)

    def _start(self, job_id: Hashable, service_s: float) -> None:
        self.started_at[job_id] = self.engine.now
        self.engine.schedule(service_s, self._finish, job_id)

    def _finish(self, job_id: Hashable) -> None:
        now = self.engine.now
        nxt = self.depart(now)
        self.completed_at[job_id] = now
        if nxt is not None:
            self._start(*nxt)
        if self.on_done is not None:
            self.on_done(job_id)

    def wait(self, job_id: Hashable) -> float:
        """Wait in queue of one started job, seconds."""
        return self.started_at[job_id] - self.arrived_at[job_id]

    def waits(self) -> NDArray[np.float64]:
        """Wait in queue (started_at - arrived_at) of every started job, in start order (= FIFO)."""
        arrived = self.arrived_at
        return np.fromiter((t - arrived[j] for j, t in self.started_at.items()), float, len(self.started_at))

    def _elapsed(self) -> float:
        self.advance(self.engine.now)
        return self.engine.now - self._t0

    def mean_queue_length(self) -> float:
        """Time-average number of waiting jobs L_q since creation (NaN before time advances)."""
        elapsed = self._elapsed()
        return self.area_queue / elapsed if elapsed > 0 else math.nan

    def utilisation(self) -> float:
        """Time-average fraction of busy servers since creation (NaN before time advances)."""
        elapsed = self._elapsed()
        return self.area_busy / (elapsed * self.n) if elapsed > 0 else math.nan
