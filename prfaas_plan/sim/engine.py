"""A minimal discrete-event engine: one heap of timed callbacks per run (the SimPy core idea).

Events are heap entries keyed ``(time, priority, seq)``: earlier time first, then lower
priority number, then scheduling order. ``seq`` comes from an ``itertools.count()`` owned by the
engine, so ties break deterministically and two engines never share state (no class-level
counters). A callback is a plain function called as ``callback(*args)`` with ``engine.now`` set to
its time; it schedules follow-up events itself. Times are seconds.

Speed: the loop is a bare ``heappop`` + call. On CPython 3.11 it runs about half a million
trivial self-rescheduling events per second, and ~300k events/s (150k customers/s) through an
M/M/c FIFO station (``tests/sim/stations_ref.py``, ``benchmarks/bench_engine.py``).
Keep times Python floats: numpy scalars in the heap make every comparison several times slower.

Timers: an entity with at most one pending event that it often moves (a processor-sharing
link's next completion, rescheduled at every arrival and departure) holds it in a
:class:`Timer`, outside the heap. Setting a timer replaces its entry, so nothing is cancelled
and left in the heap to be popped and skipped. The run loop dispatches whichever is first of the
heap's top and the set timers by the same ``(time, priority, seq)`` key, and a timer's ``seq``
comes from the same counter at the same moment as a heap entry's would, so every callback runs
in the order and at the time it would if the timer's entries were heap entries cancelled and
pushed anew.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from typing import Any

__all__ = ["Engine", "EventHandle", "Timer"]

_heappush = heapq.heappush
_heappop = heapq.heappop

# A scheduled event: [time, priority, seq, callback | None, args]. A list (not a tuple) so that
# cancel() can blank the callback in place; comparisons never reach index 3 because seq is unique.
EventHandle = list[Any]


class Timer:
    """One pending event held outside the engine's heap (see the module notes).

    ``entry`` is ``None`` or ``[time, priority, seq, callback, args]`` as a heap entry; the engine
    clears it before it calls the callback. Set it with :meth:`Engine.set_timer`, clear it by
    setting ``None``.
    """

    __slots__ = ("entry",)

    def __init__(self) -> None:
        self.entry: EventHandle | None = None


class Engine:
    """Event loop with its own clock, heap and tie-break counter.

    Parameters
    ----------
    start : float
        Initial simulated time, seconds.

    Attributes
    ----------
    now : float
        Current simulated time, seconds (time of the event being processed, or of the last one).
    events_processed : int
        Callbacks run so far over all calls of :meth:`run` (cancelled events are not counted).
    """

    __slots__ = ("_heap", "_seq", "_timers", "events_processed", "now")

    def __init__(self, start: float = 0.0) -> None:
        self._heap: list[EventHandle] = []
        self._timers: list[Timer] = []
        self._seq = itertools.count()
        self.now = float(start)
        self.events_processed = 0

    def schedule(self, delay: float, callback: Callable[..., Any], *args: Any, priority: int = 0) -> EventHandle:
        """Run ``callback(*args)`` ``delay`` seconds from now (relative time, ``delay >= 0``).

        Returns a handle for :meth:`cancel`. Among events at the same time, a lower ``priority``
        runs first, then the one scheduled first.
        """
        if not delay >= 0:  # also rejects NaN
            raise ValueError(f"delay must be >= 0 s, got {delay!r}")
        entry = [self.now + delay, priority, next(self._seq), callback, args]
        _heappush(self._heap, entry)
        return entry

    def schedule_at(self, at: float, callback: Callable[..., Any], *args: Any, priority: int = 0) -> EventHandle:
        """Run ``callback(*args)`` at absolute time ``at`` (``at >= now``); see :meth:`schedule`."""
        if not at >= self.now:
            raise ValueError(f"cannot schedule at {at!r} s, before now = {self.now!r} s")
        entry = [float(at), priority, next(self._seq), callback, args]
        _heappush(self._heap, entry)
        return entry

    def timer(self) -> Timer:
        """A new :class:`Timer` (not set) that this engine's :meth:`run` watches."""
        t = Timer()
        self._timers.append(t)
        return t

    def set_timer(self, timer: Timer, delay: float, callback: Callable[..., Any], *args: Any,
                  priority: int = 0) -> None:
        """Set ``timer`` to run ``callback(*args)`` ``delay`` seconds from now, replacing what it held.

        The same entry (and the same tie-break) as :meth:`schedule`'s, after cancelling the old one.
        """
        if not delay >= 0:
            raise ValueError(f"delay must be >= 0 s, got {delay!r}")
        timer.entry = [self.now + delay, priority, next(self._seq), callback, args]

    @staticmethod
    def cancel(handle: EventHandle) -> None:
        """Cancel a scheduled event; it stays in the heap but is skipped. Idempotent."""
        handle[3] = None
        handle[4] = ()

    def peek(self) -> float:
        """Time of the next pending (not cancelled) event, ``math.inf`` if there is none."""
        heap = self._heap
        while heap and heap[0][3] is None:
            _heappop(heap)
        t = heap[0][0] if heap else math.inf
        for timer in self._timers:
            e = timer.entry
            if e is not None and e[0] < t:
                t = e[0]
        return t

    def take_over(self) -> int:
        """Hand the clock to a loop that plays this engine's events itself (``sim.kernel``): nothing
        may be pending; returns the next tie-break ``seq``, from which the loop draws its own."""
        if self.pending:
            raise RuntimeError(f"{self.pending} events are pending: the engine cannot be taken over")
        return next(self._seq)

    def give_back(self, now: float, events: int, seq: int) -> None:
        """The clock back from such a loop: at ``now``, ``events`` more played, ``seq`` the next seq."""
        self.now = now
        self.events_processed += events
        self._seq = itertools.count(seq)

    @property
    def pending(self) -> int:
        """Entries in the heap, cancelled ones included, plus set timers (an upper bound)."""
        return len(self._heap) + sum(1 for t in self._timers if t.entry is not None)

    def run(self, until: float | None = None, max_events: int | None = None) -> int:
        """Process events in order; return how many callbacks ran in this call.

        Parameters
        ----------
        until : float, optional
            Stop before the first event later than ``until``; events at exactly ``until`` run.
            The clock then advances to ``until`` (if the heap did not run dry first, it still does,
            so utilisation windows can be closed at a fixed horizon). ``None``: run until no
            event is left.
        max_events : int, optional
            Stop after this many callbacks (the clock stays at the last event's time).
        """
        limit = math.inf if until is None else float(until)
        if limit < self.now:
            raise ValueError(f"until = {until!r} s is before now = {self.now!r} s")
        budget = -1 if max_events is None else int(max_events)
        if budget == 0:
            return 0
        timers = self._timers
        loop = self._run_heap if not timers else self._run_timer if len(timers) == 1 else self._run_timers
        n, spent = loop(limit, budget)
        if until is not None and not spent:
            self.now = limit
        return n

    # The loops of run: (callbacks run, whether the budget ran out); each adds its count as it ends.
    def _run_heap(self, limit: float, budget: int) -> tuple[int, bool]:
        """No timer: the heap alone."""
        heap, pop, n = self._heap, _heappop, 0
        try:
            while heap:
                if heap[0][0] > limit:
                    break
                time, _, _, callback, args = pop(heap)
                if callback is None:
                    continue
                self.now = time
                callback(*args)
                n += 1
                if n == budget:
                    return n, True
            return n, False
        finally:
            self.events_processed += n

    def _run_timer(self, limit: float, budget: int) -> tuple[int, bool]:
        """One timer (one link): the general loop of ``_run_timers``, unrolled."""
        heap, pop, n = self._heap, _heappop, 0
        timer = self._timers[0]
        try:
            while True:
                e = timer.entry
                if heap and (e is None or heap[0] < e):
                    if heap[0][0] > limit:
                        break
                    time, _, _, callback, args = pop(heap)
                    if callback is None:
                        continue
                elif e is None or e[0] > limit:
                    break
                else:
                    timer.entry = None
                    time, _, _, callback, args = e
                self.now = time
                callback(*args)
                n += 1
                if n == budget:
                    return n, True
            return n, False
        finally:
            self.events_processed += n

    def _run_timers(self, limit: float, budget: int) -> tuple[int, bool]:
        heap, n = self._heap, 0
        try:
            while True:
                first = heap[0] if heap else None
                owner = None
                for timer in self._timers:
                    e = timer.entry
                    if e is not None and (first is None or e < first):
                        first, owner = e, timer
                if first is None or first[0] > limit:
                    break
                if owner is None:
                    _heappop(heap)
                    if first[3] is None:
                        continue
                else:
                    owner.entry = None
                self.now = first[0]
                first[3](*first[4])
                n += 1
                if n == budget:
                    return n, True
            return n, False
        finally:
            self.events_processed += n
