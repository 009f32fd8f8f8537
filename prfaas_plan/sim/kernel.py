"""The simulator's fast path: one system's run as one event loop, its callbacks written inline;
``sim.fast`` says when it runs and whether compiled (setup.py builds it with Cython).

The reference, ``sim.run._Run``, runs a system as objects scheduling bound methods on
``sim.engine.Engine``; it alone serves the control loops and replayed series. Without those a
request's life is a fixed script (arrive, queue for a prefill instance, ship the KV over the link
when offloaded, wait for a decode slot), which this loop plays with the state of the link, the
pools, the decode slots and the tallies in locals (typed when compiled) and the events as
``[time, seq, kind, request]`` lists. It is the reference step for step: the same events at the
same moments with the same (time, seq) keys (the engine's priorities are all 0 here), the same
floating-point operations in the same order, the same snapshots, so a seed gives the same result
bit for bit (tests/sim/test_kernel.py, test_identity.py). Each pool's state is in the typed locals of
its own closures (``pool``). A request is a list ``[i, arrived_at, l, offload, service,
kv, hold, measured, part, prefill_started_at, prefill_completed_at, kv_transfer_completed_at]``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from typing import Any

try:  # noqa: SIM105 (Cython reads this import; as Python the annotations are never evaluated)
    import cython
except ImportError:
    pass

from prfaas_plan.sim.entities import HIST_BINS, HIST_LO_S, LOG_LO, SCALE
from prfaas_plan.sim.path import BULK, BULK_AFTER_PREFILL, BULK_SENT, LAST, PREFETCH
from prfaas_plan.sim.policies import ParamSource

__all__ = ["run_plain"]

# event kinds
_ARRIVE, _FIN_P, _FIN_L, _BULK, _READY, _ADMIT, _LINK = range(7)
# request fields
_I, _AT, _L, _OFF, _SVC, _KV, _HOLD, _MEAS, _PART, _PS, _PC, _KVD = range(12)


def run_plain(run: Any, progress: Callable[[int], None] | None, drain: bool, step: int) -> None:
    """Play ``run`` to its end as ``sim.run.drive`` would: ``step`` events between progress reports,
    stopping after the step in which the last request arrived unless ``drain``.

    The state of the link, the decode slots and the histograms is in local variables, each prefill
    pool's in its own closures' (``pool``), all typed for the compiled build and written to the
    objects around each snapshot and at the end. The link's reschedules are folded: where
    ``SharedLink._reschedule`` runs, this draws the seq it would draw; the timer entry is built
    once, at the end of the event, from the state the last of them saw (nothing touches the link
    after it within an event). A seq drawn and never used leaves the order of the others as it was."""
    engine, src, link, dec = run.engine, run.src, run.link, run.decode
    pool_p, pool_l = run.pool_p, run.pool_l
    heap: list[list[Any]] = engine._heap
    push, pop, heapreplace, log, nan = heapq.heappush, heapq.heappop, heapq.heapreplace, math.log, math.nan
    thr, n_layers, landing = run.thr, run.n_layers, run.system.landing_s
    next_time, request, measured_of = src.next_time, src.request, src.measured
    route = thr.__lt__
    # the TTFT histograms: counts per path, running sums and extremes; the whole run's counts are
    # the paths' summed at the end, its sum is kept in admission order as the reference's
    hist, hist_p, hist_l = run.hist, run.hist_path["prfaas"], run.hist_path["local"]
    counts_p, counts_l = hist_p.counts, hist_l.counts
    tot: cython.double = hist.total
    tot_p: cython.double = hist_p.total
    tot_l: cython.double = hist_l.total
    lo_p: cython.double = hist_p.lo
    hi_p: cython.double = hist_p.hi
    lo_l: cython.double = hist_l.lo
    hi_l: cython.double = hist_l.hi
    records = run.records
    # the parametric source's current batch, read in place (ParamSource.request and next_time)
    par = isinstance(src, ParamSource)
    times = ls = svp = svl = kvs = ()
    base = 0
    if par:
        warm_i, warm_t, hold_c = src.warm_i, src.warm_t, src.hold
    # the link (SharedLink's state; bandwidth fixed on this path)
    active: list[tuple[float, int, Any]] = link._active
    bw: cython.double = link.bandwidth
    window, t0, windows = link.window_s, link._t0, link._window_bytes
    add_to_windows = link._add_to_windows
    l_virtual: cython.double = link._virtual
    l_busy: cython.double = link.busy_time
    l_bytes: cython.double = link._bytes
    l_last: cython.double = link._last_t
    l_seq: cython.Py_ssize_t = link._seq
    k_last: cython.Py_ssize_t = 0  # the window holding time k_at (the same expression, computed once)
    k_at: cython.double = nan
    timer: list[Any] | None = None  # the link's next completion: [time, seq, _LINK, tag]
    tseq: cython.Py_ssize_t = -1  # the seq of the link's last reschedule in this event, -1: none
    # the decode slots (DecodeSlots' state)
    free_at, waiting = dec.free_at, dec.waiting
    d_event = dec._event
    d_adm: cython.Py_ssize_t = dec.admitted
    d_hold: cython.double = dec.admitted_hold
    d_aw: cython.double = dec.area_waiting
    d_as: cython.double = dec.area_slots
    d_last: cython.double = dec.last_t
    seq: cython.Py_ssize_t = next(engine._seq)
    now: cython.double = engine.now
    arrived: cython.Py_ssize_t = run.arrived
    link_done: cython.Py_ssize_t = run.link_done
    n_measured: cython.Py_ssize_t = run.n_measured
    routed_p: cython.Py_ssize_t = run.routed["prfaas"]
    routed_l: cython.Py_ssize_t = run.routed["local"]
    done_arriving = run.done_arriving

    def out() -> None:  # the locals into the objects
        link._virtual, link.busy_time, link._bytes, link._last_t, link._seq = l_virtual, l_busy, l_bytes, l_last, l_seq
        for sync in syncs:
            sync(True)
        dec._event, dec.admitted, dec.admitted_hold = d_event, d_adm, d_hold
        dec.area_waiting, dec.area_slots, dec.last_t = d_aw, d_as, d_last
        run.link_done, run.arrived, run.n_measured = link_done, arrived, n_measured
        run.routed["prfaas"], run.routed["local"] = routed_p, routed_l
        engine.now = now

    def snapshot() -> dict[str, float]:  # sim.run._Run._snapshot, on the objects: it advances them
        nonlocal l_virtual, l_busy, l_bytes, l_last
        nonlocal d_aw, d_as, d_last
        out()
        s = run._snapshot()
        l_virtual, l_busy, l_bytes, l_last = link._virtual, link.busy_time, link._bytes, link._last_t
        for sync in syncs:
            sync(False)
        d_aw, d_as, d_last = dec.area_waiting, dec.area_slots, dec.last_t
        return s

    def advance() -> None:  # SharedLink._advance(now), for now > l_last
        nonlocal l_virtual, l_busy, l_bytes, l_last, k_last, k_at
        dt: cython.double
        if active:
            dt = now - l_last
            l_virtual += dt * bw / len(active)
            l_busy += dt
            l_bytes += dt * bw
            k = k_last if k_at == l_last else int((l_last - t0) // window)  # the window of l_last
            k_last, k_at = int((now - t0) // window), now
            if k == k_last and k < len(windows):
                lo = t0 + k * window
                if l_last > lo:
                    lo = l_last
                hi = t0 + (k + 1) * window
                if now < hi:
                    hi = now
                if hi > lo:
                    windows[k] += (hi - lo) * bw
            else:
                add_to_windows(l_last, now)
        l_last = now

    def submit(r: list[Any], n_bytes: float) -> None:  # SharedLink.submit (its reschedule folded)
        nonlocal l_seq, seq, tseq
        if now > l_last:
            advance()
        push(active, (l_virtual + n_bytes, l_seq, r))
        l_seq += 1
        tseq = seq
        seq += 1

    def pool(obj: Any, fin: int, bulk: bool) -> tuple[Callable, Callable, Callable]:
        """Pool.submit, Pool._finish (up to on_done) and Pool._start (with the PrfaaS pool's
        on_start: its bulk transfer's event) on one pool's state, in the closure's typed locals."""
        n: cython.Py_ssize_t = obj.n
        busy: cython.Py_ssize_t = obj.busy
        done: cython.Py_ssize_t = obj.completed
        aq: cython.double = obj.area_queue
        ab: cython.double = obj.area_busy
        areas: cython.double = obj.area_servers
        last: cython.double = obj.last_t
        queue = obj.queue

        def start(r: list[Any]) -> None:
            nonlocal seq
            r[_PS] = now
            push(heap, [now + r[_SVC], seq, fin, r])
            seq += 1
            if bulk:
                push(heap, [now + r[_SVC] / n_layers, seq, _BULK, r])
                seq += 1

        def submit(r: list[Any]) -> None:
            nonlocal aq, ab, areas, last, busy
            dt: cython.double = now - last
            if dt > 0:
                aq += dt * len(queue)
                ab += dt * busy
                areas += dt * n
                last = now
            if busy < n:
                busy += 1
                start(r)
            else:
                queue.append(r)

        def finish(r: list[Any]) -> None:
            nonlocal aq, ab, areas, last, busy, done
            dt: cython.double = now - last
            if dt > 0:
                aq += dt * len(queue)
                ab += dt * busy
                areas += dt * n
                last = now
            done += 1
            r[_PC] = now
            if queue and busy <= n:
                start(queue.popleft())
            else:
                busy -= 1

        def sync(to_object: bool) -> None:  # the locals into the Pool, or back (a snapshot advances it)
            nonlocal aq, ab, areas, last
            if to_object:
                obj.busy, obj.completed, obj.last_t = busy, done, last
                obj.area_queue, obj.area_busy, obj.area_servers = aq, ab, areas
            else:
                aq, ab, areas, last = obj.area_queue, obj.area_busy, obj.area_servers, obj.last_t

        return submit, finish, sync

    def ready(r: list[Any]) -> None:  # DecodeSlots.ready
        nonlocal seq, d_adm, d_hold, d_aw, d_as, d_last, d_event
        if not waiting and free_at[0] <= now:
            heapreplace(free_at, now + r[_HOLD])
            d_adm += 1
            d_hold += r[_HOLD]
            admit(r)
            return
        dt: cython.double = now - d_last
        if dt > 0:
            d_aw += dt * len(waiting)
            d_as += dt * len(free_at)
            d_last = now
        waiting.append(r)
        if d_event is None:
            d_event = [now if now >= free_at[0] else free_at[0], seq, _ADMIT, None]
            seq += 1
            push(heap, d_event)

    def admit(r: list[Any]) -> None:  # sim.run._Run._admit
        nonlocal tot, tot_p, tot_l, lo_p, hi_p, lo_l, hi_l
        ttft: cython.double = now - r[_AT]
        if done_arriving:
            run.end = snapshot()
        if r[_MEAS]:  # Hist.bin_of and Hist.add
            k = 0 if ttft <= HIST_LO_S else int((log(ttft) - LOG_LO) * SCALE)
            if k >= HIST_BINS:
                k = HIST_BINS - 1
            tot += ttft
            if r[_OFF]:
                counts_p[k] += 1
                tot_p += ttft
                if ttft < lo_p:
                    lo_p = ttft
                if ttft > hi_p:
                    hi_p = ttft
            else:
                counts_l[k] += 1
                tot_l += ttft
                if ttft < lo_l:
                    lo_l = ttft
                if ttft > hi_l:
                    hi_l = ttft
        if records is not None:
            records.append((r[_I], r[_AT], "prfaas" if r[_OFF] else "local", r[_L], r[_PS], r[_PC], r[_KVD],
                            now, now + r[_HOLD], ttft, r[_MEAS]))

    syncs = []
    submit_p = finish_p = submit_l = finish_l = None  # a missing pool is sent nothing (the routing)
    if pool_p is not None:
        submit_p, finish_p, sync_p = pool(pool_p, _FIN_P, n_layers > 1)
        syncs.append(sync_p)
    if pool_l is not None:
        submit_l, finish_l, sync_l = pool(pool_l, _FIN_L, False)
        syncs.append(sync_l)
    first = next_time(0)
    if par:
        times, ls, svp, svl, kvs, base = src._times, src._l, src._svc_p, src._svc_l, src._kv, src._base
    # the next arrival is held outside the heap (it would be the heap's [a_t, a_seq, _ARRIVE, None])
    a_t: cython.double = float(first)
    a_seq: cython.Py_ssize_t = seq
    a_on = True
    seq += 1
    n: cython.Py_ssize_t = 0
    dt: cython.double
    stopped = False
    while True:
        e = heap[0] if heap and (timer is None or heap[0] < timer) else timer
        if a_on and (e is None or a_t < e[0] or (a_t == e[0] and a_seq < e[1])):
            now = a_t
            kind = _ARRIVE
        elif e is None:
            break
        else:
            if e is timer:
                timer = None
            else:
                pop(heap)
            now = e[0]
            kind = e[2]
        if kind == _LINK:  # SharedLink._complete(tag), then KvPath._link_done for each transfer done
            if now > l_last:
                advance()
            tag = e[3]
            if tag > l_virtual:
                l_virtual = tag
            done = ()
            if active and active[0][0] <= l_virtual:
                done = (pop(active)[2],)
                while active and active[0][0] <= l_virtual:  # equal transfers started together
                    done += (pop(active)[2],)
            tseq = seq
            seq += 1
            for r in done:
                part = r[_PART]
                if part == LAST:
                    link_done += 1
                    r[_KVD] = now
                    if landing > 0:
                        push(heap, [now + landing, seq, _READY, r])
                        seq += 1
                    else:
                        ready(r)
                elif part == BULK:
                    r[_PART] = BULK_SENT
                elif part == BULK_AFTER_PREFILL:
                    r[_PART] = LAST
                    submit(r, r[_KV] / n_layers)
                else:  # prefix-cache prefetch done: the request joins its prefill queue
                    r[_PART] = 0
                    if r[_OFF]:
                        submit_p(r)
                    else:
                        submit_l(r)
        elif kind == _ARRIVE:  # sim.run._Run.arrive
            i = arrived
            if par:  # ParamSource.measured and request, inline
                pos = i - base
                measured = i >= warm_i if warm_i is not None else now >= warm_t
                if measured:
                    if not run.snaps:
                        run.snaps.append(snapshot())
                    n_measured += 1
                l = ls[pos]
                if thr < l:
                    routed_p += 1
                    submit_p([i, now, l, True, svp[pos], kvs[pos], hold_c, measured, 0, nan, nan, nan])
                else:
                    routed_l += 1
                    submit_l([i, now, l, False, svl[pos], 0.0, hold_c, measured, 0, nan, nan, nan])
                arrived = i + 1
                if pos + 1 < len(times):
                    nxt = times[pos + 1]
                else:  # the batch is spent: let it go before the source draws the next one
                    times = ls = svp = svl = kvs = ()
                    nxt = next_time(i + 1)
                    times, ls, svp, svl, kvs, base = src._times, src._l, src._svc_p, src._svc_l, src._kv, src._base
            else:
                measured = measured_of(i, now)
                if measured:
                    if not run.snaps:
                        run.snaps.append(snapshot())
                    n_measured += 1
                off, l, service, kv, hold, prefetch = request(i, route, measured)
                r = [i, now, l, off, service, kv, hold, measured, 0, nan, nan, nan]
                arrived = i + 1
                if off:
                    routed_p += 1
                else:
                    routed_l += 1
                if prefetch > 0:
                    r[_PART] = PREFETCH
                    submit(r, float(prefetch))
                elif off:
                    submit_p(r)
                else:
                    submit_l(r)
                nxt = next_time(i + 1)
            if nxt is None:
                a_on = False
                done_arriving = True
                run.snaps.append(snapshot())
            else:
                a_t, a_seq = float(nxt), seq
                seq += 1
        elif kind == _FIN_L:  # Pool._finish of the PD-P pool, then KvPath._prefill_done_l
            r = e[3]
            finish_l(r)
            r[_KVD] = now  # RDMA inside the cluster: instantaneous
            ready(r)
        elif kind == _FIN_P:  # Pool._finish of the PrfaaS pool, then KvPath._prefill_done_p
            r = e[3]
            finish_p(r)
            part = r[_PART]
            if part == BULK:
                r[_PART] = BULK_AFTER_PREFILL
            else:  # the last layer after the first ones, or (no pipelining) everything
                r[_PART] = LAST
                if now > l_last:
                    advance()
                push(active, (l_virtual + (r[_KV] / n_layers if part == BULK_SENT else r[_KV]), l_seq, r))
                l_seq += 1
                tseq = seq
                seq += 1
        elif kind == _BULK:  # KvPath._bulk_start
            r = e[3]
            if r[_PART] == 0:  # a zero-length prefill already sent everything
                r[_PART] = BULK
                if now > l_last:
                    advance()
                push(active, (l_virtual + r[_KV] * (n_layers - 1) / n_layers, l_seq, r))
                l_seq += 1
                tseq = seq
                seq += 1
        elif kind == _READY:
            ready(e[3])
        else:  # DecodeSlots._admit
            d_event = None
            dt = now - d_last
            if dt > 0:
                d_aw += dt * len(waiting)
                d_as += dt * len(free_at)
                d_last = now
            while waiting and free_at[0] <= now:
                r = waiting.popleft()
                heapreplace(free_at, now + r[_HOLD])
                d_adm += 1
                d_hold += r[_HOLD]
                admit(r)
            if waiting:
                d_event = [now if now >= free_at[0] else free_at[0], seq, _ADMIT, None]
                seq += 1
                push(heap, d_event)
        if tseq >= 0:  # SharedLink._reschedule, once, for the last of this event's
            if active and bw > 0:
                tag = active[0][0]
                delay = (tag - l_virtual) * len(active) / bw
                timer = [now + (delay if delay > 0.0 else 0.0), tseq, _LINK, tag]
            else:
                timer = None
            tseq = -1
        n += 1
        if n % step == 0:
            if progress is not None:
                progress(arrived)
            if not drain and done_arriving:
                stopped = True
                break
    if not stopped and progress is not None:  # drive's report of the step that ran dry
        progress(arrived)
    out()
    run.done_arriving = done_arriving
    hist_p.n, hist_p.total, hist_p.lo, hist_p.hi = sum(counts_p), tot_p, lo_p, hi_p
    hist_l.n, hist_l.total, hist_l.lo, hist_l.hi = sum(counts_l), tot_l, lo_l, hi_l
    hist.counts = [a + b for a, b in zip(counts_p, counts_l, strict=True)]
    hist.n, hist.total = hist_p.n + hist_l.n, tot
    hist.lo, hist.hi = min(lo_p, lo_l), max(hi_p, hi_l)
    engine.events_processed += n
