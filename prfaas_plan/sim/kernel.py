"""The simulator's fast path: a plain run of one PD site (no control loop, no replayed series) as
one event loop on its own heap, over the site's stations and the request record (``sim.parts``);
``sim.fast`` says when it runs and whether compiled (setup.py compiles parts.py and this file as
one Cython module). The reference (``sim.topology``, ``sim.site``) schedules bound methods on
``sim.engine.Engine``; here a request's life is a fixed script played with events as ``(time,
seq, kind, request)`` tuples, the reference step for step: the same events at the same (time, seq)
keys, the same floating-point operations in the same order, the same snapshots, so a seed gives
the same result bit for bit (tests/sim/test_kernel.py, test_identity.py).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

try:
    import cython
except ImportError:  # Cython is a build requirement only
    from prfaas_plan.sim import shadow as cython

from prfaas_plan.sim.parts import (
    BULK,
    BULK_AFTER_PREFILL,
    BULK_SENT,
    HIST_BINS,
    HIST_LO_S,
    LAST,
    LOG_LO,
    PREFETCH,
    SCALE,
    Fifo,
    Link,
    Req,
    Slots,
)  # setup.py joins parts.py and this file into one module, without this import

__all__ = ["Kernel", "run_plain"]

heappush, heappop = heapq.heappush, heapq.heappop
# event kinds: on the heap, and the loop's own (the next arrival and the link's completion, held outside it)
cython.declare(FIN_P=cython.int, FIN_L=cython.int, BULK_START=cython.int, READY=cython.int, ADMIT=cython.int,
               ARRIVE=cython.int, LINK=cython.int)
FIN_P, FIN_L, BULK_START, READY, ADMIT, ARRIVE, LINK = range(7)


@cython.final
@cython.cclass
class Kernel:
    """One plain run on its own heap, each step of a request's life a method. The link's reschedules
    are folded: where ``SharedLink`` reschedules, this draws the seq it would draw (``tseq``); the
    timer is set once, at the end of the event, from the state the last of them saw (nothing touches
    the link after it within an event); a seq drawn and never used leaves the others' order as it
    was. The counters and TTFT tallies go to the site and the run at each snapshot and at the end."""

    # ev: the request of the event being played
    cython.declare(run=object, site=object, engine=object, src=object, heap=list, now=cython.double,
                   seq=cython.Py_ssize_t, pool_p=Fifo, pool_l=Fifo, link=Link, dec=Slots,
                   n_layers=cython.Py_ssize_t, landing=cython.double, thr=object, ev=object, records=object)
    # the seq of the link's last reschedule in this event (-1: none); its completion due at
    # (timer_t, timer_seq) for the tag timer_tag; an admission event pending; the next arrival
    cython.declare(tseq=cython.Py_ssize_t, timer_on=cython.bint, timer_t=cython.double, timer_seq=cython.Py_ssize_t,
                   timer_tag=cython.double, admit_on=cython.bint, arrive_on=cython.bint, arrive_t=cython.double,
                   arrive_seq=cython.Py_ssize_t)
    # the run's counters, and its TTFT tallies (``tot``: the whole run's sum, in admission order)
    cython.declare(arrived=cython.Py_ssize_t, link_done=cython.Py_ssize_t, n_measured=cython.Py_ssize_t,
                   routed_p=cython.Py_ssize_t, routed_l=cython.Py_ssize_t, done_arriving=cython.bint,
                   kv_in=cython.double, counts_p=list, counts_l=list, tot=cython.double, tot_p=cython.double,
                   tot_l=cython.double, lo_p=cython.double, hi_p=cython.double, lo_l=cython.double, hi_l=cython.double)
    # a parametric source: its current batch, read in place (ParamSource.request)
    cython.declare(par=cython.bint, times=list, ls=list, svp=list, svl=list, kvs=list, base=cython.Py_ssize_t,
                   warm_i=object, warm_t=cython.double, hold_c=cython.double)

    def __init__(self, run: Any) -> None:
        site = run.sites[0]
        self.run, self.site, self.engine, self.src, self.heap = run, site, run.engine, site.src, []
        self.seq, self.now = run.engine.take_over(), run.engine.now
        self.pool_p, self.pool_l, self.link, self.dec = site.pool_p, site.pool_l, site.link, site.decode
        self.n_layers, self.landing, self.thr = site.n_layers, site.system.landing_s, site.thr
        self.tseq, self.timer_on, self.admit_on, self.arrive_on = -1, False, False, False
        self.arrived, self.link_done, self.n_measured = site.arrived, site.link_done, site.n_measured
        self.routed_p, self.routed_l = site.routed["prfaas"], site.routed["local"]
        self.done_arriving, self.kv_in = run.done_arriving, site.kv_in
        hist_p, hist_l = site.hist_path["prfaas"], site.hist_path["local"]
        self.counts_p, self.counts_l = hist_p.counts, hist_l.counts
        self.tot, self.tot_p, self.tot_l = site.hist.total, hist_p.total, hist_l.total
        self.lo_p, self.hi_p, self.lo_l, self.hi_l = hist_p.lo, hist_p.hi, hist_l.lo, hist_l.hi
        self.records = site.records
        self.par = hasattr(self.src, "batch")
        if self.par:
            self.warm_i, self.warm_t, self.hold_c = self.src.warm_i, self.src.warm_t, self.src.hold
        self.times = self.ls = self.svp = self.svl = self.kvs = []

    # ------------------------------------------------------------------ the heap and the next event
    @cython.cfunc
    def push(self, t: cython.double, kind: cython.int, r: object) -> None:
        heappush(self.heap, (t, self.seq, kind, r))
        self.seq += 1

    @cython.cfunc
    def pop(self) -> cython.int:
        """The kind of the first of the heap, timer and next arrival by (time, seq), its request in ``ev``."""
        t: cython.double = 0.0
        s: cython.Py_ssize_t = 0
        kind: cython.int = -1
        heap: list = self.heap
        if heap:
            top: tuple = heap[0]
            t, s, kind = top[0], top[1], 0
        if self.timer_on:
            timer_t: cython.double = self.timer_t
            if kind < 0 or timer_t < t or (timer_t == t and self.timer_seq < s):
                t, s, kind = timer_t, self.timer_seq, LINK
        if self.arrive_on:
            arrive_t: cython.double = self.arrive_t
            if kind < 0 or arrive_t < t or (arrive_t == t and self.arrive_seq < s):
                self.now = arrive_t
                return ARRIVE
        if kind == LINK:
            self.timer_on = False
            self.now = t
            return LINK
        if kind < 0:
            return -1
        e: tuple = heappop(heap)
        self.now = t
        self.ev = e[3]
        return e[2]

    @cython.cfunc
    def reschedule(self) -> None:
        """The link's timer, as ``SharedLink`` sets it at its last reschedule of this event."""
        delay: cython.double = self.link.due()
        self.timer_on = delay >= 0
        if self.timer_on:
            self.timer_t, self.timer_seq, self.timer_tag = self.now + delay, self.tseq, self.link.active[0][0]
        self.tseq = -1

    # ------------------------------------------------------------------ a request's steps
    @cython.cfunc
    def submit(self, r: Req) -> None:
        """``r`` joins its prefill pool (``entities.Pool.submit``)."""
        pool: Fifo = self.pool_p if r.offload else self.pool_l
        if pool.arrive(r, self.now):
            self.start(r)

    @cython.cfunc
    def start(self, r: Req) -> None:
        """``r``'s prefill starts; offloaded and pipelined, so does its bulk transfer a layer later."""
        r.prefill_started_at = self.now
        self.push(self.now + r.service, FIN_P if r.offload else FIN_L, r)
        if r.offload and self.n_layers > 1:
            self.push(self.now + r.service / self.n_layers, BULK_START, r)

    @cython.cfunc
    def finish(self, r: Req) -> None:
        """``r``'s prefill ends; the next queued request takes its server."""
        pool: Fifo = self.pool_p if r.offload else self.pool_l
        nxt = pool.depart(self.now)
        r.prefill_completed_at = self.now
        if nxt is not None:
            self.start(nxt)

    @cython.cfunc
    def send(self, r: Req, n_bytes: cython.double) -> None:
        """A transfer of ``r``'s starts on the link (``SharedLink.submit``: its reschedule's seq drawn)."""
        self.link.start(r, n_bytes, self.now)
        self.tseq = self.seq
        self.seq += 1

    @cython.cfunc
    def prefill_done_p(self, r: Req) -> None:  # KvPath._prefill_done_p
        part: cython.int = r.part
        if part == BULK:
            r.part = BULK_AFTER_PREFILL
        else:  # the last layer after the first ones, or (no pipelining) everything
            r.part = LAST
            self.send(r, r.kv / self.n_layers if part == BULK_SENT else r.kv)

    @cython.cfunc
    def prefill_done_l(self, r: Req) -> None:  # KvPath._prefill_done_l: RDMA inside the cluster, instantaneous
        r.kv_transfer_completed_at = self.now
        self.ready(r)

    @cython.cfunc
    def bulk_start(self, r: Req) -> None:  # KvPath._bulk_start
        if r.part == 0:  # a zero-length prefill already sent everything
            r.part = BULK
            self.send(r, r.kv * (self.n_layers - 1) / self.n_layers)

    @cython.cfunc
    def link_event(self) -> None:
        """The link's completion (``SharedLink._complete``), then ``KvPath._link_done`` for each transfer done."""
        done: list = self.link.complete(self.timer_tag, self.now)
        self.tseq = self.seq
        self.seq += 1
        r: Req
        for r in done:
            part: cython.int = r.part
            if part == LAST:
                self.link_done += 1
                r.kv_transfer_completed_at = self.now
                if self.landing > 0:
                    self.push(self.now + self.landing, READY, r)
                else:
                    self.ready(r)
            elif part == BULK:
                r.part = BULK_SENT
            elif part == BULK_AFTER_PREFILL:
                r.part = LAST
                self.send(r, r.kv / self.n_layers)
            else:  # prefix-cache prefetch done: the request joins its prefill queue
                r.part = 0
                self.submit(r)

    @cython.cfunc
    def ready(self, r: Req) -> None:
        """``r``'s KV is on a decode node (``entities.DecodeSlots.ready``)."""
        if self.dec.open(self.now):
            self.dec.take(r.hold, self.now)
            self.admit(r)
            return
        self.dec.wait(r, self.now)
        if not self.admit_on:
            self.admit_on = True
            self.push(self.dec.next_free(self.now), ADMIT, None)

    @cython.cfunc
    def admit_waiting(self) -> None:  # DecodeSlots._admit
        self.admit_on = False
        self.dec.advance(self.now)
        r: Req
        while self.dec.head(self.now):
            r = self.dec.waiting.popleft()
            self.dec.take(r.hold, self.now)
            self.admit(r)
        if self.dec.waiting:
            self.admit_on = True
            self.push(self.dec.next_free(self.now), ADMIT, None)

    @cython.cfunc
    def admit(self, r: Req) -> None:
        """``r``'s first token (``sim.site.Site._admit``): its TTFT into the tallies (``Hist.add``)."""
        now: cython.double = self.now
        ttft: cython.double = now - r.arrived_at
        if self.done_arriving:
            self.run.end = self.snapshot()
        if r.measured:
            k: cython.Py_ssize_t = 0 if ttft <= HIST_LO_S else int((math.log(ttft) - LOG_LO) * SCALE)
            if k >= HIST_BINS:
                k = HIST_BINS - 1
            self.tot += ttft
            if r.offload:
                self.counts_p[k] += 1
                self.tot_p += ttft
                self.lo_p = ttft if ttft < self.lo_p else self.lo_p
                self.hi_p = ttft if ttft > self.hi_p else self.hi_p
            else:
                self.counts_l[k] += 1
                self.tot_l += ttft
                self.lo_l = ttft if ttft < self.lo_l else self.lo_l
                self.hi_l = ttft if ttft > self.hi_l else self.hi_l
        if self.records is not None:
            self.records.append((r.i, r.arrived_at, "prfaas" if r.offload else "local", r.l, r.prefill_started_at,
                                 r.prefill_completed_at, r.kv_transfer_completed_at, now, now + r.hold, ttft,
                                 r.measured))

    # ------------------------------------------------------------------ arrivals
    @cython.cfunc
    def arrive(self) -> None:  # sim.site.Site.arrive
        i: cython.Py_ssize_t = self.arrived
        nxt = self.arrive_param(i) if self.par else self.arrive_traced(i)
        if nxt is None:
            self.arrive_on = False
            self.done_arriving = True
            self.run.snaps.append(self.snapshot())
        else:
            self.arrive_t, self.arrive_seq = float(nxt), self.seq
            self.seq += 1

    @cython.cfunc
    def measure(self, measured: cython.bint) -> None:
        if measured:
            if not self.run.snaps:
                self.run.snaps.append(self.snapshot())
            self.n_measured += 1

    @cython.cfunc
    def arrive_param(self, i: cython.Py_ssize_t) -> object:
        """A parametric source's request ``i`` (ParamSource.measured and request, inline); its next arrival."""
        pos: cython.Py_ssize_t = i - self.base
        measured: cython.bint = i >= self.warm_i if self.warm_i is not None else self.now >= self.warm_t
        self.measure(measured)
        l = self.ls[pos]
        if self.thr < l:
            self.routed_p += 1
            self.kv_in += self.kvs[pos]  # Site.arrive's kv + prefetch (0 here)
            self.submit(Req(i, self.now, l, True, self.svp[pos], self.kvs[pos], self.hold_c, measured))
        else:
            self.routed_l += 1
            self.submit(Req(i, self.now, l, False, self.svl[pos], 0.0, self.hold_c, measured))
        self.arrived = i + 1
        if pos + 1 < len(self.times):
            return self.times[pos + 1]
        self.times = self.ls = self.svp = self.svl = self.kvs = []  # let the batch go before the next is drawn
        nxt = self.src.next_time(i + 1)
        self.times, self.ls, self.svp, self.svl, self.kvs, self.base = self.src.batch()
        return nxt

    @cython.cfunc
    def arrive_traced(self, i: cython.Py_ssize_t) -> object:
        measured: cython.bint = self.src.measured(i, self.now)
        self.measure(measured)
        off, l, service, kv, hold, prefetch = self.src.request(i, self.thr.__lt__, measured)
        r: Req = Req(i, self.now, l, off, service, kv, hold, measured)
        self.kv_in += kv + prefetch
        self.arrived = i + 1
        if off:
            self.routed_p += 1
        else:
            self.routed_l += 1
        if prefetch > 0:
            r.part = PREFETCH
            self.send(r, float(prefetch))
        else:
            self.submit(r)
        return self.src.next_time(i + 1)

    # ------------------------------------------------------------------ the run's objects
    @cython.cfunc
    def sync(self) -> None:
        """The counters into the site and the run, the clock into the engine (the stations are the site's)."""
        site, run = self.site, self.run
        site.link_done, site.arrived, site.n_measured = self.link_done, self.arrived, self.n_measured
        site.routed["prfaas"], site.routed["local"], site.kv_in = self.routed_p, self.routed_l, self.kv_in
        if self.pool_p is not None:  # every completion of the shared pool is this site's
            site.prfaas_done = self.pool_p.completed
        run.arrived, run.n_measured = self.arrived, self.n_measured
        self.engine.now = self.now

    @cython.cfunc
    def snapshot(self) -> dict:
        self.sync()
        return self.run.snapshot()

    def start_run(self) -> None:
        first = self.src.next_time(0)
        if self.par:
            self.times, self.ls, self.svp, self.svl, self.kvs, self.base = self.src.batch()
        self.arrive_t, self.arrive_seq, self.arrive_on = float(first), self.seq, True
        self.seq += 1

    def end_run(self, events: int) -> None:
        """The counters, the tallies into the site's and the run's histograms, the engine's clock and count."""
        self.sync()
        self.run.done_arriving = self.done_arriving
        for owner in (self.site, self.run):
            hist, hist_p, hist_l = owner.hist, owner.hist_path["prfaas"], owner.hist_path["local"]
            hist_p.counts, hist_l.counts = list(self.counts_p), list(self.counts_l)
            hist_p.n, hist_p.total, hist_p.lo, hist_p.hi = sum(self.counts_p), self.tot_p, self.lo_p, self.hi_p
            hist_l.n, hist_l.total, hist_l.lo, hist_l.hi = sum(self.counts_l), self.tot_l, self.lo_l, self.hi_l
            hist.counts = [a + b for a, b in zip(self.counts_p, self.counts_l, strict=True)]
            hist.n, hist.total = hist_p.n + hist_l.n, self.tot
            hist.lo, hist.hi = min(self.lo_p, self.lo_l), max(self.hi_p, self.hi_l)
        self.engine.give_back(self.now, events, self.seq)

    def play(self, progress: Callable[[int], None] | None, drain: bool, step: int) -> int:
        """The event loop; the number of events played (see ``run_plain``)."""
        n: cython.Py_ssize_t = 0
        kind: cython.int
        while True:
            kind = self.pop()
            if kind == ARRIVE:
                self.arrive()
            elif kind == LINK:
                self.link_event()
            elif kind == FIN_P:
                self.finish(self.ev)
                self.prefill_done_p(self.ev)
            elif kind == FIN_L:
                self.finish(self.ev)
                self.prefill_done_l(self.ev)
            elif kind == BULK_START:
                self.bulk_start(self.ev)
            elif kind == READY:
                self.ready(self.ev)
            elif kind == ADMIT:
                self.admit_waiting()
            else:
                break
            if self.tseq >= 0:
                self.reschedule()
            n += 1
            if n % step == 0:
                if progress is not None:
                    progress(self.arrived)
                if not drain and self.done_arriving:
                    return n
        if progress is not None:  # drive's report of the step that ran dry
            progress(self.arrived)
        return n


def run_plain(run: Any, progress: Callable[[int], None] | None, drain: bool, step: int) -> None:
    """Play ``run`` as ``sim.driver.drive`` would: ``step`` events a report, undrained to the last arrival's."""
    kernel = Kernel(run)
    kernel.start_run()
    kernel.end_run(kernel.play(progress, drain, step))
