"""The analytic TTFT against the simulator on whole public traces, as `latency --trace` checks it.

Usage: python benchmarks/bench_traces.py TRACE [TRACE ...] [--loads 0.3,0.5,0.8]

For each trace and load (a fraction of the smallest capacity among the three systems of the
bundled case study), prints each system's analytic P90 TTFT (``core.arrivals``: each window of
the trace at its own rate, G/G/c waits with the gaps' SCV measured inside the windows), the P90 of
the whole trace replayed through the simulator, their ratio, and whether `latency` says the
analytic model holds (within 25%) or shows the simulated value instead. The traces are the
published files, fetched by the user (nothing downloads here): the Azure LLM inference 2023 code
and conversation traces, `data/AzureLLMInferenceTrace_code.csv` and `..._conv.csv` of
github:Azure/AzurePublicDataset@b469a113cedca53ddc3bdea71a143dc4b7d8700c; the Mooncake traces of
github:kvcache-ai/Mooncake `FAST25-release/traces`.

Figures (two cores, 2026-12-03; P90 analytic / simulated, s):

    trace (requests, peak-to-mean, gaps' SCV)   load   PrfaaS-PD            homogeneous          naive heterogeneous
    Azure code 2023 (8,819, 4.08, 22.1)         0.3    0.753 / 3.03 no      1.298 / 4.66 no      unstable / 20.9 no
                                                0.5    4.407 / 6.04 no      unstable / 13.6 no   unstable / 40.2 no
                                                0.8    unstable / 14.2 no   unstable / 24.3 no   unstable / 83.1 no
    Azure conversation 2023 (19,366, 1.50, 1.06) 0.3   0.609 / 0.610 yes    0.888 / 0.897 yes    0.542 / 0.555 yes
                                                0.5    0.610 / 0.614 yes    0.900 / 0.924 yes    0.570 / 0.617 yes
                                                0.8    0.671 / 0.872 yes    1.047 / 1.177 yes    unstable / 44.0 no

Before the windows and the measured SCV (Poisson at the mean rate), the code trace at load 0.5 gave
0.737 / 6.04 for PrfaaS-PD and 1.182 / 13.6 for homogeneous PD, in silence.
"""

from __future__ import annotations

import argparse
import time

from prfaas_plan.api.latency import latency
from prfaas_plan.api.sim import trace_check
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--loads", default="0.3,0.5,0.8")
    args = ap.parse_args()
    for path in args.traces:
        sc = load_scenario(None, Catalog.default(), trace=path)
        p = sc.workload.rate_profile
        print(f"{path}: {len(sc.workload.trace):,} requests, rate peak-to-mean {p.peak_to_mean:.2f} over "
              f"{p.windows} windows of {p.bin_s:g} s, gaps' SCV {p.arrival_scv:.2f} inside them")
        for load in (float(x) for x in args.loads.split(",")):
            t0 = time.perf_counter()
            r = trace_check(sc, latency(sc, load=load))
            c = r.trace_check
            assert c is not None
            cells = []
            for name, (_, p90) in c.simulated.items():
                a = r.systems[name].ttft_p90_s
                shown = f"{a:.3f}" if a is not None else "unstable"
                cells.append(f"{name} {shown} / {p90:.3f} {'holds' if c.holds[name] else 'does not hold'}")
            print(f"  load {load:g} ({r.rate_rps:.3f} req/s, {time.perf_counter() - t0:.1f} s): " + "; ".join(cells))


if __name__ == "__main__":
    main()
