"""Library API of `study`: a command at every point of a study, serially, on a local process pool
or on Dask (``api.study_engines``), each finished batch written as it lands (``io.study_results``),
resumable.

Before any point runs the study is checked whole (``api.study_check``) and its size weighed: a
few points run here first, and a study that would take more than a day at that rate is refused
unless ``confirm`` (the CLI's ``--yes``); one that takes more than ``NOTICE_S`` says so at once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any

from prfaas_plan.api.study_check import check
from prfaas_plan.api.study_engines import Dask, Pool, Serial, StudyStopped, chunk_size, chunks
from prfaas_plan.api.study_worker import STATUS, Worker, columns, evaluate, fingerprint
from prfaas_plan.errors import SpecError
from prfaas_plan.io import study_results as results
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.study import with_numbers
from prfaas_plan.specs.study import Study

__all__ = ["STATUS", "StudyRun", "StudyStopped", "Worker", "check", "columns", "default_workers", "run"]

POOL_MIN = 40  # fewer points run in this process: starting the workers costs more than they would save
DAY_S = 86_400.0  # a study estimated to take longer is refused unless confirmed
NOTICE_S = 10.0  # a study estimated to take longer says so before it runs on
MEASURE = 4  # points run here first to measure the rate (the first also loads the catalog and scenario)
MEASURE_S = 3.0  # ... or fewer, once this long has passed
Progress = Callable[[str, int, int], None]
Notice = Callable[[str], None]


@dataclass(frozen=True, slots=True, kw_only=True)
class StudyRun:
    """What ran: points in all, finished before (``--resume``), computed now, by outcome; where."""

    points: int
    resumed: int
    computed: int
    failed: int
    infeasible: int
    elapsed_s: float
    workers: int  # that ran points (Dask: the workers that joined and ran a batch, not this machine's cores)
    engine: str  # "serial", "process pool", "dask local", "dask tcp://..."
    output: Path
    table: Any  # the pyarrow table written


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def duration_text(seconds: float) -> str:
    """A duration as a person reads it: 45 s, 12 min, 3.4 h, 9.3 days."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    if seconds < 2 * DAY_S:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / DAY_S:,.1f} days"


def _measure(study: Study, todo: list[tuple[int, int]], key: str) -> tuple[list[dict[str, Any]], float]:
    """The rows of the first points, run here, and the seconds a point took (past the first, which
    loads the catalog and the scenario: the rate the rest will run at)."""
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    first = 0.0
    for cell in todo[:MEASURE]:
        rows += evaluate(study, [cell], key)
        if len(rows) == 1:
            first = time.perf_counter() - t0
        if time.perf_counter() - t0 > MEASURE_S:
            break
    total = time.perf_counter() - t0
    return rows, (total - first) / (len(rows) - 1) if len(rows) > 1 else total


def _engine(study: Study, key: str, workers: int, scheduler: str | None, points: int) -> Any:
    if scheduler is not None:
        return Dask(study, key, workers, scheduler)
    if workers > 1 and points >= POOL_MIN:
        return Pool(study, key, workers)
    return Serial(study, key)


def weigh(study: Study, remaining: int, per_point_s: float, measured: int, engine: Any, out: Path, *,
           confirm: bool, notice: Notice | None) -> None:
    """Refuse a study of more than a day at the measured rate unless confirmed; say how long a long one takes."""
    workers = max(1, engine.workers)
    eta = per_point_s * remaining / workers
    what = (f"{study.size:,} points of {study.command} on {workers} worker{'s' if workers != 1 else ''} "
            f"({engine.name}): about {duration_text(eta)} at {per_point_s:.3g} s a point (measured on {measured})")
    if eta > DAY_S and not confirm:
        raise SpecError(f"{what}, more than a day: give --yes to run it, or fewer points (samples: N)",
                        source=study.source)
    if eta > NOTICE_S and notice is not None:
        notice(f"{study.source}: {what}; rows go to {results.parts_dir(out)} as they finish, --resume "
               "continues after a stop")


def run(study: Study, out: Path, *, workers: int | None = None, scheduler: str | None = None,
        resume: bool = False, confirm: bool = False, progress: Progress | None = None,
        notice: Notice | None = None) -> StudyRun:
    """Every point of ``study`` (those not already in ``out``'s parts with ``resume``), rows to ``out``.

    ``confirm``: run a study estimated at more than a day (else SpecError); ``notice``: told, as one
    line, how long a study of more than ``NOTICE_S`` will take, before it runs on. A stop (an error,
    KeyboardInterrupt, the CLI's SIGTERM) keeps the batches written so far for ``resume``."""
    t0 = time.perf_counter()
    n = workers or default_workers()
    if scheduler is not None and scheduler != "local" and "://" not in scheduler:
        raise SpecError("a scheduler address is local or a URL such as tcp://host:8786", field="--scheduler")
    check(study)
    study = with_numbers(study, Catalog.default())
    key = fingerprint(study)
    cols = columns(study)
    done_tables = results.finished(out, key) if resume else []
    if not resume:
        results.clear_parts(out)
    done = {int(p) for t in done_tables for p in t.column("point").to_pylist()}
    remaining = study.size - len(done)
    todo = ((i, c) for i, c in enumerate(study.cells()) if i not in done)
    head = [next(todo) for _ in range(min(MEASURE, remaining))]
    tables = list(done_tables)
    finished = 0

    def write(rows: list[dict[str, Any]]) -> None:
        nonlocal finished
        results.write_part(out, len(tables) + 1, rows, cols, key)
        tables.append(results.table(rows, cols, key))
        finished += len(rows)
        if progress is not None:
            progress("study", len(done) + finished, study.size)

    with _engine(study, key, n, scheduler, remaining) as engine:
        measured, per_point = _measure(study, head, key)
        weigh(study, remaining - len(measured), per_point, len(measured), engine, out, confirm=confirm,
               notice=notice)
        if measured:
            write(measured)
        batches = chunks(chain(head[len(measured):], todo), chunk_size(remaining, engine.workers))
        for rows in engine.rows(batches):
            write(rows)
        n = len(getattr(engine, "ran_on", ())) or engine.workers
    table = results.finish(out, tables, cols, key)
    status = table.column("status").to_pylist()
    return StudyRun(points=study.size, resumed=len(done), computed=finished, failed=status.count("error"),
                    infeasible=status.count("infeasible"), elapsed_s=time.perf_counter() - t0, workers=n,
                    engine=engine.name, output=out, table=table)
