"""Frozen GPU specs (datasheet peaks) and the efficiency factors of the serving stack on them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from prfaas_plan.specs.model import DType

# The GPU whose calibration a GPU without an ``efficiency:`` block inherits: the serving stack
# (SGLang v0.5.9, PAPER.md Table 3) was calibrated there, and its factors are fractions of peak,
# so any GPU with higher peaks models faster and any with lower peaks slower.
REFERENCE_GPU = "H200"
UNCALIBRATED = "default (uncalibrated)"  # source of a spec whose YAML had no efficiency block
LOW_PRECISION = (DType.FP8, DType.FP4)


@dataclass(frozen=True, slots=True, kw_only=True)
class Efficiency:
    """How much of the datasheet a serving stack (engine + kernels) gets on a GPU, and its fixed costs.

    Belongs to the stack on a GPU generation, never to a model; ``source`` says where the numbers
    came from ("calibrated on <data>, <date>", "<GPU> calibration (...), inherited", or
    UNCALIBRATED). Op classes (benchmarks/data/README.md):

    - ``compute``: fraction of the bf16 peak reached by bf16 GEMMs (dense and grouped MoE) and by
      attention kernels;
    - ``low_precision``: FP8/FP4 GEMMs' fraction of their own peak, relative to ``compute``
      (e_fp8 = compute x low_precision); a GEMM never runs slower than the bf16 path would;
    - ``memory``: fraction of HBM bandwidth (weights, KV, activation traffic);
    - ``comm``: fraction of the scale-up bandwidth reached by collectives.
    """

    compute: float = 0.5
    low_precision: float = 1.0
    memory: float = 0.7
    comm: float = 0.7
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

    def gemm_flops_per_s(self, dtype: DType, efficiency: Efficiency | None = None) -> float:
        """Achieved GEMM FLOP/s per GPU for weights in ``dtype``.

        bf16: peak_bf16 x e_compute. FP8/FP4: max(peak(dtype) x e_compute x e_low_precision,
        peak_bf16 x e_compute), since an engine can always run low-precision weights through the
        bf16 path (w8a16 / upcast), as it does on a GPU without FP8 tensor cores.
        """
        e = efficiency or self.efficiency
        bf16 = self.bf16_flops * e.compute
        if dtype in LOW_PRECISION:
            return max(self.peak_flops(dtype) * e.compute * e.low_precision, bf16)
        return bf16


def inherit_efficiency(gpu: GpuSpec, reference: Callable[[], GpuSpec]) -> GpuSpec:
    """``gpu`` with the reference GPU's calibration when its own YAML had none (source UNCALIBRATED).

    The factors carry over unchanged (they are fractions of peak), so the ordering invariant holds:
    a GPU at least as fast as another on every peak never models slower. ``reference`` is called
    only when needed (it loads a file); the reference itself, if uncalibrated, keeps the defaults.
    """
    if gpu.efficiency.source != UNCALIBRATED or gpu.name.lower() == REFERENCE_GPU.lower():
        return gpu
    ref = reference()
    if ref.efficiency.source == UNCALIBRATED:
        return gpu
    e = replace(ref.efficiency, source=f"{ref.name} calibration ({ref.efficiency.source}), inherited")
    return replace(gpu, efficiency=e)


@dataclass(frozen=True, slots=True, kw_only=True)
class InstanceSpec:
    """One serving instance: ``gpus`` GPUs of one type, tensor/expert parallel over all of them."""

    gpu: GpuSpec
    gpus: int

    @property
    def name(self) -> str:
        return f"{self.gpus}x{self.gpu.name}"
