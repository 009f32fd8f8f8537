"""A serving-stack profile: an engine on GPUs and the fitted parameters of the time model.

The time model's efficiencies and fixed costs belong to the serving stack (engine, version,
kernels), never to a model or, beyond its peaks, to a GPU (docs/model.md#time-model). A
profile carries them with what they were fitted on and the band of their error on sources the fit
never saw (leave one source out), from which every predicted T_prefill, Phi_kv and decode step
carries a P10-P90 interval.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from prfaas_plan.specs.hardware import UNCALIBRATED, Efficiency, GpuSpec

DEFAULT_STACK = "open-engines"  # the profile of a scenario, kv-rate or perf that names none
PAPER_STACK = "paper-table3"


@dataclass(frozen=True, slots=True, kw_only=True)
class StackSpec:
    """A named profile. ``prefill_band`` and ``decode_band`` are (P10, P90) of measured / predicted
    time on held-out sources: a prediction T has the interval [T x P10, T x P90]."""

    name: str
    engine: str
    versions: str
    gpus: tuple[str, ...]
    description: str
    source: str
    efficiency: Efficiency
    measurements: str
    points: int
    sources: int
    prefill_band: tuple[float, float]
    decode_band: tuple[float, float] | None
    band_from: str


    def band(self, kind: str) -> tuple[float, float]:
        """(P10, P90) factors of a prefill or decode time; a stack without a decode band uses prefill's."""
        if kind == "decode" and self.decode_band is not None:
            return self.decode_band
        return self.prefill_band


def apply_stack(gpu: GpuSpec, stack: StackSpec) -> GpuSpec:
    """``gpu`` with the stack's parameters, unless its own YAML (or a calibrate overlay) gave an
    ``efficiency:`` block, which is that GPU's own calibration and wins."""
    if gpu.efficiency.source != UNCALIBRATED:
        return gpu
    return replace(gpu, efficiency=replace(stack.efficiency, source=f"stack {stack.name}: {stack.source}",
                                           prefill_band=stack.band("prefill"), decode_band=stack.band("decode")))
