"""Engine timers (issue 13): a timer held outside the heap runs its callbacks in exactly the order,
at exactly the times, and with exactly the event counts that a heap entry cancelled and scheduled
anew at every reset would, ties in time and priority included."""

from __future__ import annotations

import math
import random

import pytest

from prfaas_plan.sim.engine import Engine

DELAYS = (0.0, 0.0, 0.5, 1.0, 1.0, 2.5)  # repeated values: many ties in time


def _script(use_timers: bool, seed: int, n_timers: int, *, steps: int = 3000, chunk: int | None = None,
            until: float | None = None) -> tuple[list[tuple[float, str]], int, float]:
    """Random self-driving events; each callback draws what to do next from one seeded stream, so
    two engines that ran the callbacks in the same order draw the same things."""
    rng = random.Random(seed)
    engine = Engine()
    log: list[tuple[float, str]] = []
    timers = [engine.timer() for _ in range(n_timers)] if use_timers else []
    handles: list[list | None] = [None] * n_timers
    budget = [steps]

    def set_timer(j: int, delay: float | None, priority: int) -> None:
        if use_timers:
            if delay is None:
                timers[j].entry = None
            else:
                engine.set_timer(timers[j], delay, fire, f"T{j}", priority=priority)
        else:
            if handles[j] is not None:
                Engine.cancel(handles[j])  # type: ignore[arg-type]
                handles[j] = None
            if delay is not None:
                handles[j] = engine.schedule(delay, fire, f"T{j}", priority=priority)

    def fire(tag: str) -> None:
        log.append((engine.now, tag))
        if tag[0] == "T" and not use_timers:
            handles[int(tag[1:])] = None  # the engine clears a timer before its callback
        if budget[0] <= 0:
            return
        budget[0] -= 1
        engine.schedule(rng.choice(DELAYS), fire, f"H{rng.randrange(100)}", priority=rng.choice((0, 1, -1)))
        for _ in range(rng.choice((0, 1, 1, 2))):
            if n_timers and rng.random() < 0.6:
                j = rng.randrange(n_timers)
                set_timer(j, None if rng.random() < 0.15 else rng.choice(DELAYS), rng.choice((0, 0, 1, -1)))
            else:
                engine.schedule(rng.choice(DELAYS), fire, f"H{rng.randrange(100)}", priority=rng.choice((0, 1, -1)))

    engine.schedule(0.0, fire, "start")
    engine.schedule(0.0, fire, "start2")
    if chunk is not None:
        while engine.run(max_events=chunk) == chunk:
            pass
    else:
        engine.run(until=until)
    return log, engine.events_processed, engine.now


@pytest.mark.slow
@pytest.mark.parametrize("n_timers", [1, 2, 3])
@pytest.mark.parametrize("seed", range(6))
def test_timers_run_callbacks_as_cancel_and_reschedule_would(seed: int, n_timers: int) -> None:
    want = _script(False, seed, n_timers)
    got = _script(True, seed, n_timers)
    assert len(want[0]) > 1000
    assert got == want


@pytest.mark.parametrize("n_timers", [1, 3])
def test_timers_under_max_events_and_until(n_timers: int) -> None:
    assert _script(True, 7, n_timers, chunk=37) == _script(False, 7, n_timers, chunk=37)
    for until in (0.0, 3.0, 250.0):
        assert _script(True, 8, n_timers, until=until) == _script(False, 8, n_timers, until=until)


def test_timer_peek_pending_and_clear() -> None:
    engine = Engine()
    log: list[str] = []
    t = engine.timer()
    assert engine.peek() == math.inf and engine.pending == 0
    engine.schedule(2.0, log.append, "heap")
    engine.set_timer(t, 3.0, log.append, "timer")
    assert engine.peek() == 2.0 and engine.pending == 2
    engine.set_timer(t, 1.0, log.append, "timer-moved")  # replaces the entry: nothing left behind
    assert engine.peek() == 1.0 and engine.pending == 2
    assert engine.run(until=1.5) == 1 and log == ["timer-moved"] and t.entry is None
    engine.set_timer(t, 0.5, log.append, "timer-2")
    t.entry = None  # cleared: never runs
    assert engine.run() == 1 and log == ["timer-moved", "heap"]
    with pytest.raises(ValueError):
        engine.set_timer(t, -1.0, log.append)
