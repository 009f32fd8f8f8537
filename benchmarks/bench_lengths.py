"""Speed of the length distributions and of the Mooncake trace parse + prefix-cache replay.

Usage: python benchmarks/bench_lengths.py [--thresholds 2000] [--repeat 5] [--trace PATH]

Prints the best of ``--repeat`` runs for
- building the paper's truncated log-normal (its quadrature grid is built in the constructor),
- p, l_long, l_short at ``--thresholds`` values of t (closed forms),
- E[T(L) | L > t] and E[T(L) | L <= t] at the same t for a T_prefill-like polynomial (grid quadrature),
- the same on an ``Empirical`` distribution of the trace's uncached lengths,
- sampling 1e6 lengths,
- parsing the Mooncake trace and replaying it through an unbounded and a bounded LRU cache.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from prfaas_plan.core.lengths import TruncatedLogNormal
from prfaas_plan.core.trace import replay_prefix_cache
from prfaas_plan.io.trace import load_mooncake_trace

DEFAULT_TRACE = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "traces" / (
    "mooncake_synthetic_trace.jsonl")


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def prefill_s(length: np.ndarray) -> np.ndarray:
    return 0.389 + 2.0e-5 * length + 1.5e-10 * length * length


def row(label: str, seconds: float) -> None:
    print(f"  {label:<58s} {seconds * 1e3:9.3f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--thresholds", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    args = parser.parse_args()
    n, rep = args.thresholds, args.repeat

    dist = TruncatedLogNormal.paper()
    t = np.linspace(128.0, 131_072.0, n)
    print(f"TruncatedLogNormal.paper(), {len(dist._grid.masses)} grid cells, {n} thresholds:")
    row("construct (validation + quadrature grid)", best(TruncatedLogNormal.paper, rep))
    row("tail_prob + mean_above + mean_below (closed forms)",
        best(lambda: (dist.tail_prob(t), dist.mean_above(t), dist.mean_below(t)), rep))
    row("expect_above(T_prefill, t)", best(lambda: dist.expect_above(prefill_s, t), rep))
    row("expect_below(T_prefill, t)", best(lambda: dist.expect_below(prefill_s, t), rep))
    row("expect_above(T_prefill, 19400) (scalar)", best(lambda: dist.expect_above(prefill_s, 19_400), rep))
    rng = np.random.default_rng(0)
    row("sample 1,000,000 lengths", best(lambda: dist.sample(rng, 1_000_000), rep))
    p, l_long, l_short = dist.tail_prob(19_400), dist.mean_above(19_400), dist.mean_below(19_400)
    print(f"  t = 19,400: p = {p:.4f}, l_long = {l_long:,.1f}, l_short = {l_short:,.1f}, mean = {dist.mean:,.1f}")

    if not args.trace.exists():
        print(f"trace {args.trace} not found; skipping the trace benchmarks")
        return
    print(f"Mooncake trace {args.trace.name}:")
    row("load_mooncake_trace", best(lambda: load_mooncake_trace(args.trace), rep))
    trace = load_mooncake_trace(args.trace)
    row("replay_prefix_cache, unbounded", best(lambda: replay_prefix_cache(trace, capacity_blocks=None), rep))
    row("replay_prefix_cache, 20,000 blocks (LRU)",
        best(lambda: replay_prefix_cache(trace, capacity_blocks=20_000), rep))
    free = replay_prefix_cache(trace, capacity_blocks=None)
    bounded = replay_prefix_cache(trace, capacity_blocks=20_000)
    print(f"  {len(trace)} requests, mean input {trace.input_tokens.mean():,.1f} tokens; hit rate "
          f"unbounded {free.hit_rate:.4f} (blocks {free.block_hit_rate:.4f}), "
          f"20,000 blocks {bounded.hit_rate:.4f}")
    emp = free.uncached_distribution()
    te = np.linspace(1.0, float(emp.hi), n)
    print(f"Empirical of uncached lengths ({emp.values.size} values, mean {emp.mean:,.1f}), {n} thresholds:")
    row("construct", best(free.uncached_distribution, rep))
    row("tail_prob + mean_above + mean_below", best(lambda: (emp.tail_prob(te), emp.mean_above(te),
                                                               emp.mean_below(te)), rep))
    row("expect_above(T_prefill, t)", best(lambda: emp.expect_above(prefill_s, te), rep))


if __name__ == "__main__":
    main()
