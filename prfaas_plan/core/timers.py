"""Which prefill timer a model on an instance gets: its measured profile, else another
instance's profile scaled by the analytic ratio, else the analytic model (``core.prefill``).

Apart from ``core.timing`` (the timer type) so that ``core.prefill`` and it import one way.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core import prefill
from prfaas_plan.core.profile import INTERPOLATION, ProfileCurve
from prfaas_plan.core.timing import GpuLookup, PrefillTimer, Source
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.model import MeasuredProfile, ModelSpec


def _measured(profile: MeasuredProfile) -> PrefillTimer:
    curve = ProfileCurve.fit(profile)
    kv = curve.kv_bytes if profile.kv_bytes is not None else None
    return PrefillTimer(Source.MEASURED, f"{profile.source}; between points: {INTERPOLATION}",
                        curve.prefill_s, kv, profile)  # type: ignore[arg-type]


def _scaled(model: ModelSpec, instance: InstanceSpec, gpu_of: GpuLookup | None) -> PrefillTimer | None:
    """The nearest other instance's measured profile times T_analytic(this) / T_analytic(that)."""
    if gpu_of is None:
        return None
    best: tuple[float, MeasuredProfile, InstanceSpec] | None = None
    for p in model.profiles:
        if p.hardware.lower() == instance.gpu.name.lower() and p.gpus == instance.gpus:
            continue
        gpu = gpu_of(p.hardware)
        if gpu is None:
            continue
        if gpu.efficiency.stack:  # a stack's parameters, not that GPU's own calibration: this instance's stack
            gpu = replace(gpu, efficiency=instance.gpu.efficiency)
        there = InstanceSpec(gpu=gpu, gpus=p.gpus)
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
    return prefill.analytic_timer(model, instance)
