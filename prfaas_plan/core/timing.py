"""Where a prefill time comes from: a measured profile when one exists, else the analytic model.

Everything that needs T_prefill(l) (kv-rate, the throughput model, the simulator) goes through
``prefill_timer`` so that all of them use the same numbers and can say which source they used.

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

from prfaas_plan.core.profile import INTERPOLATION, ProfileCurve
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.hardware import GpuSpec, InstanceSpec
from prfaas_plan.specs.model import MeasuredProfile, ModelSpec


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


def _measured(profile: MeasuredProfile) -> PrefillTimer:
    curve = ProfileCurve.fit(profile)
    kv = curve.kv_bytes if profile.kv_bytes is not None else None
    return PrefillTimer(Source.MEASURED, f"{profile.source}; between points: {INTERPOLATION}",
                        curve.prefill_s, kv, profile)  # type: ignore[arg-type]


def _scaled(model: ModelSpec, instance: InstanceSpec, gpu_of: GpuLookup | None) -> PrefillTimer | None:
    """The nearest other instance's measured profile times T_analytic(this) / T_analytic(that)."""
    from prfaas_plan.core import prefill  # imports this module: imported here, not at the top

    if gpu_of is None:
        return None
    best: tuple[float, MeasuredProfile, InstanceSpec] | None = None
    for p in model.profiles:
        if p.hardware.lower() == instance.gpu.name.lower() and p.gpus == instance.gpus:
            continue
        gpu = gpu_of(p.hardware)
        if gpu is None:
            continue
        there = InstanceSpec(gpu=gpu, gpus=p.gpus)  # each with its own (usually the same, inherited) calibration
        at = np.asarray(p.lengths, dtype=np.float64)
        ratio = prefill.prefill_time(model, instance, at).seconds / prefill.prefill_time(model, there, at).seconds
        distance = float(np.mean(np.abs(np.log(ratio))))
        if best is None or distance < best[0]:
            best = (distance, p, there)
    if best is None:
        return None
    _, profile, there = best
    measured = _measured(profile)

    def seconds(length: NDArray[np.float64]) -> NDArray[np.float64]:
        here = prefill.prefill_time(model, instance, length).seconds
        return np.asarray(measured.seconds(length)) * here / prefill.prefill_time(model, there, length).seconds

    detail = (f"{profile.source}, scaled by the analytic ratio T({instance.name}) / T({there.name}) "
              f"({prefill.efficiency_detail(instance)}); between points: {INTERPOLATION}")
    return PrefillTimer(Source.SCALED, detail, seconds, measured.kv_bytes, profile)


def prefill_timer(model: ModelSpec, instance: InstanceSpec, *, source: Source | str = Source.AUTO,
                  gpu_of: GpuLookup | None = None) -> PrefillTimer:
    """The prefill timer for ``model`` on ``instance``: measured, else scaled, else analytic.

    ``gpu_of`` resolves the hardware name of another instance's profile to its spec (the catalog);
    without it no profile is transferred.
    """
    source = Source(source)
    profile = model.profile_for(instance.gpu.name, instance.gpus)
    if source in (Source.AUTO, Source.MEASURED) and profile is not None:
        return _measured(profile)
    have = ", ".join(f"{p.gpus}x{p.hardware}" for p in model.profiles) or "none"
    if source == Source.MEASURED:
        raise SpecError(f"no measured profile for {model.name} on {instance.name} (profiles: {have})",
                        field="--source")
    if source in (Source.AUTO, Source.SCALED):
        scaled = _scaled(model, instance, gpu_of)
        if scaled is not None:
            return scaled
        if source == Source.SCALED:
            raise SpecError(f"no measured profile of {model.name} on another instance to scale to "
                            f"{instance.name} (profiles: {have})", field="--source")
    from prfaas_plan.core import prefill  # imports this module: imported here, not at the top

    return prefill.analytic_timer(model, instance)
