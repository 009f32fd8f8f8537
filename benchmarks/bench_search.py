"""The throughput search's time and memory at ~0.1M, 1M and 7M candidates (prints figures; not a test).

The case study's curves and lengths (``load_scenario``, ``api.laws.timing``, ``search_space`` as in
bench_cli.py), its 7 splits, with more thresholds over its range and N_prfaas = 1..K. Each size
runs in a fresh subprocess, once with ``core.optimize.search`` ("after") and once with the
whole-grid algorithm it replaced ("before", the oracle kept in tests/core/test_search_memory.py),
and the two must return the same best point, top list and refined flag (compared by repr).

Per run: wall time (best of ``REPEAT``), candidates/s, and the peak RSS increase (ru_maxrss at
the end minus ru_maxrss after the imports, the scenario and the space are loaded), each also as a
ratio to the same subprocess's floor. The floor is one evaluation of the grid's bounds in chunks
of the size the search uses: its time is ``grid_bounds`` plus Lambda over every chunk once (any
exact search weighs every cell at least once; the search weighs each twice), its memory the peak
RSS increase of one such chunk (what a chunked evaluation must hold at once). The returned
result is not the floor: a few operating points and the per-threshold routing, a few hundred KiB
at 7M, it would make every ratio a measure of the interpreter's allocator rather than the search.

Run: .venv/bin/python benchmarks/bench_search.py
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SIZES = ((2048, 7), (8192, 18), (16384, 64))  # (thresholds, N_prfaas options) x 7 splits: 0.1M, 1.03M, 7.34M
REPEAT = 3
TARGET_MIB = 300  # issue 13: 7M candidates under 300 MiB peak


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def child(n_t: int, n_k: int, impl: str) -> None:
    import numpy as np

    sys.path.insert(0, str(ROOT))
    from prfaas_plan.api.laws import search_space, timing
    from prfaas_plan.core import optimize
    from prfaas_plan.core.optimize import Space, grid_bounds, search
    from prfaas_plan.core.throughput import Method, routing
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.scenario import load_scenario
    from tests.core.test_search_memory import reference_search

    sc = load_scenario(None, Catalog.default())
    t = timing(sc)
    base = search_space(sc)
    space = Space(thresholds=np.linspace(base.thresholds[0], base.thresholds[-1], n_t),
                  n_prfaas=np.arange(1, n_k + 1, dtype=np.int64), n_local=base.n_local)
    method = Method(sc.search.method)
    kw = {"method": method, "link_bytes_per_s": sc.link.usable_bytes_per_s,
          "decode_rps_per_instance": t.decode_rps_per_instance}
    rss0 = _rss_mib()

    # the floor: one chunk's bounds and Lambda (memory); every chunk once (time)
    r = routing(sc.workload.lengths, t.curves, space.thresholds, method)
    bkw = {k: v for k, v in kw.items() if k != "method"}
    chunks = optimize._chunks(space)
    optimize._lambda(grid_bounds(r, space, ts=chunks[0], **bkw))
    floor_mib = _rss_mib() - rss0
    floors = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        for ts in chunks:
            optimize._lambda(grid_bounds(r, space, ts=ts, **bkw))
        floors.append(time.perf_counter() - t0)
    floor_s = min(floors)

    run = search if impl == "after" else reference_search
    times = []
    for _ in range(REPEAT):
        t0 = time.perf_counter()
        out = run(sc.workload.lengths, t.curves, space, **kw)
        times.append(time.perf_counter() - t0)
        del out
    res = run(sc.workload.lengths, t.curves, space, **kw)
    peak_mib = _rss_mib() - rss0
    key = (res.best, res.top, res.refined) if impl == "after" else res[:3]
    print(json.dumps({"size": space.size, "chunks": len(chunks), "s": min(times), "peak_mib": peak_mib,
                      "floor_s": floor_s, "floor_mib": floor_mib, "result": repr(key)}))


def run(n_t: int, n_k: int, impl: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", str(n_t), str(n_k), impl], check=True,
                         capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    print(f"search, case study curves ({REPEAT} runs each, best time; peak = max RSS increase over the "
          "post-import RSS in a fresh subprocess; floor = one chunked evaluation of the grid's bounds)")
    last = None
    for n_t, n_k in SIZES:
        figures = {impl: run(n_t, n_k, impl) for impl in ("before", "after")}
        same = figures["before"]["result"] == figures["after"]["result"]
        for impl, f in figures.items():
            print(f"{impl:>6} {f['size']:>10,} candidates ({n_t:,} t x {n_k} N_prfaas x 7 N_p): "
                  f"{f['s'] * 1e3:8.1f} ms = {f['size'] / f['s']:13,.0f} candidates/s "
                  f"({f['s'] / f['floor_s']:4.1f}x the floor's {f['floor_s'] * 1e3:.1f} ms), "
                  f"peak {f['peak_mib']:6.1f} MiB ({f['peak_mib'] / max(f['floor_mib'], 1e-9):5.1f}x the floor's "
                  f"{f['floor_mib']:.1f} MiB, {f['chunks']} chunks)")
        b, a = figures["before"], figures["after"]
        print(f"       same best, top and refined: {same}; {b['s'] / a['s']:.1f}x faster, "
              f"{b['peak_mib'] / max(a['peak_mib'], 1e-9):.1f}x less peak memory")
        last = a
    assert last is not None
    verdict = "under" if last["peak_mib"] < TARGET_MIB else "OVER"
    print(f"7M: {last['size']:,} candidates at {last['peak_mib']:.1f} MiB peak RSS increase, {verdict} the "
          f"{TARGET_MIB} MiB target")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
    else:
        main()
