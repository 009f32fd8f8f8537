"""The report's figures as SVG, drawn in a second process while the main one still computes.

matplotlib's import and the figures take about as long as every computation of the report; on two
cores they overlap. ``Figures.offer`` is ``api.report.report``'s ``ready`` hook: each result with
a figure is sent to the worker as soon as it exists, and ``Figures.svg`` collects the drawing (or
draws it here, where no worker runs: no fork on this platform, or a result that does not pickle).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from prfaas_plan.report.report_data import Sweep, TtftCdf

WORKERS = 2  # figures drawn two at a time: on two cores the drawing, not the computing, is the longer


def _warm() -> None:
    from prfaas_plan.report.plots import pyplot

    pyplot()


def _draw(draw: Callable[..., None], args: tuple[Any, ...]) -> str:
    from prfaas_plan.report.plots import to_svg

    return to_svg(draw, *args)


def job(name: str, value: Any) -> tuple[str, Callable[..., None], tuple[Any, ...]] | None:
    """(key, draw function, its arguments) of the figure a result gets; None: it gets none here."""
    from prfaas_plan.report import plots, plots_report, plots_size, plots_trace

    if name == "figure5" and value is not None:
        return "figure5", plots.figure5, (value,)
    if name == "sweep" and isinstance(value, Sweep) and value.result.feasible:
        return f"sweep:{value.setting}", plots.sweep_figure, (value.result,)
    if name == "cdf" and isinstance(value, TtftCdf) and value.curves:
        return "cdf", plots_report.ttft_cdf_figure, (value,)
    if name == "sizing" and value is not None:
        return "sizing", plots_size.size_figure, (value,)
    if name == "trace" and value is not None:
        return "trace", plots_trace.trace_figure, (value,)
    return None


class Figures:
    """SVG text per figure key; ``parallel=False`` (or no fork) draws each one when it is asked for."""

    def __init__(self, *, parallel: bool = True) -> None:
        self.parallel = parallel and sys.platform.startswith("linux")
        self.pool: Any = None
        self.futures: dict[str, Future[str]] = {}

    def __enter__(self) -> Figures:
        if self.parallel:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self.pool = ProcessPoolExecutor(max_workers=WORKERS, mp_context=multiprocessing.get_context("fork"))
            for _ in range(WORKERS):  # the workers start now (not at the first figure) and import matplotlib
                self.pool.submit(_warm)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def offer(self, name: str, value: Any) -> None:
        """Start drawing the figure of result ``name`` (``api.report``'s ``ready`` hook)."""
        found = job(name, value)
        if found is not None and self.pool is not None:
            key, draw, args = found
            self.futures[key] = self.pool.submit(_draw, draw, args)

    def svg(self, key: str, draw: Callable[..., None], *args: Any) -> str:
        """The figure ``key``: the worker's drawing if it made one, else ``draw(*args)`` drawn here."""
        future = self.futures.pop(key, None)
        if future is not None:
            from concurrent.futures.process import BrokenProcessPool
            from pickle import PicklingError

            try:
                return future.result()
            except (BrokenProcessPool, PicklingError, TypeError, AttributeError):
                pass  # the worker died or the result would not pickle: draw it here
        return _draw(draw, args)
