"""Timing of the analytic prefill and decode models (prints; not a timed test).

Run: .venv/bin/python benchmarks/bench_perf.py
Target (issue): a 10,000-length prefill grid for one model in < 50 ms in-process.
"""

from __future__ import annotations

import time

import numpy as np

from prfaas_plan import units
from prfaas_plan.core import decode, prefill
from prfaas_plan.core.timers import prefill_timer
from prfaas_plan.io.load import load_gpu, load_model
from prfaas_plan.specs.hardware import InstanceSpec

MODELS = ("internal-1t", "Kimi-Linear-48B-A3B", "MiMo-V2-Flash", "Qwen3.5-397B-A17B", "Ring-2.5-1T",
          "MiniMax-M2.5", "Qwen3-235B-A22B", "DeepSeek-V3.2")
REPEAT = 20
BATCHES = np.arange(1, 4097)


def best_of(fn, repeat: int = REPEAT) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    inst = InstanceSpec(gpu=load_gpu("H200"), gpus=8)
    grid = np.linspace(128, 131072, 10_000)
    print(f"10,000-length prefill grid on {inst.name} (best of {REPEAT}); target < 50 ms")
    print(f"{'model':24s} {'prefill_time':>14s} {'analytic timer':>15s} {'decode 1..4096':>15s}")
    for name in MODELS:
        try:
            m = load_model(name)
        except Exception as exc:  # a catalog without that model
            print(f"{name:24s} skipped ({exc})")
            continue
        timer = prefill_timer(m, inst, source="analytic")
        t_pre = best_of(lambda m=m: prefill.prefill_time(m, inst, grid))
        t_timer = best_of(lambda timer=timer: timer(grid))
        t_dec = best_of(lambda m=m: decode.decode_step(m, inst, BATCHES, 32768))
        ms = units.s_to_ms
        print(f"{name:24s} {ms(t_pre):11.2f} ms {ms(t_timer):12.2f} ms {ms(t_dec):12.2f} ms")


if __name__ == "__main__":
    main()
