"""Speed and memory of the two-cluster simulator on the paper's case study, at two operating points.

Usage: python benchmarks/bench_sim.py [--requests 50000] [--load 0.8] [--repeat 3] [--point own|smallest|both]

The points (``--load`` 0.8): ``own``, each system at 0.8 x its own capacity (issue 22's "simulate
default": each system near its own saturation; PrfaaS-PD at 2.581 req/s, 50,000 requests, the
point of the 250k target); ``smallest``, every system at 0.8 x the smallest capacity, 1.625 req/s
(what ``prfaas-plan simulate`` runs with no option, at its 20,000 requests; this benchmark's
earlier point). Per point and system (PrfaaS-PD, homogeneous PD, naive heterogeneous) it prints
the best of ``--repeat`` runs of simulated requests and events per CPU second
(``time.process_time``, whole ``simulate`` call: drawing, simulation, statistics), against the
floor measured in the same run: a bare heapq event loop (pop an entry, call a no-op, push the
next one, on a heap of about the simulator's size) over as many events as the run had
(requests x events per request), as requests per CPU second, and the ratio of the two. The
target (issues 13 and 22) is 250,000 requests per CPU second. Then the peak traced memory
(``tracemalloc``) of one PrfaaS-PD run of 20,000 and of 2 x ``--requests`` requests: the
simulator keeps only requests in flight and fixed-size histograms, so the peak should not grow
with the run length.

Each system is also run through the reference path (``simulate(fast=False)``: the engine and
the entities, which the control loops and replays use) in the same run; the two give the same
result bit for bit (tests/sim/test_kernel.py), so their ratio is the fast path's gain.

Figures (defaults, two cores shared with another job's tests, load 2.5-5; the floor moves by up to
2x between runs, so compare within a run), requests per CPU second, eight runs:

    fast path compiled (setup.py, Cython: sim/parts.py + sim/kernel.py as one extension):
    point     system               reference           fast                gain          fast / floor
    own       PrfaaS-PD            106,567-172,635     331,325-533,692     2.70-3.44x    0.40-0.66
              homogeneous          189,784-292,350     596,624-955,577     2.61-3.56x    0.42-0.65
              naive heterogeneous   83,253-125,691     325,125-485,451     3.04-3.93x    0.53-0.92
    smallest  PrfaaS-PD            107,404-142,853     334,201-528,857     3.09-3.77x    0.41-0.70
              homogeneous          173,143-268,007     519,106-940,707     2.62-3.74x    0.43-0.67
              naive heterogeneous   81,091-125,399     269,285-486,178     3.23-4.91x    0.54-0.84

    before (5761cfb: the kernel's closures over lists), two runs interleaved with two of the above:
    own       PrfaaS-PD 217,069-266,414 (floor ratio 0.30-0.33), homogeneous 561-623k, naive 165-183k
    smallest  PrfaaS-PD 238,818-259,693 (0.27-0.33), homogeneous 539-554k, naive 201-213k

    the same sources run as Python (no compiled build), one run: PrfaaS-PD 96,143 own and 130,042
    smallest (0.97x and 1.06x the reference path, itself all Python then; before: 1.6-1.9x), homogeneous
    242,811 and 260,243, naive heterogeneous 86,176 and 102,089. The steps are methods now (named
    pieces over the request record, free when compiled), which costs the Python fallback ~35% against
    the old closures; the reference path is as fast as before.

The events themselves are all needed (each changes shared state at its own time: a prefill start
or end moves the link's processor sharing or the decode admission queue); what is left is the
work each one does on Python objects (the heap's tuples, the source's batch).
"""

from __future__ import annotations

import argparse
import gc
import heapq
import itertools
import time
import tracemalloc

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.systems import systems
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim import fast as fast_path
from prfaas_plan.sim.run import simulate

TARGET_RPS = 250_000


def _noop() -> None:
    pass


def floor_cpu_s(n_events: int, pending: int = 12, seed: int = 0) -> float:
    """CPU seconds of a bare heapq event loop over ``n_events`` events: the entries are the
    simulator's ([time, priority, seq, callback, args]), ``pending`` of them in the heap."""
    gaps = np.random.default_rng(seed).exponential(1.0, n_events + pending).tolist()
    heap: list[list] = []
    seq = itertools.count()
    for k in range(pending):
        heapq.heappush(heap, [gaps[k], 0, next(seq), _noop, ()])
    push, pop = heapq.heappush, heapq.heappop
    t0 = time.process_time()
    for k in range(pending, n_events + pending):
        t, _, _, callback, args = pop(heap)
        callback(*args)
        push(heap, [t + gaps[k], 0, next(seq), _noop, ()])
    return time.process_time() - t0


def operating_points(configs: dict, load: float) -> dict[str, dict[str, float]]:
    """Per point, the arrival rate of each system: ``own``, ``load`` x the system's own capacity (the
    issue's "simulate default": each system near its own saturation, longer queues, more events
    per request); ``smallest``, ``load`` x the smallest capacity among them, the same rate for all
    (what ``prfaas-plan simulate`` runs with no option, and this benchmark's earlier point)."""
    smallest = min(c.capacity_rps for c in configs.values())
    return {"own": {name: load * c.capacity_rps for name, c in configs.items()},
            "smallest": {name: load * smallest for name in configs}}


def bench_system(sc, c, rate: float, n: int, repeat: int) -> str:
    """One system at one rate: the best of ``repeat`` runs of each path, against the floor."""
    best: dict[bool, object] = {}
    for rep in range(repeat):  # the two paths interleaved, so both see the same machine
        for fast in (True, False):
            res = simulate(sc, c, rate_rps=rate, n_requests=n, rng=np.random.default_rng(rep), fast=fast)
            if fast not in best or res.cpu_s < best[fast].cpu_s:
                best[fast] = res
    fast_res, ref = best[True], best[False]
    floor = min(floor_cpu_s(fast_res.events, seed=rep) for rep in range(repeat))
    rps, ref_rps, floor_rps = fast_res.requests / fast_res.cpu_s, ref.requests / ref.cpu_s, fast_res.requests / floor
    return (f"{rps:10,.0f} requests/s  {fast_res.events / fast_res.cpu_s:10,.0f} events/s  "
            f"({fast_res.events / fast_res.requests:.2f} events per request, {fast_res.cpu_s:.2f} s CPU)  "
            f"reference path {ref_rps:10,.0f} requests/s (x{rps / ref_rps:.2f})  "
            f"floor {floor_rps:10,.0f} requests/s  ratio {rps / floor_rps:.2f}  "
            f"{'meets' if rps >= TARGET_RPS else 'below'} the {TARGET_RPS:,} target")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=50_000)
    ap.add_argument("--load", type=float, default=0.8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--point", choices=("own", "smallest", "both"), default="both")
    args = ap.parse_args()

    sc = load_scenario(None, Catalog.default())
    configs = systems(sc)
    compiled = fast_path.compiled() is not None
    print(f"case study, {args.requests:,} requests; fast path "
          f"{'compiled' if compiled else 'as Python (no compiled build of these sources)'}")
    for point, rates in operating_points(configs, args.load).items():
        if args.point not in (point, "both"):
            continue
        what = "its own capacity" if point == "own" else "the smallest capacity"
        print(f" {args.load:g} x {what}:")
        for name, c in configs.items():
            print(f"  {name:20s} {rates[name]:6.3f} req/s "
                  + bench_system(sc, c, rates[name], args.requests, args.repeat))

    prfaas = configs["prfaas"]
    rate = operating_points(configs, args.load)["smallest"]["prfaas"]
    for n in (20_000, 2 * args.requests):
        gc.collect()
        tracemalloc.start()
        simulate(sc, prfaas, rate_rps=rate, n_requests=n, rng=np.random.default_rng(0))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"  peak traced memory, {n:>9,} requests: {units.bytes_to_mib(peak):6.2f} MiB")


if __name__ == "__main__":
    main()
