"""What every simulated run shares: stepping the engine with progress reports, the checks of a
run's rate, length and warm-up, and the saturation estimate's type."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from prfaas_plan.errors import SpecError
from prfaas_plan.sim.engine import Engine
from prfaas_plan.specs.run import ENGINE, RunArgs, check

__all__ = ["SERIES_POINTS", "STEP", "TIE_RTOL", "Saturation", "check_bounds", "drive"]

STEP = 20_000  # events between progress reports
SERIES_POINTS = 500  # link utilisation series: about this many windows over the run
TIE_RTOL = 0.001  # saturation: stages within 0.1% of the lowest rate tie; the most upstream one is named


def drive(engine: Engine, progress: Callable[[int], None] | None, arrived: Callable[[], int],
          stop: Callable[[], bool]) -> None:
    """Run ``engine`` in steps of ``STEP`` events, reporting ``arrived()`` after each, until it
    runs dry or ``stop()`` (an undrained run: soon after the last arrival)."""
    while True:
        n = engine.run(max_events=STEP)
        if progress is not None:
            progress(arrived())
        if n < STEP or stop():
            break


def check_bounds(rate_rps: float | None, n_requests: int | None, duration_s: float | None,
                 warmup_fraction: float) -> None:
    """Refuse a bad rate, run length or warm-up, naming the option.

    The rate and the length are ``specs.run.check``'s, in the words this entry point always used
    (``ENGINE``); the warm-up is the simulator's own."""
    check(RunArgs(rate_rps=rate_rps, n_requests=n_requests, duration_s=duration_s), ENGINE)
    if not 0 <= warmup_fraction < 1:
        raise SpecError(f"must be in [0, 1), got {warmup_fraction!r}", field="warmup_fraction")


@dataclass(frozen=True, slots=True, kw_only=True)
class Saturation:
    """Sustained throughput of a system fed above capacity (req/s).

    ``throughput_rps`` estimates Lambda_max: each stage's completion rate divided by the share
    of requests that pass through it, minimised over stages (the bottleneck's rate scaled to the
    whole request mix, which is what Lambda_max means). ``completion_rps`` is the raw rate at
    which requests reached decode; it exceeds Lambda_max when two overloaded pools each finish
    their own share at full speed.
    """

    rate_rps: float
    throughput_rps: float
    completion_rps: float
    bottleneck: str
    stage_rps: dict[str, float]
    share: dict[str, float]
