"""Frozen GPU specs (datasheet peaks) and the efficiency factors of the serving stack on them."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.model import DType

# source of a spec whose YAML had no efficiency block: the serving stack's profile gives it
# (``specs.stack.apply_stack``); its factors are fractions of peak, so a GPU with higher peaks
# models faster and one with lower peaks slower
UNCALIBRATED = "default (uncalibrated)"
LOW_PRECISION = (DType.FP8, DType.FP4)


REFERENCE_PEAK_FLOPS = 989e12  # bf16 dense peak of H100/H200, where ``peak_exponent`` scales from
# each precision's rate scales against its own peak of that reference (FP4: twice FP8, as on B200)
REFERENCE_PEAKS = {"bf16": REFERENCE_PEAK_FLOPS, "fp8": 2 * REFERENCE_PEAK_FLOPS, "fp4": 4 * REFERENCE_PEAK_FLOPS}
OP_CLASSES = ("dense", "moe", "attention_full", "attention_mla", "attention_swa", "attention_linear")


@dataclass(frozen=True, slots=True, kw_only=True)
class Efficiency:
    """A serving stack's time-model parameters (its profile): how much of the datasheet an engine and
    its kernels get on a GPU, and its fixed costs.

    Belongs to the stack (engine + kernels), never to a model; ``source`` says where the numbers came
    from and ``stack`` names the profile. Op classes (benchmarks/data/README.md):

    - ``compute``: fraction of the bf16 peak reached by dense bf16 GEMMs at large token counts, and
      the default of every class left unset (None);
    - ``low_precision``: FP8/FP4 dense GEMMs' fraction of their own peak, relative to ``compute``;
      a GEMM never runs slower than the bf16 path would;
    - ``moe`` and ``moe_low_precision``: the same for the grouped GEMMs of routed experts;
    - ``attention_full`` (GQA/MHA), ``attention_mla`` (MLA, DSA), ``attention_swa`` and
      ``attention_linear`` (KDA, GDN, Lightning, Mamba): attention kernels, fraction of the bf16 peak;
    - ``gemm_half_tokens``: M_half, the rows at which a dense GEMM runs at half its class's
      efficiency (e(M) = e M / (M + M_half), M = the prompt's tokens);
    - ``peak_exponent``: gamma, every compute efficiency scaled by (peak / reference)^-gamma (capped
      at 1), the peak and reference of the precision it runs in (bf16: 989 TFLOPS), since faster
      GPUs reach a smaller fraction of their peak; with gamma < 1 a GPU at least as fast on every
      peak never models slower;
    - ``memory``: fraction of HBM bandwidth (weights, KV, activation traffic);
    - ``comm``: fraction of the scale-up bandwidth reached by collectives, each of which also pays
      ``collective_latency_s`` (a latency floor) when the instance has more than one GPU;
    - ``prefill_overhead_s``: the engine's fixed cost per prefill (scheduling, launch, sampling),
      plus per MoE layer ``moe_layer_s`` (routing, token permutation, dispatch) and ``moe_expert_s``
      per routed expert (a grouped GEMM's tiles of each expert, however few its rows);
    - ``request_overhead_s``: a client's further fixed cost per request (HTTP, tokenization,
      detokenization): in a TTFT, not in an instance's busy time;
    - ``decode_overhead_s`` + layers x ``decode_layer_s``: a decode step's floor (kernel launches).

    With every added field at its default the model is the plain roofline of the paper's Table 3
    (docs/sources.md#table-3).
    """

    compute: float = 0.5
    low_precision: float = 1.0
    memory: float = 0.7
    comm: float = 0.7
    prefill_overhead_s: float = 0.3  # fixed per-request prefill cost (scheduling, launch, sampling)
    decode_overhead_s: float = 0.005  # fixed per-step decode cost
    moe: float | None = None
    moe_low_precision: float | None = None
    attention_full: float | None = None
    attention_mla: float | None = None
    attention_swa: float | None = None
    attention_linear: float | None = None
    gemm_half_tokens: float = 0.0
    peak_exponent: float = 0.0
    collective_latency_s: float = 0.0
    decode_layer_s: float = 0.0
    request_overhead_s: float = 0.0
    moe_layer_s: float = 0.0
    moe_expert_s: float = 0.0
    source: str = "default"
    stack: str = ""  # the profile these parameters are ("" for a GPU's own efficiency block)
    # the profile's P10-P90 of measured / predicted time (``specs.stack.StackSpec``): prefill, decode step
    prefill_band: tuple[float, float] = (1.0, 1.0)
    decode_band: tuple[float, float] = (1.0, 1.0)

    def of_class(self, name: str) -> float:
        """Efficiency of an op class (OP_CLASSES); an unset class is ``compute``."""
        value = self.compute if name == "dense" else getattr(self, name)
        return self.compute if value is None else value

    def scale(self, peak_flops: float, reference: float = REFERENCE_PEAK_FLOPS) -> float:
        """(peak / reference)^-gamma, the GPU-generation factor on a compute efficiency; a rate then
        grows as peak^(1 - gamma), so it never falls as its own peak rises."""
        return 1.0 if self.peak_exponent == 0.0 else (peak_flops / reference) ** -self.peak_exponent


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

    def class_efficiency(self, name: str, efficiency: Efficiency | None = None, dtype: DType = DType.BF16) -> float:
        """An op class's efficiency on this GPU in ``dtype``: the stack's, times its GPU-generation
        factor at that precision's peak, at most 1."""
        e = efficiency or self.efficiency
        value = e.of_class(name)
        if e.peak_exponent == 0.0:
            return value
        key = dtype.value if dtype.value in REFERENCE_PEAKS else "bf16"
        return min(1.0, value * e.scale(self.peak_flops(dtype), REFERENCE_PEAKS[key]))

    def gemm_flops_per_s(self, dtype: DType, efficiency: Efficiency | None = None, *, op: str = "dense") -> float:
        """Achieved GEMM FLOP/s per GPU for weights in ``dtype``, at large token counts.

        bf16: peak_bf16 x e (e of the op class, ``dense`` or ``moe``). FP8/FP4: max(peak(dtype) x e x
        e_low_precision, peak_bf16 x e), since an engine can always run low-precision weights through
        the bf16 path (w8a16 / upcast), as it does on a GPU without FP8 tensor cores.
        """
        e = efficiency or self.efficiency
        bf16 = self.bf16_flops * self.class_efficiency(op, e)
        if dtype in LOW_PRECISION:
            ratio = e.low_precision if op == "dense" or e.moe_low_precision is None else e.moe_low_precision
            low = self.peak_flops(dtype)  # FP4 without FP4 tensor cores runs at the FP8 (or bf16) peak
            used = DType.FP4 if dtype == DType.FP4 and self.fp4_flops else DType.FP8 if self.fp8_flops else DType.BF16
            return max(low * self.class_efficiency(op, e, used) * ratio, bf16)
        return bf16


@dataclass(frozen=True, slots=True, kw_only=True)
class InstanceSpec:
    """One serving instance: ``gpus`` GPUs of one type, tensor/expert parallel over all of them."""

    gpu: GpuSpec
    gpus: int

    @property
    def name(self) -> str:
        return f"{self.gpus}x{self.gpu.name}"
