"""Where a prefill time comes from: a measured profile when one exists, else the analytic model.

Everything that needs T_prefill(l) (kv-rate, the throughput model, the simulator) goes through
``prefill_timer`` so that all of them use the same numbers and can say which source they used.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core.profile import INTERPOLATION, ProfileCurve
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.model import ModelSpec


class Source(StrEnum):
    AUTO = "auto"
    MEASURED = "measured"
    ANALYTIC = "analytic"


@dataclass(frozen=True)
class PrefillTimer:
    """T_prefill(l) on one instance, vectorised over l, with its provenance."""

    source: Source
    detail: str
    seconds: Callable[[NDArray[np.float64]], NDArray[np.float64]]
    kv_bytes: Callable[[NDArray[np.float64]], NDArray[np.float64]] | None = None

    def __call__(self, lengths: ArrayLike) -> NDArray[np.float64] | float:
        length = np.asarray(lengths, dtype=np.float64)
        out = np.asarray(self.seconds(length), dtype=np.float64)
        return float(out) if out.ndim == 0 else out


def prefill_timer(model: ModelSpec, instance: InstanceSpec, *, source: Source | str = Source.AUTO) -> PrefillTimer:
    """The prefill timer for ``model`` on ``instance``: measured profile over analytic model."""
    source = Source(source)
    profile = model.profile_for(instance.gpu.name, instance.gpus)
    if source in (Source.AUTO, Source.MEASURED) and profile is not None:
        curve = ProfileCurve.fit(profile)
        kv = curve.kv_bytes if profile.kv_bytes is not None else None
        return PrefillTimer(Source.MEASURED, f"{profile.source}; between points: {INTERPOLATION}",
                            curve.prefill_s, kv)  # type: ignore[arg-type]
    if source == Source.MEASURED:
        have = ", ".join(f"{p.gpus}x{p.hardware}" for p in model.profiles) or "none"
        raise SpecError(f"no measured profile for {model.name} on {instance.name} (profiles: {have})",
                        field="--source")
    from prfaas_plan.core import prefill  # imports this module: imported here, not at the top

    return prefill.analytic_timer(model, instance)
