"""KVCache sizes: S_kv(l) and the bytes that must cross a link (Eq. 1; docs/model.md#kv-per-request,
docs/model.md#kv-throughput-and-egress).

S_kv(l) = kv_bytes_per_token x l + sum over SWA groups of swa_bytes_per_token x min(l, window)
          + constant recurrent state.
Dispatch is on each layer group's attention kind, never on the model's name.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.errors import SpecError
from prfaas_plan.specs.model import (
    AttentionKind,
    DType,
    GqaGroup,
    LayerGroup,
    LinearGroup,
    MlaGroup,
    ModelSpec,
    SwaGroup,
)

# DeepSeek's fp8 MLA layout and the DSA indexer keys: fp8 values plus one fp32 scale per
# 128 elements (docs/sources.md#kv-dtypes, vLLM FlashMLASparseBackend, SGLang, TRT-LLM).
_FP8_SCALE_BLOCK = 128
_FP32_BYTES = 4


def _fp8_with_scales(n: int) -> float:
    return n * DType.FP8.bytes + n / _FP8_SCALE_BLOCK * _FP32_BYTES


def group_bytes_per_token(group: LayerGroup, kv_dtype: DType) -> float:
    """KV bytes per token for all layers of one group (full, MLA/DSA or SWA); 0 for linear."""
    b = kv_dtype.bytes
    if isinstance(group, GqaGroup | SwaGroup):
        return group.count * group.num_key_value_heads * (group.head_dim + group.v_head_dim) * b
    if isinstance(group, MlaGroup):
        if group.kind == AttentionKind.DSA:
            if kv_dtype == DType.FP8:
                # fp8_ds_mla: fp8 latent with scales, RoPE part kept in bf16 (656 B per layer)
                latent = _fp8_with_scales(group.kv_lora_rank) + group.qk_rope_head_dim * DType.BF16.bytes
            else:
                latent = (group.kv_lora_rank + group.qk_rope_head_dim) * b
            indexer = _fp8_with_scales(group.index_head_dim or 0)
            return group.count * (latent + indexer)
        return group.count * (group.kv_lora_rank + group.qk_rope_head_dim) * b
    return 0.0


def group_state_bytes(group: LayerGroup, state_dtype: DType, conv_dtype: DType) -> float:
    """Constant per-request bytes of a linear-attention group: recurrent state plus conv state."""
    if not isinstance(group, LinearGroup):
        return 0.0
    recurrent = group.num_heads * group.head_dim_k * group.head_dim_v * state_dtype.bytes
    conv = group.conv_channels * max(group.conv_kernel - 1, 0) * conv_dtype.bytes
    return group.count * (recurrent + conv)


@dataclass(frozen=True, slots=True, kw_only=True)
class KvFootprint:
    """Per-request KV footprint of a model at given dtypes, in bytes.

    ``kv_bytes_per_token`` is the growing part (full attention, MLA, DSA); ``swa`` lists
    (bytes per token, window) per SWA group; ``state_bytes`` is constant per request.
    """

    kv_bytes_per_token: float
    swa: tuple[tuple[float, int], ...]
    state_bytes: float
    kv_dtype: DType
    state_dtype: DType

    @property
    def swa_bytes_per_token(self) -> float:
        return float(sum(b for b, _ in self.swa))

    @property
    def swa_window_tokens(self) -> int | None:
        return max((w for _, w in self.swa), default=None)

    @property
    def swa_max_bytes(self) -> float:
        return float(sum(b * w for b, w in self.swa))

    def s_kv(self, lengths: ArrayLike) -> NDArray[np.float64] | float:
        """S_kv(l) in bytes, vectorised over l (tokens)."""
        length = np.asarray(lengths, dtype=np.float64)
        out = self.kv_bytes_per_token * length + self.state_bytes
        for b, w in self.swa:
            out = out + b * np.minimum(length, w)
        return float(out) if out.ndim == 0 else out

    def transfer_bytes(self, lengths: ArrayLike, cached_prefix: ArrayLike = 0) -> NDArray[np.float64] | float:
        """Bytes that cross the link for a request of total length l with a cached prefix.

        Full-attention KV of the uncached part only (the prefix is at the receiver already),
        the whole SWA window and the final recurrent state (request-level, docs/model.md#the-prfaas-architecture).
        """
        length = np.asarray(lengths, dtype=np.float64)
        cached = np.minimum(np.asarray(cached_prefix, dtype=np.float64), length)
        out = self.kv_bytes_per_token * (length - cached) + self.state_bytes
        for b, w in self.swa:
            out = out + b * np.minimum(length, w)
        return float(out) if out.ndim == 0 else out


def footprint(model: ModelSpec, *, kv_dtype: DType | None = None, state_dtype: DType | None = None) -> KvFootprint:
    """The model's KV footprint; dtypes default to the model's (bf16 KV, fp32 state)."""
    kv = kv_dtype or model.kv_dtype
    st = state_dtype or model.state_dtype
    growing = sum(group_bytes_per_token(g, kv) for g in model.layers if not isinstance(g, SwaGroup))
    swa = tuple(
        (group_bytes_per_token(g, kv), g.sliding_window) for g in model.layers if isinstance(g, SwaGroup)
    )
    state = sum(group_state_bytes(g, st, model.conv_dtype) for g in model.layers)
    return KvFootprint(kv_bytes_per_token=float(growing), swa=swa, state_bytes=float(state), kv_dtype=kv,
                       state_dtype=st)


def s_kv(model: ModelSpec, lengths: ArrayLike, *, kv_dtype: DType | None = None,
         state_dtype: DType | None = None) -> NDArray[np.float64] | float:
    """S_kv(l) of Eq. 1 (docs/model.md#kv-per-request): bytes of KVCache (all layers, incl. constant state)
    at length l."""
    return footprint(model, kv_dtype=kv_dtype, state_dtype=state_dtype).s_kv(lengths)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupRow:
    kind: str
    variant: str | None
    count: int
    kv_bytes_per_token: float
    swa_window_tokens: int | None
    state_bytes: float


def breakdown(model: ModelSpec, *, kv_dtype: DType | None = None,
              state_dtype: DType | None = None) -> tuple[GroupRow, ...]:
    """Per layer group: kind, layer count, KV bytes/token and constant state bytes."""
    kv = kv_dtype or model.kv_dtype
    st = state_dtype or model.state_dtype
    return tuple(
        GroupRow(
            kind=str(g.kind),
            variant=str(g.variant) if isinstance(g, LinearGroup) else None,
            count=g.count,
            kv_bytes_per_token=group_bytes_per_token(g, kv),
            swa_window_tokens=g.sliding_window if isinstance(g, SwaGroup) else None,
            state_bytes=group_state_bytes(g, st, model.conv_dtype),
        )
        for g in model.layers
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class HybridSaving:
    """Why a hybrid's KV is small, as the paper puts Ring-2.5-1T (36x = MLA ~4.5x x hybrid ~8x).

    hybrid_factor = all layers / growing layers (as if every layer were full attention);
    attention_factor = reference GQA bytes per layer / this model's growing bytes per layer;
    total = reference GQA on every layer / this model's growing bytes per token.
    """

    total_layers: int
    growing_layers: int
    hybrid_factor: float
    attention_factor: float
    total_factor: float
    reference_kv_heads: int
    reference_head_dim: int


def hybrid_saving(model: ModelSpec, *, reference_kv_heads: int = 8, reference_head_dim: int = 128,
                  kv_dtype: DType | None = None) -> HybridSaving | None:
    """The KV saving against a dense GQA reference; None for a model with no growing KV."""
    for name, value in (("reference_kv_heads", reference_kv_heads), ("reference_head_dim", reference_head_dim)):
        if value < 1:  # a zero reference would print "0.0x less KV"
            raise SpecError(f"must be a positive whole number, got {value}", field=name)
    kv = kv_dtype or model.kv_dtype
    growing_groups = [g for g in model.layers if isinstance(g, GqaGroup | MlaGroup)]
    growing_layers = sum(g.count for g in growing_groups)
    if growing_layers == 0:
        return None
    total_layers = sum(g.count for g in model.layers)
    per_token = sum(group_bytes_per_token(g, kv) for g in growing_groups)
    ref_layer = reference_kv_heads * 2 * reference_head_dim * kv.bytes
    hybrid = total_layers / growing_layers
    attention = ref_layer / (per_token / growing_layers)
    return HybridSaving(
        total_layers=total_layers,
        growing_layers=growing_layers,
        hybrid_factor=hybrid,
        attention_factor=attention,
        total_factor=hybrid * attention,
        reference_kv_heads=reference_kv_heads,
        reference_head_dim=reference_head_dim,
    )
