"""Throughput of the event engine: events/s and customers/s through an M/M/c FIFO station.

Usage: python benchmarks/bench_engine.py [--customers 200000] [--repeat 3]

Prints the best of ``--repeat`` runs (wall clock of ``Engine.run`` only; drawing the random
numbers is excluded) for
- the bare engine (a callback that reschedules itself),
- an M/M/4 FifoServers station at rho = 0.75 (2 events per customer),
- an M/M/1 processor-sharing SharedLink at rho = 0.6 (2 events per transfer + cancellations).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the reference station lives with the tests

from prfaas_plan.sim.engine import Engine
from prfaas_plan.sim.stations import SharedLink, poisson_arrivals
from tests.sim.stations_ref import FifoServers, feed_arrivals


def bench_bare(n_events: int) -> tuple[float, int]:
    engine = Engine()

    def tick(k: int) -> None:
        if k:
            engine.schedule(1.0, tick, k - 1)

    chains = 100
    for i in range(chains):
        engine.schedule(i / chains, tick, n_events // chains - 1)
    start = time.perf_counter()
    engine.run()
    return time.perf_counter() - start, engine.events_processed


def bench_mmc(n: int, seed: int) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    arrivals = poisson_arrivals(rng, 3.0, n)
    service = rng.exponential(1.0, n).tolist()
    engine = Engine()
    station = FifoServers(engine, 4)
    feed_arrivals(engine, arrivals, lambda i: station.submit(i, service[i]))
    start = time.perf_counter()
    engine.run()
    return time.perf_counter() - start, engine.events_processed


def bench_ps_link(n: int, seed: int) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    arrivals = poisson_arrivals(rng, 0.6, n)
    size = rng.exponential(1e8, n).tolist()
    engine = Engine()
    link = SharedLink(engine, 1e8, window_s=10.0)
    feed_arrivals(engine, arrivals, lambda i: link.submit(i, size[i]))
    start = time.perf_counter()
    engine.run()
    return time.perf_counter() - start, engine.events_processed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--customers", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n = args.customers
    for name, run in (
        ("bare engine", lambda seed: bench_bare(5 * n)),
        ("M/M/4 FifoServers", lambda seed: bench_mmc(n, seed)),
        ("M/M/1-PS SharedLink", lambda seed: bench_ps_link(n, seed)),
    ):
        best_s, events = min(run(seed) for seed in range(args.repeat))
        per_customer = "" if name == "bare engine" else f"  {n / best_s:>12,.0f} customers/s"
        print(f"{name:<22} {events:>10,} events in {best_s:6.3f} s  {events / best_s:>12,.0f} events/s{per_customer}")


if __name__ == "__main__":
    main()
