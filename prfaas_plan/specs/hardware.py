"""Frozen GPU specs (datasheet peaks) and the efficiency factors that belong to the hardware."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.model import DType


@dataclass(frozen=True, slots=True, kw_only=True)
class Efficiency:
    """How much of the datasheet a real engine gets, and its fixed costs.

    Belongs to the hardware, never to a model; ``source`` says where the numbers came from
    (datasheet default, or "calibrated on <data>, <date>").
    """

    compute: float = 0.5  # fraction of dense peak FLOPS reached by prefill GEMMs and attention
    memory: float = 0.7  # fraction of HBM bandwidth reached
    comm: float = 0.7  # fraction of scale-up bandwidth reached by collectives
    prefill_overhead_s: float = 0.3  # fixed per-request prefill cost (scheduling, launch, sampling)
    decode_overhead_s: float = 0.005  # fixed per-step decode cost
    source: str = "default"


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuSpec:
    name: str
    source: str
    bf16_flops: float  # dense FLOP/s
    fp8_flops: float | None
    fp4_flops: float | None
    hbm_bytes: float
    hbm_bytes_per_s: float
    scaleup_bytes_per_s: float  # per direction, per GPU
    nic_bytes_per_s: float | None
    power_w: float | None
    price_per_hour: float | None
    efficiency: Efficiency

    def peak_flops(self, dtype: DType) -> float:
        """Dense peak for GEMMs in ``dtype``; falls back to the widest supported format."""
        if dtype == DType.FP4 and self.fp4_flops:
            return self.fp4_flops
        if dtype in (DType.FP8, DType.FP4) and self.fp8_flops:
            return self.fp8_flops
        return self.bf16_flops


@dataclass(frozen=True, slots=True, kw_only=True)
class InstanceSpec:
    """One serving instance: ``gpus`` GPUs of one type, tensor/expert parallel over all of them."""

    gpu: GpuSpec
    gpus: int

    @property
    def name(self) -> str:
        return f"{self.gpus}x{self.gpu.name}"
