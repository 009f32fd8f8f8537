"""Studies at scale (issue 13): what a point costs against its search, a 10,000-point study on all
cores, and Dask with 2 workers against 1 (prints figures; not a test).

Run: .venv/bin/python benchmarks/bench_study.py [--points 10000] [--dask-points 2000]

Each figure is a ratio to a floor measured in the same run:
- a point's cost in a serial study (the worker's row: patch, plan, flatten) over ``api.plan.plan``
  on the same already-built specs, the search the row reports (target <= 1.5x);
- the whole-process wall time of a 10,000-point `optimize` study on every core (target < 180 s),
  and the same points' plans in one process divided by the core count (the ideal parallel floor);
- a 2-worker Dask LocalCluster against a 1-worker one on the same 2,000 points (target >= 1.6x).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent / "prfaas-plan"


def study_text(points: int) -> str:
    """A case-study grid of about ``points`` points: bandwidth x PrfaaS instances x local instances."""
    bw = max(2, points // 100)
    return ("scenario: paper-case-study\ncommand: optimize\naxes:\n"
            f"  link.bandwidth: 1Gbps..400Gbps:{bw}:log\n"
            "  clusters.prfaas.instances: 1..10:10\n  clusters.local.instances: 4..13:10\n")


def point_cost(folder: Path) -> None:
    from prfaas_plan.api import study as api_study
    from prfaas_plan.api.plan import plan
    from prfaas_plan.io.study import load_study

    f = folder / "cost.yaml"
    f.write_text(study_text(1000))
    st, _ = load_study(f)
    pts = st.points()[:400]
    w = api_study.Worker(st)
    for p in pts[:20]:  # warm: the scenario loads and checks once per worker
        w.row(p)
    t0 = time.perf_counter()
    for p in pts[20:]:
        w.row(p)
    row = (time.perf_counter() - t0) / len(pts[20:])
    specs = [w.spec(p) for p in pts[20:]]
    t0 = time.perf_counter()
    for sc in specs:
        plan(sc, methods=(sc.search.method,))
    search = (time.perf_counter() - t0) / len(specs)
    print(f"study point (serial, warm): {row * 1e3:.2f} ms; its plan alone {search * 1e3:.2f} ms "
          f"-> {row / search:.2f}x the search (target <= 1.5x)")


def whole_study(folder: Path, points: int) -> None:
    from prfaas_plan.api.study import default_workers

    f = folder / "big.yaml"
    f.write_text(study_text(points))
    out = folder / "big.parquet"
    t0 = time.perf_counter()
    res = subprocess.run([str(BIN), "study", str(f), "-o", str(out)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    print(res.stdout.strip())
    cores = default_workers()
    print(f"{points:,}-point optimize study on {cores} cores: {wall:.1f} s whole process "
          f"({points / wall:,.1f} points/s; target < 180 s)")


def dask_speedup(folder: Path, points: int) -> None:
    f = folder / "dask.yaml"
    f.write_text(study_text(points))
    walls = {}
    for n in (1, 2):
        out = folder / f"dask{n}.parquet"
        t0 = time.perf_counter()
        subprocess.run([str(BIN), "study", str(f), "-o", str(out), "--scheduler", "local", "--workers", str(n)],
                       capture_output=True, text=True, check=True)
        walls[n] = time.perf_counter() - t0
    print(f"Dask LocalCluster, {points:,} points: 1 worker {walls[1]:.1f} s, 2 workers {walls[2]:.1f} s -> "
          f"{walls[1] / walls[2]:.2f}x (target >= 1.6x)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=10_000)
    ap.add_argument("--dask-points", type=int, default=2_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        point_cost(folder)
        dask_speedup(folder, args.dask_points)
        whole_study(folder, args.points)


if __name__ == "__main__":
    main()
