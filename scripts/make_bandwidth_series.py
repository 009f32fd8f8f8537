"""Write the bundled example bandwidth series, tests/fixtures/bandwidth/diurnal.csv (seeded numpy).

Run: .venv/bin/python scripts/make_bandwidth_series.py [--seed 11] [--output FILE]

What it is: the case study's 100 Gbps line (docs/model.md#the-case-study) over one day, one sample every
60 s (1,440 rows `time_s,bandwidth`, bandwidth in Gbps, read as `{kind: series, file: ...}`):

- a diurnal swing: the share of the line left to KV is 0.7 - 0.3 cos(2 pi (h - 14) / 24) at hour
  h, so ~100% at night (02:00) and ~40% at the daily peak (14:00);
- multiplicative log-normal jitter, sigma 0.1 (exp(sigma Z - sigma^2 / 2), mean 1), clipped at
  the line rate (a 100 Gbps line never carries more);
- three drops, jitter kept where the line is up: to 5% of the line for 10 min (09:20-09:30),
  to 0 (down) for 3 min (16:47-16:50), to 20% of the line for 30 min (20:00-20:30).

Sources: the shape (a sinusoid peaking at 14:00, the jitter, where the drops fall and how long
they last) is our choice. The magnitudes come from the issue's public figures: a public PrfaaS
reproduction measured a 14.7 Gbps median Internet path between two clusters (so a shared line
can leave KV a small part of its rate: the drops to 5% and 20%), and operators cap KV at ~20% of
a shared line (the 20% drop; the daily trough at 40% leaves KV twice that). The outage is the
limiting case of a drop.

With seed 11 (what the fixture holds) the law `{kind: series}` reads from it (every minute
weighs the same) has P50 67.75 Gbps, P10 39.95, P1 17.11, mean 67.82, and the line down 0.21% of
the time (3 of 1,440 minutes); the script prints these at the end.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

LINE_GBPS = 100.0
STEP_S = 60
DAY_S = 86_400
PEAK_HOUR, NIGHT_SHARE, PEAK_SHARE = 14.0, 1.0, 0.4
SIGMA = 0.1
# (start hh:mm, minutes, share of the line)
DROPS = (("09:20", 10, 0.05), ("16:47", 3, 0.0), ("20:00", 30, 0.20))
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "bandwidth" / "diurnal.csv"


def series(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(times s, bandwidth Gbps) of one day."""
    rng = np.random.default_rng(seed)
    t = np.arange(0, DAY_S, STEP_S, dtype=np.int64)
    hour = t / 3600.0
    mid, half = (NIGHT_SHARE + PEAK_SHARE) / 2, (NIGHT_SHARE - PEAK_SHARE) / 2
    share = mid - half * np.cos(2 * np.pi * (hour - PEAK_HOUR) / 24.0)  # the trough at the peak hour
    for start, minutes, level in DROPS:
        hh, mm = (int(x) for x in start.split(":"))
        at = (t >= hh * 3600 + mm * 60) & (t < hh * 3600 + (mm + minutes) * 60)
        share[at] = level
    jitter = np.exp(SIGMA * rng.standard_normal(len(t)) - SIGMA**2 / 2)
    return t, np.minimum(LINE_GBPS * share * jitter, LINE_GBPS)


def quantile(values: np.ndarray, q: float) -> float:
    """The right-continuous quantile of equal-weight samples, as specs.bandwidth defines it."""
    v = np.sort(values)
    return float(v[min(int(np.floor(len(v) * q + 1e-12)), len(v) - 1)])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--output", type=Path, default=OUT)
    args = ap.parse_args()
    t, gbps = series(args.seed)
    lines = [f"# one day of the case study's {LINE_GBPS:g} Gbps line at {STEP_S} s steps (Gbps): "
             f"scripts/make_bandwidth_series.py --seed {args.seed}", "time_s,bandwidth"]
    lines += [f"{int(a)},{b:.4f}" for a, b in zip(t, gbps, strict=True)]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n")
    rounded = np.array([float(f"{b:.4f}") for b in gbps])
    print(f"wrote {args.output}: {len(t)} rows; P50 {quantile(rounded, 0.5):.2f} Gbps, "
          f"P10 {quantile(rounded, 0.1):.2f}, P1 {quantile(rounded, 0.01):.2f}, mean {rounded.mean():.2f}, "
          f"down {np.mean(rounded == 0):.2%} of the time")


if __name__ == "__main__":
    main()
