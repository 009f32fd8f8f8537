"""A study stopped leaves nothing behind: SIGTERM or SIGKILL of a study on a process pool (or a
local Dask cluster) ends every process of it within 5 s and closes its stdout; the finished
points are kept and --resume runs the rest. Dask without workers, or losing the last one, is
one line; the summary counts the workers that ran, not this machine's cores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app

pytestmark = pytest.mark.slow  # processes started and signalled, seconds each

BIN = Path(sys.executable).parent / "prfaas-plan"
DASK = Path(sys.executable).parent / "dask"
STUDY = """scenario: paper-case-study
axes:
  link.bandwidth: 1Gbps..400Gbps:50:log
  clusters.prfaas.instances: 1..8:8
"""
POINTS = 400
runner = CliRunner()


def _group(pgid: int) -> list[int]:
    """The live processes of a process group (a zombie is dead: it only waits to be reaped)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(d))
    return out


def _parts(out: Path) -> int:
    return len(list(Path(f"{out}.parts").glob("part-*.parquet")))


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path]:
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    out = tmp_path / "r.parquet"
    proc = subprocess.Popen([str(BIN), "study", str(study), "-o", str(out), *extra], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)  # its own group: ours to count
    deadline = time.monotonic() + 120
    while _parts(out) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the measured points' part, then two batches of the workers
    assert proc.poll() is None and _parts(out) >= 3, proc.stderr.read() if proc.poll() is not None else "slow"
    return proc, out


def _stop(proc: subprocess.Popen, sig: int) -> tuple[float, bytes, bytes]:
    """Send ``sig``; the seconds until no process of the study is left and its stdout has closed."""
    workers = _group(proc.pid)
    assert len(workers) >= 3, workers  # the study, and its workers (and the forkserver) running points
    t0 = time.monotonic()
    os.kill(proc.pid, sig)
    try:
        out, err = proc.communicate(timeout=5)  # returns once stdout and stderr are closed by every holder
    except subprocess.TimeoutExpired:
        left = _group(proc.pid)
        for pid in left:  # ours: the test started them
            os.kill(pid, signal.SIGKILL)
        pytest.fail(f"stdout still open 5 s after the signal; left: {left}")
    while _group(proc.pid) and time.monotonic() - t0 < 5:
        time.sleep(0.02)
    gone = time.monotonic() - t0
    assert not _group(proc.pid), f"left after 5 s: {_group(proc.pid)}"
    return gone, out, err


@pytest.mark.parametrize("engine", [["--workers", "2"], ["--workers", "2", "--scheduler", "local"]],
                         ids=["pool", "dask-local"])
def test_sigterm_stops_every_worker_keeps_the_points_and_resume_finishes(tmp_path, engine):
    proc, out = _start(tmp_path, *engine)
    gone, _, err = _stop(proc, signal.SIGTERM)
    assert gone < 5 and proc.returncode == 143
    lines = err.decode().strip().splitlines()
    assert lines[-1] == (f"terminated (SIGTERM): the finished points are in {out}.parts; run again with --resume "
                         "to finish the rest"), lines
    kept = sum(pq.read_table(p).num_rows for p in Path(f"{out}.parts").glob("part-*.parquet"))
    assert 0 < kept < POINTS
    res = subprocess.run([str(BIN), "study", str(tmp_path / "study.yaml"), "-o", str(out), "--workers", "2",
                          "--resume"], capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{POINTS - kept:,} run in" in res.stdout and f"{kept:,} finished before" in res.stdout
    assert pq.read_table(out).column("point").to_pylist() == list(range(POINTS))


def test_sigkill_leaves_no_worker_forkserver_or_tracker(tmp_path):
    proc, out = _start(tmp_path, "--workers", "2")
    gone, _, err = _stop(proc, signal.SIGKILL)
    assert gone < 5 and proc.returncode == -signal.SIGKILL
    assert b"Warning" not in err and b"Traceback" not in err  # the tracker's note stays off the user's stderr
    assert _parts(out) >= 3


# --- Dask: workers counted, none, or lost --------------------------------------------------------


@pytest.fixture
def scheduler(tmp_path):
    """A Dask scheduler of our own (its own process group), and a way to start workers on it."""
    info = tmp_path / "scheduler.json"
    started = [subprocess.Popen([str(DASK), "scheduler", "--scheduler-file", str(info), "--port", "0",
                                 "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)]
    deadline = time.monotonic() + 60
    while not info.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.2)
    address = json.loads(info.read_text())["address"]

    def worker() -> subprocess.Popen:
        p = subprocess.Popen([str(DASK), "worker", address, "--nworkers", "1", "--nthreads", "1",
                              "--no-dashboard"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
        started.append(p)
        return p

    yield address, worker
    for p in started:
        for pid in _group(p.pid):
            os.kill(pid, signal.SIGKILL)
        p.wait()


def _wait_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout=30) as c:
        c.wait_for_workers(n, timeout=60)


def test_a_scheduler_without_workers_is_one_line(tmp_path, scheduler, monkeypatch):
    from prfaas_plan.api import study_engines

    monkeypatch.setattr(study_engines, "DASK_WAIT_S", 2.0)
    address, _ = scheduler
    study = tmp_path / "study.yaml"
    study.write_text(STUDY)
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.parquet"), "--scheduler", address])
    assert res.exit_code == 2
    assert res.output.strip() == (f"error: --scheduler {address}: the Dask scheduler has no workers (none joined "
                                  f"in 2 s): start some, `dask worker {address}`, and run again")
    assert not Path(f"{tmp_path / 'r.parquet'}.parts").exists()


def test_the_summary_counts_the_workers_that_ran_and_losing_the_last_one_keeps_the_points(tmp_path, scheduler):
    address, worker = scheduler
    first = worker()
    _wait_workers(address, 1)
    study = tmp_path / "study.yaml"
    study.write_text(STUDY.replace(":50:log", ":6:log"))  # 48 points, to count the workers
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "small.parquet"), "--workers", "2",
                              "--scheduler", address])
    assert res.exit_code == 0, res.output
    assert f"(dask {address}, 1 worker)" in res.output  # one worker joined: not this machine's 2 cores
    proc, out = _start(tmp_path, "--scheduler", address)
    for pid in _group(first.pid):  # the last worker, killed mid-study
        os.kill(pid, signal.SIGKILL)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1
    lines = err.decode().strip().splitlines()
    assert len(lines) <= 2 and lines[0].startswith((f"{tmp_path / 'study.yaml'}: {POINTS:,} points", "error"))
    assert lines[-1].startswith(f"error: --scheduler {address}: ") and lines[-1].endswith(
        f"the finished points are in {out}.parts; run again with --resume to finish the rest"), lines
    kept = sum(pq.read_table(p).num_rows for p in Path(f"{out}.parts").glob("part-*.parquet"))
    worker()
    _wait_workers(address, 1)
    res = subprocess.run([str(BIN), "study", str(study), "-o", str(out), "--scheduler", address, "--resume"],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert f"{kept:,} finished before" in res.stdout
    assert pq.read_table(out).column("point").to_pylist() == list(range(POINTS))
