"""Library API of `study`: a command at every point of a study, serially, on a local process pool
or on Dask, each finished batch written as it lands (``io.study_results``), resumable.

A worker loads the catalog once and the scenario once per assignment of the axes a patch cannot
serve (model, hardware, workload...); every other axis is a typed patch of that spec
(``io.patch.chain``), checked once per assignment against a full load (``io.patch.agrees``):
where they differ, that assignment's points are loaded in full. A point costs its search.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prfaas_plan.api import study_rows
from prfaas_plan.errors import InfeasibleError, PrfaasError, SpecError
from prfaas_plan.io import patch
from prfaas_plan.io import study_results as results
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.study import check_value, load_point, with_numbers
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.study import Axis, Point, Study

STATUS = ("ok", "infeasible", "error")
POOL_MIN = 40  # fewer points run in this process: starting the workers costs more than they would save
Progress = Callable[[str, int, int], None]


def columns(study: Study) -> list[tuple[str, str]]:
    """The rows' columns: the point, each axis (its value as written; ``.si`` its number in SI
    units where it has one), the outcome, then the command's figures."""
    cols = [("point", "int")]
    for a in study.axes:
        cols.append((a.key, "str"))
        if any(x is not None for x in a.numbers):
            cols.append((f"{a.key}.si", "float"))
    return [*cols, ("status", "str"), ("error", "str"), *study_rows.COLUMNS[study.command]]


def fingerprint(study: Study) -> str:
    """What a study's rows depend on: its fields (not the file's path) and its scenario file's bytes."""
    h = hashlib.sha256(repr((study.scenario and Path(study.scenario).name, study.command, study.groups,
                             study.fixed, study.samples, study.seed, study.method, study.options)).encode())
    if study.scenario and Path(study.scenario).is_file():
        h.update(Path(study.scenario).read_bytes())
    return h.hexdigest()[:32]


def _finite(v: Any) -> Any:
    return None if isinstance(v, float) and not math.isfinite(v) else v


class Worker:
    """One process's state: the catalog and the loaded scenarios, reused by every point it runs."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.catalog = Catalog.default()
        self.options = dict(study.options)
        self.fixed = [*study.fixed, *((("sizing.demand", self.options["demand"]),) if "demand" in self.options
                                      else ())]
        self._names = {c for c, _ in columns(study)}
        self._groups: dict[tuple[Any, ...], list[Any]] = {}  # assignment -> [Loaded | None, checked]

    def _load(self, values: list[tuple[str, Any]]) -> tuple[ScenarioSpec, patch.Loaded]:
        return load_point(self.study.scenario, self.catalog, self.fixed, values, method=self.study.method)

    def spec(self, point: Point) -> ScenarioSpec:
        patched = [(k, v) for k, v in point.values if patch.patchable(k)]
        other = [(k, v) for k, v in point.values if not patch.patchable(k)]
        key = tuple((k, repr(v)) for k, v in other)
        group = self._groups.get(key)
        if group is None:
            try:
                group = [self._load(other)[1], None]
            except PrfaasError:  # loads only with the patched values: every point in full
                group = [None, False]
            self._groups[key] = group
        base, checked = group
        if base is not None and checked is not False:
            sc = patch.chain(base, patched) if patched else base.spec
            if checked:
                return sc
            full = self._load(list(point.values))[0]
            group[1] = patch.agrees(full, sc) if patched else True
            return full
        return self._load(list(point.values))[0]

    def row(self, point: Point) -> dict[str, Any]:
        out: dict[str, Any] = {"point": point.index}
        for (key, _), label, number in zip(point.values, point.labels, point.numbers, strict=True):
            out[key] = label
            if (key + ".si") in self._names:
                out[key + ".si"] = number
        try:
            figures = study_rows.row(self.study.command, self.spec(point), self.options)
            out |= {"status": "ok", "error": None} | {k: _finite(v) for k, v in figures.items()}
        except InfeasibleError as exc:
            out |= {"status": "infeasible", "error": str(exc)}
        except PrfaasError as exc:
            out |= {"status": "error", "error": str(exc)}
        except Exception as exc:  # a study records a point that breaks and goes on; the row says how
            out |= {"status": "error", "error": f"internal error: {type(exc).__name__}: {exc}"}
        return out


_WORKERS: dict[str, Worker] = {}  # per process, by study fingerprint


def evaluate(study: Study, cells: list[tuple[int, int]], key: str) -> list[dict[str, Any]]:
    """Rows of the points (index, cell); runs in a worker process (pool or Dask) or in this one."""
    w = _WORKERS.get(key)
    if w is None:
        w = _WORKERS[key] = Worker(study)
    return [w.row(study.point(i, c)) for i, c in cells]


def _placed(exc: SpecError, study: Study) -> SpecError:
    """An error of the study's own making, placed in the study file: its scenario, set or an axis."""
    field = exc.field or ""
    if exc.source is None and field.split(" ", 1)[0] in ("set", "axes"):
        return SpecError(exc.message, source=study.source, field=field.replace(" ", ".", 1))
    if exc.source is None and field == "SCENARIO":
        return SpecError(exc.message, source=study.source, field="scenario")
    if study.scenario is not None and exc.source == study.scenario and not field:  # the file it names
        return SpecError(f"{study.scenario}: {exc.message}", source=study.source, field="scenario")
    return exc


def check(study: Study) -> None:
    """What can be refused before a point runs, as exit 2 placed in the study file: the scenario
    loads with the study's ``set``; the command's options read; each axis names one of the
    scenario's fields (its first value loads, or fails for its value); and each value passes the
    field's schema (type, unit, bounds), names a catalog entry where it is a name and makes a
    workload law that can be (``_check_values``), a fault no other axis can mend. A value refused
    for the scenario it makes (one instance where a cluster needs two) is that point's error,
    recorded in its row."""
    w = Worker(study)
    try:
        w._load([])
        if study.command in ("latency", "simulate"):
            from prfaas_plan.specs.run import check as check_run

            check_run(study_rows.run_args(w.options))
    except SpecError as exc:
        if exc.field and exc.field.startswith("--"):  # an option, named as the study file names it
            raise SpecError(re.sub(r"--(\w+)", r"\1", exc.message), source=study.source,
                            field=f"options.{exc.field[2:]}") from None
        raise _placed(exc, study) from None
    for a in study.axes:
        try:
            w._load([(a.key, a.values[0])])
        except SpecError as exc:
            if "unknown key" in exc.message or "not a mapping" in exc.message:
                raise _placed(exc, study) from None
        except PrfaasError:
            continue
        _check_values(study, w, a)


def _check_values(study: Study, w: Worker, a: Axis) -> None:
    """Each value of axis ``a`` alone (a range's by its two ends), where no other axis can mend it:
    not when another axis is a part of it or it of another (a section and a field in it), and the
    workload's length law (its bounds, sigma, shape) only when no other axis sets a part of it."""
    others = [b.key for b in study.axes if b is not a]
    if any(k.startswith(a.key + ".") or a.key.startswith(k + ".") for k in others):
        return
    laws = not any(k.startswith("workload.input") for k in others)
    for i, v in ((0, a.values[0]), (len(a.values) - 1, a.values[-1])) if a.ranged else enumerate(a.values):
        try:
            check_value(study.scenario, w.catalog, w.fixed, a.key, v, method=study.method, laws=laws)
        except SpecError as exc:
            at = exc.field or ""
            if exc.source is None and (at == f"axes {a.key}" or at.startswith(f"axes {a.key}.")):  # in a section
                if a.labels[i] != str(v):  # a section, by the name the study gives it
                    msg = f"{a.labels[i]}: {exc.message}"
                else:
                    msg = exc.message if repr(v) in exc.message else f"{v!r}: {exc.message}"
                raise SpecError(f"value {i + 1}, {msg}", source=study.source, field=at.replace(" ", ".", 1)) from None


@dataclass(frozen=True, slots=True, kw_only=True)
class StudyRun:
    """What ran: points in all, finished before (``--resume``), computed now, by outcome; where."""

    points: int
    resumed: int
    computed: int
    failed: int
    infeasible: int
    elapsed_s: float
    workers: int
    engine: str  # "serial", "process pool", "dask local", "dask tcp://..."
    output: Path
    table: Any  # the pyarrow table written


def _chunks(todo: list[tuple[int, int]], workers: int) -> list[list[tuple[int, int]]]:
    size = max(1, min(250, math.ceil(len(todo) / max(1, workers * 8))))
    return [todo[i:i + size] for i in range(0, len(todo), size)]


def _serial(study: Study, chunks: list[list[tuple[int, int]]], key: str) -> Iterator[list[dict[str, Any]]]:
    for c in chunks:
        yield evaluate(study, c, key)


def _pool(study: Study, chunks: list[list[tuple[int, int]]], key: str, workers: int
          ) -> Iterator[list[dict[str, Any]]]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # forkserver: workers start from a clean process, not a fork of one whose threads hold locks
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["prfaas_plan.api.study"])
    with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
        futures = [ex.submit(evaluate, study, c, key) for c in chunks]
        try:
            for f in as_completed(futures):
                yield f.result()
        except BaseException:
            for f in futures:
                f.cancel()
            raise


def _dask(study: Study, chunks: list[list[tuple[int, int]]], key: str, workers: int, scheduler: str
          ) -> Iterator[list[dict[str, Any]]]:
    import logging

    from distributed import Client, LocalCluster, as_completed

    cluster = None
    try:
        if scheduler == "local":
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                                   silence_logs=logging.ERROR)
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout=5)
    except (OSError, TimeoutError) as exc:
        raise SpecError(f"cannot reach the Dask scheduler: {exc}", field=f"--scheduler {scheduler}") from None
    except ValueError as exc:  # distributed's own word on an address it cannot read (an unknown scheme)
        raise SpecError(f"not a Dask scheduler address: {exc}", field=f"--scheduler {scheduler}") from None
    try:
        remote = client.scatter(study, broadcast=True)
        futures = client.map(evaluate, [remote] * len(chunks), chunks, [key] * len(chunks), pure=False)
        for f in as_completed(futures):
            yield f.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def default_workers() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run(study: Study, out: Path, *, workers: int | None = None, scheduler: str | None = None,
        resume: bool = False, progress: Progress | None = None) -> StudyRun:
    """Every point of ``study`` (those not already in ``out``'s parts with ``resume``), rows to ``out``."""
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
    todo = [(i, c) for i, c in enumerate(study.cells()) if i not in done]
    chunks = _chunks(todo, n)
    first_part = len(done_tables) + 1
    if scheduler is not None:
        engine, stream = f"dask {scheduler}", _dask(study, chunks, key, n, scheduler)
    elif n > 1 and len(chunks) > 1 and len(todo) >= POOL_MIN:
        engine, stream = "process pool", _pool(study, chunks, key, n)
    else:
        engine, stream, n = "serial", _serial(study, chunks, key), 1
    tables = list(done_tables)
    finished = 0
    for number, rows in enumerate(stream, start=first_part):
        results.write_part(out, number, rows, cols, key)
        tables.append(results.table(rows, cols, key))
        finished += len(rows)
        if progress is not None:
            progress("study", len(done) + finished, study.size)
    table = results.finish(out, tables, cols, key)
    status = table.column("status").to_pylist()
    return StudyRun(points=study.size, resumed=len(done), computed=finished, failed=status.count("error"),
                    infeasible=status.count("infeasible"), elapsed_s=time.perf_counter() - t0, workers=n,
                    engine=engine, output=out, table=table)
