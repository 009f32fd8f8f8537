"""Where a study's points run: in this process, on a local process pool, or on Dask.

Each engine is a context manager whose ``rows(chunks)`` yields the rows of each finished batch.
Leaving it, on any exception (an error, Ctrl-C, the CLI's SIGTERM handler), stops its workers at
once: a pool worker watches a pipe whose other end only this process holds, and exits when it
closes, as it does when this process closes it or dies (SIGKILL too: the kernel closes it; a
pipe rather than prctl's PR_SET_PDEATHSIG, which is Linux's alone, and rather than polling the
parent's pid, which the forkserver stands between). A Dask scheduler with no worker is one line
(exit 2); losing the last worker mid-study stops it (``StudyStopped``, exit 1) with the finished
batches kept for ``--resume``.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from itertools import islice
from typing import Any

from prfaas_plan.api.study_worker import evaluate, on_dask, watch_parent
from prfaas_plan.errors import PrfaasError, SpecError
from prfaas_plan.specs.study import Study

Chunk = list[tuple[int, int]]
Rows = list[dict[str, Any]]
DASK_WAIT_S = 10.0  # how long a Dask scheduler may go without a worker: at the start, or having lost its last
IN_FLIGHT = 4  # batches queued per worker: enough to keep it busy, few to cancel on a stop


class StudyStopped(PrfaasError):
    """The study stopped before its end for a reason outside its inputs (its workers are gone);
    the batches finished so far are kept, and ``--resume`` runs the rest. Exit code 1."""

    exit_code = 1


def chunk_size(points: int, workers: int) -> int:
    return max(1, min(250, math.ceil(points / max(1, workers * 8))))


def chunks(todo: Iterable[tuple[int, int]], size: int) -> Iterator[Chunk]:
    """``todo`` in batches of ``size``, lazily (a study of millions of points is never a list here)."""
    it = iter(todo)
    while batch := list(islice(it, size)):
        yield batch


class Serial:
    """Every point in this process."""

    name = "serial"

    def __init__(self, study: Study, key: str) -> None:
        self.study, self.key, self.workers = study, key, 1

    def __enter__(self) -> Serial:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def rows(self, batches: Iterable[Chunk]) -> Iterator[Rows]:
        for c in batches:
            yield evaluate(self.study, c, self.key)


class Pool:
    """A local process pool (forkserver: workers start from a clean process, not a fork of one whose
    threads hold locks), at most ``IN_FLIGHT`` batches per worker queued at a time."""

    name = "process pool"

    def __init__(self, study: Study, key: str, workers: int) -> None:
        self.study, self.key, self.workers = study, key, workers

    def __enter__(self) -> Pool:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["prfaas_plan.api.study_worker"])
        with _quiet_children():
            from multiprocessing import forkserver, resource_tracker

            resource_tracker.ensure_running()
            forkserver.ensure_running()
        self._watch, self._alive = ctx.Pipe(duplex=False)  # the workers read; only this process writes
        self._ex = ProcessPoolExecutor(max_workers=self.workers, mp_context=ctx, initializer=watch_parent,
                                       initargs=(self._watch,))
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:  # stopped: every worker exits now, mid-point, rather than at its batch's end
            self._alive.close()
            self._ex.shutdown(wait=False, cancel_futures=True)
        self._ex.shutdown(wait=True, cancel_futures=True)
        self._alive.close()
        self._watch.close()

    def rows(self, batches: Iterable[Chunk]) -> Iterator[Rows]:
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        it = iter(batches)
        pending: set[Any] = set()
        finished = 0
        while True:
            for c in islice(it, max(0, self.workers * IN_FLIGHT - len(pending))):
                pending.add(self._ex.submit(evaluate, self.study, c, self.key))
            if not pending:
                return
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                try:
                    rows = f.result()
                except BrokenProcessPool:
                    raise StudyStopped(f"a worker process died (killed, or out of memory) after {finished:,} "
                                       "points of this run") from None
                finished += len(rows)
                yield rows


def _dask_failure(exc: Exception) -> str:
    """Why a batch did not come back from Dask, in words (not the exception's class or task key)."""
    from concurrent.futures import CancelledError

    if isinstance(exc, CancelledError):
        return "the Dask cluster dropped a batch (its worker left)"
    if type(exc).__name__ == "KilledWorker":
        return "a batch ended the Dask worker running it, on every worker that took it"
    return "a batch failed on the Dask cluster"


@contextmanager
def _quiet_children() -> Iterator[None]:
    """The processes started here (the forkserver and the resource tracker, and through the
    forkserver every pool worker) with stdout and stderr on the null device: they never hold the
    user's pipe open (``study ... | tee log`` ends with the study), and their Python messages (a
    warning in a point, a worker started as the study stops, the tracker's note after a SIGKILL)
    never reach the user; a worker's rows and errors come back through the pool."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


class Dask:
    """A Dask cluster: a ``LocalCluster`` of ``workers`` processes, or a scheduler's address; its
    ``workers`` are those that joined (counted at the start, then those that ran a batch)."""

    def __init__(self, study: Study, key: str, workers: int, scheduler: str) -> None:
        self.study, self.key, self.workers, self.scheduler = study, key, workers, scheduler
        self.name = f"dask {scheduler}"
        self.ran_on: set[str] = set()
        self._pids: list[int] = []
        self._cluster: Any = None
        self._client: Any = None

    def _where(self) -> str:
        return f"--scheduler {self.scheduler}"

    def __enter__(self) -> Dask:
        import logging

        from distributed import Client, LocalCluster

        try:
            if self.scheduler == "local":
                with _quiet_children():  # its workers, as a pool's, off the user's stdout and stderr
                    from multiprocessing import resource_tracker

                    resource_tracker.ensure_running()
                    self._cluster = LocalCluster(n_workers=self.workers, threads_per_worker=1, processes=True,
                                                 dashboard_address=None, silence_logs=logging.ERROR)
                self._client = Client(self._cluster)
                self._pids = list(self._client.run(os.getpid).values())  # ours, to stop at once
            else:
                self._client = Client(self.scheduler, timeout=5)
        except (OSError, TimeoutError) as exc:
            raise SpecError(f"cannot reach the Dask scheduler: {exc}", field=self._where()) from None
        except ValueError as exc:  # distributed's own word on an address it cannot read (an unknown scheme)
            raise SpecError(f"not a Dask scheduler address: {exc}", field=self._where()) from None
        try:
            self._client.wait_for_workers(1, timeout=DASK_WAIT_S)
        except (OSError, TimeoutError):
            self.__exit__(None)
            raise SpecError(f"the Dask scheduler has no workers (none joined in {DASK_WAIT_S:g} s): start some, "
                            f"`dask worker {self.scheduler}`, and run again", field=self._where()) from None
        self.workers = len(self._client.nthreads())
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:  # stopped: a local cluster's workers end now, not at their batch's end
            for pid in self._pids:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        if self._client is not None:
            self._client.close()
        if self._cluster is not None:
            self._cluster.close()

    def _stopped(self, done: int, why: str) -> StudyStopped:
        return StudyStopped(f"{self._where()}: {why} after {done:,} points of this run")

    def rows(self, batches: Iterable[Chunk]) -> Iterator[Rows]:
        from distributed import as_completed

        try:
            remote = self._client.scatter(self.study, broadcast=True)
        except (OSError, TimeoutError):
            raise self._stopped(0, "the Dask cluster lost its workers") from None
        it = iter(batches)
        ac = as_completed()
        queued = finished = 0
        alone_since: float | None = None
        while True:
            for c in islice(it, max(0, max(1, self.workers) * IN_FLIGHT - queued)):
                ac.add(self._client.submit(on_dask, remote, c, self.key, pure=False))
                queued += 1
            if ac.is_empty():
                return
            done = ac.next_batch(block=False)
            if not done:  # nothing finished: are there still workers to finish it?
                alone_since = self._alone(alone_since, finished)
                time.sleep(0.1)
                continue
            alone_since = None
            for f in done:
                queued -= 1
                try:
                    address, rows = f.result()
                except Exception as exc:  # the cluster's own failure (a worker killed thrice, the scheduler gone)
                    raise self._stopped(finished, _dask_failure(exc)) from None
                self.ran_on.add(address)
                finished += len(rows)
                yield rows

    def _alone(self, since: float | None, finished: int) -> float | None:
        """When the cluster was last seen without a worker (None: it has some); raises past the wait."""
        try:
            n = len(self._client.nthreads())
        except (OSError, TimeoutError):
            raise self._stopped(finished, "lost the Dask scheduler") from None
        if n:
            return None
        now = time.monotonic()
        if since is not None and now - since > DASK_WAIT_S:
            raise self._stopped(finished, f"the last Dask worker left (none for {DASK_WAIT_S:g} s)")
        return since if since is not None else now
