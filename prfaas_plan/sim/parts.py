"""The simulator's parts, shared by both paths: one request record, and the state and time
integrals of the three stations (the FIFO prefill pool, the decode slots, the processor-sharing link).

The stations schedule nothing: they say what starts (``Fifo.arrive``, ``Fifo.depart``) or is
done (``Link.complete``), and their driver schedules it. The reference path's drivers are
``entities.Pool``, ``entities.DecodeSlots`` and ``stations.SharedLink`` (subclasses on the engine,
which serve the control loops and replayed series too); the fast path's is ``sim.kernel``. setup.py
compiles this file and kernel.py as one Cython module (their annotations are the C types;
``sim.shadow`` stands in for Cython when they run as Python), which ``sim.fast`` picks for both.
Times are seconds, sizes bytes.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from typing import Any

try:
    import cython
except ImportError:  # Cython is a build requirement only
    from prfaas_plan.sim import shadow as cython

__all__ = ["BULK", "BULK_AFTER_PREFILL", "BULK_SENT", "HIST_BINS", "HIST_HI_S", "HIST_LO_S", "LAST", "LOG_LO",
           "PREFETCH", "SCALE", "Fifo", "Link", "Req", "Slots"]

heappush, heappop, heapreplace = heapq.heappush, heapq.heappop, heapq.heapreplace
# KV shipment states of an offloaded request (Req.part): 0 nothing sent yet, BULK the first n_layers - 1
# layers in flight (pipelined), BULK_SENT those across and waiting for the prefill to end, LAST the last
# layer (or everything, without pipelining) in flight, BULK_AFTER_PREFILL the first layers still in flight
# after the prefill ended, PREFETCH a prefix-cache prefetch in flight
cython.declare(BULK=cython.int, BULK_SENT=cython.int, LAST=cython.int, BULK_AFTER_PREFILL=cython.int,
               PREFETCH=cython.int)
BULK, BULK_SENT, LAST, BULK_AFTER_PREFILL, PREFETCH = 1, 2, 3, 4, -1
# TTFT histogram (entities.Hist): log-spaced bins, 1e-4 s .. 1e5 s
HIST_LO_S = 1e-4
HIST_HI_S = 1e5
HIST_BINS = 4000
LOG_LO = math.log(HIST_LO_S)
SCALE = HIST_BINS / (math.log(HIST_HI_S) - LOG_LO)


@cython.freelist(64)
@cython.no_gc  # it refers to no container: never in a cycle
@cython.cclass
class Req:
    """One request in flight; times are absolute seconds (NaN: not yet), ``part`` its KV shipment."""

    i = cython.declare(cython.Py_ssize_t, visibility="public")
    arrived_at = cython.declare(cython.double, visibility="public")
    l = cython.declare(object, visibility="public")  # uncached tokens, as the source gave them
    offload = cython.declare(cython.bint, visibility="public")
    service = cython.declare(cython.double, visibility="public")
    kv = cython.declare(cython.double, visibility="public")
    hold = cython.declare(cython.double, visibility="public")
    measured = cython.declare(cython.bint, visibility="public")
    part = cython.declare(cython.int, visibility="public")
    prefill_started_at = cython.declare(cython.double, visibility="public")
    prefill_completed_at = cython.declare(cython.double, visibility="public")
    kv_transfer_completed_at = cython.declare(cython.double, visibility="public")
    decode_started_at = cython.declare(cython.double, visibility="public")

    def __init__(self, i: int, arrived_at: float, l: Any, offload: bool, service: float, kv: float, hold: float,
                 measured: bool) -> None:
        self.i, self.arrived_at, self.l, self.offload = i, arrived_at, l, offload
        self.service, self.kv, self.hold, self.measured = service, kv, hold, measured
        self.part = 0
        self.prefill_started_at = self.prefill_completed_at = math.nan
        self.kv_transfer_completed_at = self.decode_started_at = math.nan


@cython.cclass
class Fifo:
    """``n`` servers behind one FIFO queue (G/G/c, FCFS), with time integrals of the queue, the busy
    servers and the servers, and a completion count. ``arrive`` and ``depart`` say what starts."""

    n = cython.declare(cython.Py_ssize_t, visibility="public")
    busy = cython.declare(cython.Py_ssize_t, visibility="public")
    completed = cython.declare(cython.Py_ssize_t, visibility="public")
    area_queue = cython.declare(cython.double, visibility="public")
    area_busy = cython.declare(cython.double, visibility="public")
    area_servers = cython.declare(cython.double, visibility="public")
    last_t = cython.declare(cython.double, visibility="public")
    queue = cython.declare(object, visibility="public")

    def __init__(self, n: int, now: float) -> None:
        self.n, self.busy, self.completed = int(n), 0, 0
        self.area_queue = self.area_busy = self.area_servers = 0.0
        self.last_t = now
        self.queue = deque()

    @cython.ccall
    def advance(self, now: cython.double) -> None:
        dt: cython.double = now - self.last_t
        if dt > 0:
            self.area_queue += dt * len(self.queue)
            self.area_busy += dt * self.busy
            self.area_servers += dt * self.n
            self.last_t = now

    @cython.ccall
    def arrive(self, r: object, now: cython.double) -> cython.bint:
        """``r`` comes now: True if it takes a server at once (the caller starts it), else it queues."""
        dt: cython.double = now - self.last_t
        if dt > 0:  # advance(now), inline
            self.area_queue += dt * len(self.queue)
            self.area_busy += dt * self.busy
            self.area_servers += dt * self.n
            self.last_t = now
        if self.busy < self.n:
            self.busy += 1
            return True
        self.queue.append(r)
        return False

    @cython.ccall
    def depart(self, now: cython.double) -> object:
        """A service ends now: the queued request that takes its server (the caller starts it), or
        None (the server is idle, or gone: a removed server finishes its job first)."""
        dt: cython.double = now - self.last_t
        if dt > 0:  # advance(now), inline
            self.area_queue += dt * len(self.queue)
            self.area_busy += dt * self.busy
            self.area_servers += dt * self.n
            self.last_t = now
        self.completed += 1
        if self.queue and self.busy <= self.n:
            return self.queue.popleft()
        self.busy -= 1
        return None


@cython.cclass
class Slots:
    """Continuous-batching decode slots, FIFO admission, each held for its request's decode time: the
    free time of every slot in a min-heap (``free_at``), the requests waiting, and time integrals."""

    free_at = cython.declare(list, visibility="public")
    waiting = cython.declare(object, visibility="public")
    admitted = cython.declare(cython.Py_ssize_t, visibility="public")
    admitted_hold = cython.declare(cython.double, visibility="public")
    area_waiting = cython.declare(cython.double, visibility="public")
    area_slots = cython.declare(cython.double, visibility="public")
    last_t = cython.declare(cython.double, visibility="public")

    def __init__(self, slots: int, now: float) -> None:
        self.free_at = [now] * int(slots)
        self.waiting = deque()
        self.admitted = 0
        self.admitted_hold = self.area_waiting = self.area_slots = 0.0
        self.last_t = now

    @cython.ccall
    def advance(self, now: cython.double) -> None:
        dt: cython.double = now - self.last_t
        if dt > 0:
            self.area_waiting += dt * len(self.waiting)
            self.area_slots += dt * len(self.free_at)
            self.last_t = now

    @cython.ccall
    def open(self, now: cython.double) -> cython.bint:
        """A request ready now is admitted at once: nobody waits and a slot is free."""
        return not self.waiting and self.free_at[0] <= now

    @cython.ccall
    def head(self, now: cython.double) -> cython.bint:
        """The first waiting request can be admitted now."""
        return self.waiting and self.free_at[0] <= now

    @cython.ccall
    def take(self, hold: cython.double, now: cython.double) -> None:
        """Admit a request now into the slot that frees first, for ``hold`` seconds."""
        heapreplace(self.free_at, now + hold)
        self.admitted += 1
        self.admitted_hold += hold

    @cython.ccall
    def wait(self, r: object, now: cython.double) -> None:
        dt: cython.double = now - self.last_t
        if dt > 0:  # advance(now), inline
            self.area_waiting += dt * len(self.waiting)
            self.area_slots += dt * len(self.free_at)
            self.last_t = now
        self.waiting.append(r)

    @cython.ccall
    def next_free(self, now: cython.double) -> cython.double:
        first: cython.double = self.free_at[0]
        return now if now >= first else first


@cython.cclass
class Link:
    """Egalitarian processor sharing at ``bandwidth`` bytes/s: the virtual time V (dV/dt = bandwidth /
    n), each transfer's finish tag V + bytes in a heap ``active`` of (tag, seq, job), the busy time, the
    bytes carried (and per window of ``window_s``, if > 0). ``SharedLink`` schedules its completions."""

    bandwidth = cython.declare(cython.double, visibility="public")
    window_s = cython.declare(cython.double, visibility="public")  # 0: no windows
    t0 = cython.declare(cython.double, visibility="public")
    virtual = cython.declare(cython.double, visibility="public")
    busy_time = cython.declare(cython.double, visibility="public")
    carried = cython.declare(cython.double, visibility="public")
    last_t = cython.declare(cython.double, visibility="public")
    seq = cython.declare(cython.Py_ssize_t, visibility="public")
    active = cython.declare(list, visibility="public")
    windows = cython.declare(list, visibility="public")
    k_at = cython.declare(cython.double)  # the window k_last holds time k_at (its expression, computed once)
    k_last = cython.declare(cython.Py_ssize_t)

    def __init__(self, bandwidth: float, window_s: float, now: float) -> None:
        self.bandwidth, self.window_s, self.t0, self.last_t = bandwidth, window_s, now, now
        self.virtual = self.busy_time = self.carried = 0.0
        self.seq, self.active, self.windows = 0, [], []
        self.k_at, self.k_last = math.nan, 0

    @cython.ccall
    def advance(self, now: cython.double) -> None:
        """Move the clock to ``now``: V, the busy time and the bytes, whole and per window."""
        last: cython.double = self.last_t
        dt: cython.double = now - last
        if dt <= 0:
            return
        self.last_t = now
        n: cython.Py_ssize_t = len(self.active)
        if not n:
            return
        bw: cython.double = self.bandwidth
        w: cython.double = self.window_s
        self.virtual += dt * bw / n
        self.busy_time += dt
        self.carried += dt * bw
        if w > 0:
            t0: cython.double = self.t0
            k: cython.Py_ssize_t = self.k_last if self.k_at == last else int((last - t0) // w)
            k_now: cython.Py_ssize_t = int((now - t0) // w)
            self.k_last, self.k_at = k_now, now
            windows: list = self.windows
            if k == k_now and k < len(windows):  # within one window: add_windows' one case
                lo: cython.double = t0 + k * w
                if last > lo:
                    lo = last
                hi: cython.double = t0 + (k + 1) * w
                if now < hi:
                    hi = now
                if hi > lo:
                    windows[k] += (hi - lo) * bw
            else:
                self.add_windows(last, now)

    @cython.ccall
    def add_windows(self, t_from: cython.double, t_to: cython.double) -> None:
        w: cython.double = self.window_s
        first: cython.Py_ssize_t = int((t_from - self.t0) // w)
        last: cython.Py_ssize_t = int((t_to - self.t0) // w)
        if len(self.windows) <= last:
            self.windows.extend([0.0] * (last + 1 - len(self.windows)))
        k: cython.Py_ssize_t
        lo: cython.double
        hi: cython.double
        for k in range(first, last + 1):
            lo = self.t0 + k * w  # max(t_from, ...) and min(t_to, ...) as Python's (the first on a tie)
            lo = lo if lo > t_from else t_from
            hi = self.t0 + (k + 1) * w
            hi = hi if hi < t_to else t_to
            if hi > lo:
                self.windows[k] += (hi - lo) * self.bandwidth

    @cython.ccall
    def start(self, job: object, n_bytes: cython.double, now: cython.double) -> None:
        """A transfer of ``n_bytes`` starts now."""
        if now > self.last_t:
            self.advance(now)
        heappush(self.active, (self.virtual + n_bytes, self.seq, job))
        self.seq += 1

    @cython.ccall
    def complete(self, tag: cython.double, now: cython.double) -> list:
        """The transfers done at the completion computed for ``tag``: V snaps to it (rounding never strands
        a transfer), and every transfer with that tag ends (equal transfers started together)."""
        if now > self.last_t:
            self.advance(now)
        if tag > self.virtual:
            self.virtual = tag
        done = []
        while self.active and self.active[0][0] <= self.virtual:
            done.append(heappop(self.active)[2])
        return done

    @cython.ccall
    def due(self) -> cython.double:
        """Seconds from now to the next completion at today's rate; -1 if none is coming."""
        if self.active and self.bandwidth > 0:
            delay: cython.double = (self.active[0][0] - self.virtual) * len(self.active) / self.bandwidth
            return delay if delay > 0.0 else 0.0
        return -1.0

