"""Pydantic models mirroring the model and hardware YAML (extra="forbid"), converted to specs.

Units are spelled in the keys (``hbm_gb``, ``bf16_dense_tflops``, ``kv_mib``); conversion to SI
happens here, once, through ``prfaas_plan.units``.
"""

from __future__ import annotations

import itertools
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    field_validator,
    model_validator,
)

from prfaas_plan import units
from prfaas_plan.specs.hardware import UNCALIBRATED, Efficiency, GpuSpec
from prfaas_plan.specs.model import (
    DType,
    GqaGroup,
    LinearGroup,
    LinearVariant,
    MeasuredProfile,
    MlaGroup,
    ModelSpec,
    MoeSpec,
    SwaGroup,
    WeightFormat,
)


def _takes(annotation: object, kind: type) -> bool:
    if annotation is kind or annotation is Any:
        return True
    args = get_args(annotation)
    if get_origin(annotation) is Literal:
        return any(isinstance(a, kind) for a in args)
    return any(_takes(a, kind) for a in args)


class Strict(BaseModel):
    # a number in an input file is finite: "inf" or ".nan" in a datasheet would reach every time as NaN
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _no_bool_as_number(cls, data: Any) -> Any:
        # pydantic's lax mode reads true as 1 (gpus_per_instance: true -> 1 GPU): hand a number field
        # the text instead, which it refuses, naming the field and the value
        if not isinstance(data, dict):
            return data
        fields = cls.model_fields
        out = dict(data)
        for key, v in data.items():
            if isinstance(v, bool) and key in fields:
                ann = fields[key].annotation
                if not _takes(ann, bool) and not _takes(ann, str):
                    out[key] = str(v).lower()
        return out

    @field_validator("*")
    @classmethod
    def _normal(cls, v: Any) -> Any:
        if isinstance(v, float) and units.subnormal(v):
            raise ValueError(f"{v!r} is {units.SUBNORMAL} (its products round to 0)")
        if isinstance(v, str) and "\x00" in v:  # no file name or name holds one (the OS refuses such a path)
            raise ValueError(f"{v!r} holds a NUL byte")
        return v


def _parse_count(v: object) -> float:
    """Parameter counts: 63e9, "63B", "1T" (decimal, as model cards write them); see units.parse_count."""
    return units.parse_count(v)  # type: ignore[arg-type]


def _parse_tokens(v: object) -> int:
    return units.parse_length(v)  # type: ignore[arg-type]


class GqaLayers(Strict):
    kind: Literal["gqa"]
    count: PositiveInt
    num_attention_heads: PositiveInt
    num_key_value_heads: PositiveInt
    head_dim: PositiveInt
    v_head_dim: PositiveInt | None = None

    def to_spec(self) -> GqaGroup:
        return GqaGroup(count=self.count, num_attention_heads=self.num_attention_heads,
                        num_key_value_heads=self.num_key_value_heads, head_dim=self.head_dim,
                        v_head_dim=self.v_head_dim or self.head_dim)


class SwaLayers(Strict):
    kind: Literal["swa"]
    count: PositiveInt
    num_attention_heads: PositiveInt
    num_key_value_heads: PositiveInt
    head_dim: PositiveInt
    v_head_dim: PositiveInt | None = None
    sliding_window: PositiveInt

    def to_spec(self) -> SwaGroup:
        return SwaGroup(count=self.count, num_attention_heads=self.num_attention_heads,
                        num_key_value_heads=self.num_key_value_heads, head_dim=self.head_dim,
                        v_head_dim=self.v_head_dim or self.head_dim, sliding_window=self.sliding_window)


class MlaLayers(Strict):
    kind: Literal["mla"]
    count: PositiveInt
    num_attention_heads: PositiveInt
    kv_lora_rank: PositiveInt
    qk_rope_head_dim: PositiveInt
    qk_nope_head_dim: PositiveInt
    v_head_dim: PositiveInt
    q_lora_rank: PositiveInt | None = None

    def to_spec(self) -> MlaGroup:
        return MlaGroup(**self.model_dump(exclude={"kind"}))


class DsaLayers(Strict):
    kind: Literal["dsa"]
    count: PositiveInt
    num_attention_heads: PositiveInt
    kv_lora_rank: PositiveInt
    qk_rope_head_dim: PositiveInt
    qk_nope_head_dim: PositiveInt
    v_head_dim: PositiveInt
    q_lora_rank: PositiveInt | None = None
    index_n_heads: PositiveInt
    index_head_dim: PositiveInt
    index_topk: PositiveInt

    def to_spec(self) -> MlaGroup:
        return MlaGroup(**self.model_dump(exclude={"kind"}))


class LinearLayers(Strict):
    kind: Literal["linear"]
    variant: LinearVariant
    count: PositiveInt
    num_heads: PositiveInt
    head_dim_k: PositiveInt
    head_dim_v: PositiveInt
    conv_channels: Annotated[int, Field(ge=0)] = 0
    conv_kernel: Annotated[int, Field(ge=0)] = 0
    num_key_heads: PositiveInt | None = None

    def to_spec(self) -> LinearGroup:
        return LinearGroup(**self.model_dump(exclude={"kind"}))


Layers = Annotated[GqaLayers | SwaLayers | MlaLayers | DsaLayers | LinearLayers, Field(discriminator="kind")]


class MoeFields(Strict):
    num_experts: PositiveInt
    num_experts_per_tok: PositiveInt
    moe_intermediate_size: PositiveInt
    num_shared_experts: Annotated[int, Field(ge=0)] = 0
    shared_intermediate_size: Annotated[int, Field(ge=0)] = 0
    num_dense_layers: Annotated[int, Field(ge=0)] = 0
    dense_intermediate_size: Annotated[int, Field(ge=0)] = 0
    num_moe_layers: PositiveInt | None = None
    gated: bool = True

    @model_validator(mode="after")
    def _top_k(self) -> MoeFields:
        if self.num_experts_per_tok > self.num_experts:
            raise ValueError(f"num_experts_per_tok {self.num_experts_per_tok} exceeds num_experts {self.num_experts}")
        return self

    def to_spec(self) -> MoeSpec:
        return MoeSpec(**self.model_dump())


class ProfilePoint(Strict):
    length: int
    prefill_s: PositiveFloat
    kv_mib: PositiveFloat | None = None

    _length = field_validator("length", mode="before")(lambda v: _parse_tokens(v))


def _positive_curve(profile: MeasuredProfile) -> None:
    """The curve the planner reads through a profile's points (core.profile) stays a positive, finite time
    from one token to the last point: points too far apart in time for it (1 s at 32K, 10^4 s at 128K) are
    refused here, not left to end in a NaN Lambda_max."""
    import numpy as np

    from prfaas_plan.core.profile import ProfileCurve

    lengths = np.geomspace(1.0, float(profile.lengths[-1]), 256)
    times = np.asarray(ProfileCurve.fit(profile).prefill_s(lengths))
    bad = np.flatnonzero(~np.isfinite(times) | (times <= 0))
    if len(bad):
        raise ValueError(f"the curve through these prefill times ({list(profile.prefill_s)}) falls to "
                         f"{times[bad[0]]:.3g} s at {lengths[bad[0]]:,.0f} tokens: the times grow too unevenly "
                         "for a prefill curve")


class ProfileFields(Strict):
    hardware: str
    gpus: PositiveInt
    source: str
    points: list[ProfilePoint] = Field(min_length=2)

    @model_validator(mode="after")
    def _sorted(self) -> ProfileFields:
        lengths = [p.length for p in self.points]
        if any(b <= a for a, b in itertools.pairwise(lengths)):
            raise ValueError(f"profile lengths must increase strictly, got {lengths}")
        kv = [p.kv_mib for p in self.points]
        if any(k is None for k in kv) and not all(k is None for k in kv):
            raise ValueError("give kv_mib for every profile point or for none")
        times = [p.prefill_s for p in self.points]
        if any(b < a for a, b in itertools.pairwise(times)):
            raise ValueError(f"profile prefill times must not fall as the length grows, got {times}")
        _positive_curve(self.to_spec())
        return self

    def to_spec(self) -> MeasuredProfile:
        kv = None
        if self.points[0].kv_mib is not None:
            kv = tuple(units.mib_to_bytes(p.kv_mib) for p in self.points)
        return MeasuredProfile(hardware=self.hardware, gpus=self.gpus, source=self.source,
                               lengths=tuple(p.length for p in self.points),
                               prefill_s=tuple(p.prefill_s for p in self.points), kv_bytes=kv)


class WeightFormatFields(Strict):
    """Bytes per stored weight, scales included (specs.model.WeightFormat); written by `model import`."""

    name: str = Field(min_length=1)
    expert_bytes: Annotated[float, Field(gt=0, le=4)]
    other_bytes: Annotated[float, Field(gt=0, le=4)]
    excluded: list[str] = Field(default_factory=list)
    source: str = ""

    def to_spec(self) -> WeightFormat:
        return WeightFormat(name=self.name, expert_bytes=self.expert_bytes, other_bytes=self.other_bytes,
                            excluded=tuple(self.excluded), source=self.source)


class ModelFile(Strict):
    name: str = Field(min_length=1)
    source: str
    params_total: float
    params_active: float
    hidden_size: PositiveInt
    vocab_size: PositiveInt
    num_hidden_layers: PositiveInt
    intermediate_size: Annotated[int, Field(ge=0)] = 0
    max_position_embeddings: PositiveInt | None = None
    weight_dtype: DType = DType.BF16
    weight_format: WeightFormatFields | None = None
    kv_dtype: Literal["bf16", "fp16", "fp8"] = "bf16"
    state_dtype: Literal["fp32", "bf16", "fp16"] = "fp32"
    conv_dtype: Literal["fp32", "bf16", "fp16"] = "bf16"
    moe: MoeFields | None = None
    layers: list[Layers] = Field(min_length=1)
    profiles: list[ProfileFields] = Field(default_factory=list)
    notes: str = ""
    parallel_attn: bool = False

    _counts = field_validator("params_total", "params_active", mode="before")(lambda v: _parse_count(v))

    @field_validator("params_total", "params_active")
    @classmethod
    def _positive(cls, v: float) -> float:
        if not v > 0:
            raise ValueError(f"must be positive, got {v}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> ModelFile:
        n = sum(g.count for g in self.layers)
        if n != self.num_hidden_layers:
            raise ValueError(f"layer groups hold {n} layers but num_hidden_layers is {self.num_hidden_layers}")
        if self.params_active > self.params_total:
            raise ValueError(f"params_active {self.params_active:g} exceeds params_total {self.params_total:g}")
        return self

    def to_spec(self) -> ModelSpec:
        return ModelSpec(
            name=self.name,
            source=self.source,
            params_total=self.params_total,
            params_active=self.params_active,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            num_hidden_layers=self.num_hidden_layers,
            intermediate_size=self.intermediate_size,
            max_position_embeddings=self.max_position_embeddings,
            weight_dtype=DType(self.weight_dtype),
            weight_format=self.weight_format.to_spec() if self.weight_format else None,
            kv_dtype=DType(self.kv_dtype),
            state_dtype=DType(self.state_dtype),
            conv_dtype=DType(self.conv_dtype),
            moe=self.moe.to_spec() if self.moe else None,
            layers=tuple(g.to_spec() for g in self.layers),
            profiles=tuple(p.to_spec() for p in self.profiles),
            notes=self.notes,
            parallel_attn=self.parallel_attn,
        )


Fraction = Annotated[float, Field(gt=0, le=1)]


class EfficiencyFields(Strict):
    """A stack's time-model parameters (``specs.hardware.Efficiency``), times in ms."""

    compute: Fraction = 0.5
    low_precision: Fraction = 1.0
    memory: Fraction = 0.7
    comm: Fraction = 0.7
    prefill_overhead_ms: Annotated[float, Field(ge=0)] = 300.0
    decode_overhead_ms: Annotated[float, Field(ge=0)] = 5.0
    moe: Fraction | None = None
    moe_low_precision: Fraction | None = None
    attention_full: Fraction | None = None
    attention_mla: Fraction | None = None
    attention_swa: Fraction | None = None
    attention_linear: Fraction | None = None
    gemm_half_tokens: Annotated[float, Field(ge=0)] = 0.0
    peak_exponent: Annotated[float, Field(ge=0, lt=1)] = 0.0
    collective_latency_ms: Annotated[float, Field(ge=0)] = 0.0
    decode_layer_ms: Annotated[float, Field(ge=0)] = 0.0
    request_overhead_ms: Annotated[float, Field(ge=0)] = 0.0
    moe_layer_ms: Annotated[float, Field(ge=0)] = 0.0
    moe_expert_ms: Annotated[float, Field(ge=0)] = 0.0
    source: str = "default"

    def to_spec(self, stack: str = "") -> Efficiency:
        return Efficiency(compute=self.compute, low_precision=self.low_precision, memory=self.memory, comm=self.comm,
                          prefill_overhead_s=units.ms_to_s(self.prefill_overhead_ms),
                          decode_overhead_s=units.ms_to_s(self.decode_overhead_ms), moe=self.moe,
                          moe_low_precision=self.moe_low_precision, attention_full=self.attention_full,
                          attention_mla=self.attention_mla, attention_swa=self.attention_swa,
                          attention_linear=self.attention_linear, gemm_half_tokens=self.gemm_half_tokens,
                          peak_exponent=self.peak_exponent,
                          collective_latency_s=units.ms_to_s(self.collective_latency_ms),
                          decode_layer_s=units.ms_to_s(self.decode_layer_ms),
                          request_overhead_s=units.ms_to_s(self.request_overhead_ms),
                          moe_layer_s=units.ms_to_s(self.moe_layer_ms), moe_expert_s=units.ms_to_s(self.moe_expert_ms),
                          source=self.source, stack=stack)


class HardwareFile(Strict):
    name: str = Field(min_length=1)
    source: str
    bf16_dense_tflops: PositiveFloat
    fp8_dense_tflops: PositiveFloat | None = None
    fp4_dense_tflops: PositiveFloat | None = None
    hbm_gb: PositiveFloat
    hbm_tb_per_s: PositiveFloat
    scaleup_gb_per_s_bidirectional: PositiveFloat
    nic_gbps: PositiveFloat | None = None
    power_w: PositiveFloat | None = None
    # dollars per GPU-hour; `price_per_hour` is the older name of the same field
    price_per_gpu_hour: PositiveFloat | None = Field(
        default=None, validation_alias=AliasChoices("price_per_gpu_hour", "price_per_hour"))
    efficiency: EfficiencyFields | None = None  # none: the reference GPU's calibration is inherited

    def to_spec(self, efficiency: EfficiencyFields | None = None) -> GpuSpec:
        return GpuSpec(
            name=self.name,
            source=self.source,
            bf16_flops=units.tflops_to_flops(self.bf16_dense_tflops),
            fp8_flops=units.tflops_to_flops(self.fp8_dense_tflops) if self.fp8_dense_tflops else None,
            fp4_flops=units.tflops_to_flops(self.fp4_dense_tflops) if self.fp4_dense_tflops else None,
            hbm_bytes=units.gb_to_bytes(self.hbm_gb),
            hbm_bytes_per_s=units.tbps_to_bytes_per_s(self.hbm_tb_per_s),
            # vendors quote scale-up bandwidth bidirectional; one direction is half
            scaleup_bytes_per_s=units.gbytes_per_s_to_bytes_per_s(self.scaleup_gb_per_s_bidirectional) / 2,
            nic_bytes_per_s=units.gbps_to_bytes_per_s(self.nic_gbps) if self.nic_gbps else None,
            power_w=self.power_w,
            price_per_hour=self.price_per_gpu_hour,
            efficiency=(efficiency or self.efficiency or EfficiencyFields(source=UNCALIBRATED)).to_spec(),
        )


class EfficiencyOverlay(Strict):
    """A calibration written by ``prfaas-plan calibrate``: new efficiency for a catalog GPU."""

    overlay: str = Field(min_length=1)
    efficiency: EfficiencyFields
