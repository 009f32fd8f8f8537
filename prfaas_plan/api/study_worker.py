"""A study's points, run: the rows' columns, and the state one process keeps while it runs them.

A worker loads the catalog once and the scenario once per assignment of the axes a patch cannot
serve (model, hardware, workload...); every other axis is a typed patch of that spec
(``io.patch.chain``), checked once per assignment against a full load (``io.patch.agrees``):
where they differ, or where no patch serves a value, that point is loaded in full.
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

from prfaas_plan.api import study_rows
from prfaas_plan.errors import InfeasibleError, PrfaasError
from prfaas_plan.io import patch
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.study import load_point
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.study import Point, Study

STATUS = ("ok", "infeasible", "error")


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

    def load(self, values: list[tuple[str, Any]]) -> tuple[ScenarioSpec, patch.Loaded]:
        return load_point(self.study.scenario, self.catalog, self.fixed, values, method=self.study.method)

    def spec(self, point: Point) -> ScenarioSpec:
        patched = [(k, v) for k, v in point.values if patch.patchable(k)]
        other = [(k, v) for k, v in point.values if not patch.patchable(k)]
        key = tuple((k, repr(v)) for k, v in other)
        group = self._groups.get(key)
        if group is None:
            try:
                group = [self.load(other)[1], None]
            except PrfaasError:  # loads only with the patched values: every point in full
                group = [None, False]
            self._groups[key] = group
        base, checked = group
        if base is not None and checked is not False:
            sc = patch.chain(base, patched) if patched else base.spec
            if sc is not None and checked:
                return sc
            full = self.load(list(point.values))[0]  # a value no patch serves: the loader's spec, or its error
            if sc is not None:
                group[1] = patch.agrees(full, sc) if patched else True
            return full
        return self.load(list(point.values))[0]

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


def on_dask(study: Study, cells: list[tuple[int, int]], key: str) -> tuple[str, list[dict[str, Any]]]:
    """``evaluate`` on a Dask worker, with the worker's address: the study counts the workers that ran it."""
    from distributed import get_worker

    return get_worker().address, evaluate(study, cells, key)


def watch_parent(pipe: Any) -> None:
    """A pool worker's initializer: a thread that ends this process as soon as ``pipe`` (the read end
    of a pipe only the study process writes to) reaches its end: the study closed it to stop, or
    died, SIGKILL included (the kernel closes a dead process's files)."""
    import contextlib
    import os
    import threading

    def wait() -> None:
        with contextlib.suppress(EOFError, OSError):
            pipe.recv()
        os._exit(0)

    threading.Thread(target=wait, name="prfaas-plan parent watch", daemon=True).start()
