"""A minimal discrete-event engine: one heap of timed callbacks per run (the SimPy core idea).

Events are heap entries keyed ``(time, priority, seq)``: earlier time first, then lower
priority number, then scheduling order. ``seq`` comes from an ``itertools.count()`` owned by the
engine, so ties break deterministically and two engines never share state (no class-level
counters). A callback is a plain function called as ``callback(*args)`` with ``engine.now`` set to
its time; it schedules follow-up events itself. Times are seconds.

Speed: the loop is a bare ``heappop`` + call. On CPython 3.11 it runs about half a million
trivial self-rescheduling events per second, and ~300k events/s (150k customers/s) through an
M/M/c :class:`~prfaas_plan.sim.stations.FifoServers` station (``benchmarks/bench_engine.py``).
Keep times Python floats: numpy scalars in the heap make every comparison several times slower.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from typing import Any

__all__ = ["Engine", "EventHandle"]

_heappush = heapq.heappush
_heappop = heapq.heappop

# A scheduled event: [time, priority, seq, callback | None, args]. A list (not a tuple) so that
# cancel() can blank the callback in place; comparisons never reach index 3 because seq is unique.
EventHandle = list[Any]


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

    __slots__ = ("_heap", "_seq", "events_processed", "now")

    def __init__(self, start: float = 0.0) -> None:
        self._heap: list[EventHandle] = []
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
        return heap[0][0] if heap else math.inf

    @property
    def pending(self) -> int:
        """Number of entries in the heap, cancelled ones included (an upper bound)."""
        return len(self._heap)

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
        heap = self._heap
        pop = _heappop
        limit = math.inf if until is None else float(until)
        if limit < self.now:
            raise ValueError(f"until = {until!r} s is before now = {self.now!r} s")
        budget = -1 if max_events is None else int(max_events)
        if budget == 0:
            return 0
        n = 0
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
                    return n
            if until is not None:
                self.now = limit
            return n
        finally:
            self.events_processed += n
