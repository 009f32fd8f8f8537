"""Whole-process and in-process timings of the main commands (prints figures; not a test).

Run: .venv/bin/python benchmarks/bench_cli.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent / "prfaas-plan"
FLOOR = "import numpy, yaml"  # issue 13's floor: Python with the two libraries every command needs
TARGET = 3.0  # issue 13: `optimize` (the case study) whole process within 3x the floor


def wall(args: list[str], repeat: int = 5, *, cache: str | None = None) -> tuple[float, float]:
    """Best and median whole-process time of ``prfaas-plan args``: with ``cache`` a folder of the
    spec cache (io/cache.py), else each run in a fresh empty one (cold)."""
    times = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as fresh:
            env = {**os.environ, "PRFAAS_PLAN_CACHE": cache or fresh}
            t0 = time.perf_counter()
            subprocess.run([str(BIN), *args], check=True, capture_output=True, env=env)
            times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def warm_wall(args: list[str], repeat: int = 5) -> tuple[float, float]:
    """``wall`` with a cache one earlier run of the same command filled (what a user sees again)."""
    with tempfile.TemporaryDirectory() as warm:
        env = {**os.environ, "PRFAAS_PLAN_CACHE": warm}
        subprocess.run([str(BIN), *args], check=True, capture_output=True, env=env)
        return wall(args, repeat, cache=warm)


def edited_wall(args: list[str], repeat: int = 5) -> float:
    """Best whole-process time of ``args`` with a ``--set`` value not run before, on a cache one run
    of ``args`` filled: the scenario's entry is built again (pydantic), its length distribution is
    found in its own entry (io.cache.cached_value, no scipy), as after an edit elsewhere in a scenario."""
    with tempfile.TemporaryDirectory() as warm:
        env = {**os.environ, "PRFAAS_PLAN_CACHE": warm}
        subprocess.run([str(BIN), *args], check=True, capture_output=True, env=env)
        times = []
        for k in range(repeat):
            t0 = time.perf_counter()
            subprocess.run([str(BIN), *args, "--set", f"link.bandwidth={90 + k}Gbps"], check=True, capture_output=True,
                           env=env)
            times.append(time.perf_counter() - t0)
        return min(times)


def floor(repeat: int = 5) -> float:
    """The same machine's floor, measured in the same run: Python starting and importing numpy and
    yaml, which every command needs; the commands are reported as multiples of it."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", FLOOR], check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    if os.environ.get("PYTHONDONTWRITEBYTECODE"):
        print("note: PYTHONDONTWRITEBYTECODE is set, so prfaas_plan's modules are compiled on every run (an "
              "installed wheel has them compiled; numpy's, in the floor, are)")
    base = floor()
    print(f"floor (python -c '{FLOOR}'): {base:.3f} s")
    commands = (["kv-rate", "internal-1t"], ["optimize"], ["optimize", "--format", "json"],
                ["latency", "--load", "0.7"], ["optimize", "two-regions"])
    for args in commands:
        best, med = warm_wall(args)
        cold, _ = wall(args)
        print(f"prfaas-plan {' '.join(args):<28} whole process: warm cache best {best:.3f} s "
              f"({best / base:.1f}x the floor), median {med:.3f} s; cold cache best {cold:.3f} s ({cold / base:.1f}x)")
        if args == ["optimize"]:
            edited = edited_wall(args)
            print(f"  optimize after an edit elsewhere in the scenario (a new --set link.bandwidth value): best "
                  f"{edited:.3f} s ({edited / base:.2f}x the floor)")
            for name, t in (("cold", cold), ("warm", best)):
                print(f"  optimize {name}: {t / base:.2f}x the floor, target {TARGET:.0f}x: "
                      f"{'met' if t / base <= TARGET else 'missed'}")

    from prfaas_plan.api.laws import search_space, timing
    from prfaas_plan.core.optimize import search
    from prfaas_plan.core.throughput import Method
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.scenario import load_scenario

    sc = load_scenario(None, Catalog.default())
    t = timing(sc)
    space = search_space(sc)
    for method in (Method.PAPER, Method.EXACT):
        runs = []
        for _ in range(7):
            t0 = time.perf_counter()
            search(sc.workload.lengths, t.curves, space, method=method, link_bytes_per_s=sc.link.usable_bytes_per_s,
                   decode_rps_per_instance=t.decode_rps_per_instance)
            runs.append(time.perf_counter() - t0)
        best = min(runs)
        print(f"search ({method}): {space.size:,} candidates (t x N_p) in {best * 1e3:.1f} ms "
              f"= {space.size / best:,.0f} candidate evaluations/s")
    sized = load_scenario(None, Catalog.default(), overrides=["search.size_prfaas=true",
                                                               "search.max_prfaas_instances=16"])
    space = search_space(sized)
    t0 = time.perf_counter()
    search(sized.workload.lengths, t.curves, space, method=Method.EXACT, link_bytes_per_s=sc.link.usable_bytes_per_s,
           decode_rps_per_instance=t.decode_rps_per_instance)
    dt = time.perf_counter() - t0
    print(f"search (exact, N_prfaas 1..16): {space.size:,} candidates in {dt * 1e3:.1f} ms "
          f"= {space.size / dt:,.0f} candidate evaluations/s")

    topology()


def topology() -> None:
    """The joint search of the two-regions topology: candidates weighed per second, and how its
    time grows with the sites (the sum of their grids, not the product)."""
    from dataclasses import replace

    import numpy as np

    from prfaas_plan.api.laws import search_space
    from prfaas_plan.api.topology import site_models
    from prfaas_plan.core import joint
    from prfaas_plan.core.throughput import Method
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.scenario import load_scenario

    sc = load_scenario("two-regions", Catalog.default())
    models, _ = site_models(sc)
    space = search_space(sc)
    for n_sites in (2, 4, 8):
        ms = [replace(models[i % 2], name=f"s{i}", link=f"p->s{i}", demand_share=1 / n_sites) for i in range(n_sites)]
        for method in (Method.PAPER, Method.EXACT):
            runs = []
            for _ in range(5):
                t0 = time.perf_counter()
                res = joint.search(ms, space.thresholds, np.array([8 * n_sites // 2]), method=method)
                runs.append(time.perf_counter() - t0)
            best = min(runs)
            print(f"joint search ({method}, {n_sites} sites): {res.evaluations:,} candidates (sum of the sites' "
                  f"grids; their product is ~{float(res.candidates[0].size) ** n_sites:.1e}) in {best * 1e3:.1f} ms "
                  f"= {res.evaluations / best:,.0f} candidates/s")


TRACE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "traces" / "mooncake_synthetic_trace.jsonl"


def sweeps(repeat: int = 3) -> None:
    """A 20-point sweep of link.bandwidth, on the case study and on a trace: whole process, and in
    process with the scenario loaded once and patched per point (api.sweep.sweep) against reloaded
    per point (api.sweep.sweep with reload=True, which also replays the trace's prefix cache per point)."""
    from prfaas_plan.api.sweep import sweep
    from prfaas_plan.io.load import Catalog

    base = floor()
    catalog = Catalog.default()
    ranged = "link.bandwidth=1Gbps..100Gbps:20"
    for name, trace in (("case study", None), ("trace", str(TRACE))):
        args = ["sweep", "--set", ranged, "--log", *(["--trace", trace] if trace else [])]
        best, _ = warm_wall(args, repeat)
        print(f"prfaas-plan sweep ({name}, 20 points) whole process: best {best:.3f} s ({best / base:.1f}x the floor)")
        timed = {}
        for reload in (True, False):
            sweep(None, catalog, overrides=[ranged], trace=trace, log=True, reload=reload)  # warm: imports, cache
            runs = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                sweep(None, catalog, overrides=[ranged], trace=trace, log=True, reload=reload)
                runs.append(time.perf_counter() - t0)
            timed[reload] = min(runs)
        before, after = timed[True], timed[False]
        print(f"sweep ({name}, 20 points) in process: reloaded per point {before:.3f} s ({before / base:.1f}x the "
              f"floor), patched {after:.3f} s ({after / base:.1f}x the floor), {before / after:.1f}x faster")


# `size` at the scale the issue sets: 4 GPU kinds for each role, up to 64 instances, 5 link tiers
SIZE_WIDE = ["size", "--set", "sizing.prfaas.hardware=[H200, B200, H100, MI300X]",
             "--set", "sizing.local.hardware=[H20, H200, B200, MI300X]", "--set", "sizing.prfaas.max_instances=64",
             "--set", "sizing.local.max_instances=64", "--set", "search.method=paper"]


def sizing(repeat: int = 5) -> None:
    """`size` whole process (4 kinds x 2 roles x up to 64 instances x 5 tiers) and the kernel's rate:
    (kind, t) candidates weighed per second of one solve, in process."""
    from prfaas_plan.api.size import size, variant
    from prfaas_plan.api.size_grid import laws
    from prfaas_plan.api.size_solve import solve
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.scenario import load_scenario

    base = floor()
    best, med = warm_wall(SIZE_WIDE, repeat)
    print(f"prfaas-plan size (4 kinds x 2 roles, <= 64 instances, 5 tiers) whole process: best {best:.3f} s "
          f"({best / base:.1f}x the floor), median {med:.3f} s")
    sc = load_scenario(None, Catalog.default(), overrides=[a for a in SIZE_WIDE[2::2]])
    lw = laws(sc, sc.sizing)
    runs = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        solve(lw, variant(lw), sc.sizing.demand_rps)
        runs.append(time.perf_counter() - t0)
    one = min(runs)
    t0 = time.perf_counter()
    r = size(sc)
    whole = time.perf_counter() - t0
    print(f"size solve: {lw.candidates:,} (kind, t) candidates in {one * 1e3:.1f} ms = {lw.candidates / one:,.0f} "
          f"candidates/s; the whole size (every baseline, tier and demand point) {whole * 1e3:.0f} ms in process; "
          f"the instance counts follow from ceilings, so the {r.candidates:,} cells stand for "
          f"~{lw.candidates * 64 ** 3 * 5:.1e} enumerated fleets")


if __name__ == "__main__":
    main()
    sweeps()
    sizing()
