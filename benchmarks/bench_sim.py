"""Speed and memory of the two-cluster simulator on the paper's case study.

Usage: python benchmarks/bench_sim.py [--requests 100000] [--load 0.8] [--repeat 3]

Prints, per system (PrfaaS-PD, homogeneous PD, naive heterogeneous) at the same arrival rate,
the best of ``--repeat`` runs of simulated requests and events per CPU second
(``time.process_time``, whole ``simulate`` call: drawing, simulation, statistics). Then the peak
traced memory (``tracemalloc``) of one PrfaaS-PD run of 20,000 and of ``--requests`` requests:
the simulator keeps only requests in flight and fixed-size histograms, so the peak should not
grow with the run length.
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.systems import systems
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim.run import simulate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--load", type=float, default=0.8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    sc = load_scenario(None, Catalog.default())
    configs = systems(sc)
    rate = args.load * min(c.capacity_rps for c in configs.values())
    print(f"case study, {rate:.3f} req/s ({args.load:g} x the smallest capacity), {args.requests:,} requests")
    for name, c in configs.items():
        best = None
        for rep in range(args.repeat):
            res = simulate(sc, c, rate_rps=rate, n_requests=args.requests, rng=np.random.default_rng(rep))
            if best is None or res.cpu_s < best.cpu_s:
                best = res
        assert best is not None
        print(f"  {name:20s} {best.requests / best.cpu_s:10,.0f} requests/s  {best.events / best.cpu_s:10,.0f} "
              f"events/s  ({best.events / best.requests:.2f} events per request, {best.cpu_s:.2f} s CPU)")

    prfaas = configs["prfaas"]
    for n in (20_000, args.requests):
        gc.collect()
        tracemalloc.start()
        simulate(sc, prfaas, rate_rps=rate, n_requests=n, rng=np.random.default_rng(0))
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(f"  peak traced memory, {n:>9,} requests: {units.bytes_to_mib(peak):6.2f} MiB")


if __name__ == "__main__":
    main()
