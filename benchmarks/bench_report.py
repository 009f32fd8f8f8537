"""Whole-process time of `report` (issue 12: the case study's page under 3 s without --simulate) and
of `trace stats`, against the floor of `python -c 'import numpy, yaml'` measured in the same run
(prints figures; not a test).

Run: .venv/bin/python benchmarks/bench_report.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent / "prfaas-plan"
ROOT = Path(__file__).resolve().parent.parent


def timed(argv: list[str], repeat: int) -> tuple[float, float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    floor, _ = timed([sys.executable, "-c", "import numpy, yaml"], args.repeat)
    print(f"floor (python -c 'import numpy, yaml'): {floor:.3f} s")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [("report (case study)", ["report", "-o", f"{tmp}/r.html"], 3.0),
                ("report two-regions", ["report", "two-regions", "-o", f"{tmp}/t.html"], None),
                ("trace stats (Mooncake, 3,993 requests)",
                 ["trace", "stats", str(ROOT / "tests/fixtures/traces/mooncake_synthetic_trace.jsonl")], None)]
        for name, argv, target in runs:
            best, med = timed([str(BIN), *argv], args.repeat)
            goal = f"; target < {target:g} s: {'met' if best < target else 'MISSED'}" if target else ""
            print(f"{name:<40} best {best:.2f} s, median {med:.2f} s ({best / floor:.1f}x the floor){goal}")


if __name__ == "__main__":
    main()
