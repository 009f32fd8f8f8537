"""Where a prefill time comes from: a measured profile when one exists, else the analytic model.

Everything that needs T_prefill(l) (kv-rate, the throughput model, the simulator) goes through
``core.timers.prefill_timer`` so that all of them use the same numbers and can say which source
they used; this module holds the timer type and the sources.

Sources, in the order ``auto`` tries them:

- ``measured``: the model's profile for this GPU type and GPU count;
- ``scaled``: a profile measured on another instance X, times the analytic ratio
  T_Y(l) / T_X(l) for this instance Y (same stack calibration on both). A Y at least as fast as X
  on every peak then never models slower than X's measurement, as the analytic model guarantees
  between analytic GPUs. Of several profiles the one nearest in analytic speed is used;
- ``analytic``: the roofline of ``core.prefill``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.specs.hardware import GpuSpec
from prfaas_plan.specs.model import MeasuredProfile


class Source(StrEnum):
    AUTO = "auto"
    MEASURED = "measured"
    SCALED = "scaled"
    ANALYTIC = "analytic"


@dataclass(frozen=True)
class PrefillTimer:
    """T_prefill(l) on one instance, vectorised over l, with its provenance."""

    source: Source
    detail: str
    seconds: Callable[[NDArray[np.float64]], NDArray[np.float64]]
    kv_bytes: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None
    profile: MeasuredProfile | None = None  # the profile behind a measured or scaled timer

    def __call__(self, lengths: ArrayLike) -> NDArray[np.float64] | float:
        length = np.asarray(lengths, dtype=np.float64)
        out = np.asarray(self.seconds(length), dtype=np.float64)
        return float(out) if out.ndim == 0 else out


GpuLookup = Callable[[str], GpuSpec | None]
