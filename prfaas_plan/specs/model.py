"""Frozen model specs: a model is a tuple of layer groups, each of one attention kind.

Field names follow HuggingFace ``config.json`` where one exists, so values can be checked
against the hub file. Derived quantities (bytes per token, state bytes) live in ``core.kv``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class AttentionKind(StrEnum):
    GQA = "gqa"  # full attention, MHA/MQA/GQA
    MLA = "mla"  # multi-head latent attention (compressed KV)
    DSA = "dsa"  # MLA plus a sparse-attention indexer key cache (DeepSeek-V3.2)
    SWA = "swa"  # sliding-window attention, bounded KV
    LINEAR = "linear"  # constant recurrent state (KDA, GDN, Lightning, Mamba)


class LinearVariant(StrEnum):
    KDA = "kda"
    GDN = "gdn"
    LIGHTNING = "lightning"
    MAMBA2 = "mamba2"
    MAMBA = "mamba"


class DType(StrEnum):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    FP4 = "fp4"

    @property
    def bytes(self) -> float:
        return {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5}[self.value]


@dataclass(frozen=True, slots=True, kw_only=True)
class GqaGroup:
    """Full attention: per layer and token, num_key_value_heads x (head_dim + v_head_dim) elements."""

    count: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    kind: AttentionKind = AttentionKind.GQA


@dataclass(frozen=True, slots=True, kw_only=True)
class SwaGroup:
    """Sliding-window attention: like GQA, but only the last ``sliding_window`` tokens are kept."""

    count: int
    num_attention_heads: int
    num_key_value_heads: int
    head_dim: int
    v_head_dim: int
    sliding_window: int
    kind: AttentionKind = AttentionKind.SWA


@dataclass(frozen=True, slots=True, kw_only=True)
class MlaGroup:
    """MLA: the cache holds kv_lora_rank + qk_rope_head_dim elements per layer and token.

    With ``index_head_dim`` set the group is DSA: an indexer key cache of index_head_dim fp8
    elements plus one fp32 scale per 128 (REFERENCE.md 1.5), and ``index_topk`` keys attended.
    """

    count: int
    num_attention_heads: int
    kv_lora_rank: int
    qk_rope_head_dim: int
    qk_nope_head_dim: int
    v_head_dim: int
    q_lora_rank: int | None = None
    index_n_heads: int | None = None
    index_head_dim: int | None = None
    index_topk: int | None = None

    @property
    def kind(self) -> AttentionKind:
        return AttentionKind.DSA if self.index_head_dim else AttentionKind.MLA


@dataclass(frozen=True, slots=True, kw_only=True)
class LinearGroup:
    """Linear attention or SSM: a constant state per request.

    Recurrent state: num_heads x head_dim_k x head_dim_v elements per layer (Mamba-1: d_inner x
    d_state, written as num_heads = d_inner, head_dim_k = 1, head_dim_v = d_state).
    Short-conv state: conv_channels x (conv_kernel - 1) elements per layer (REFERENCE.md 2).
    ``num_key_heads`` is the number of query/key heads where it differs from the value heads (GDN).
    """

    count: int
    variant: LinearVariant
    num_heads: int
    head_dim_k: int
    head_dim_v: int
    conv_channels: int = 0
    conv_kernel: int = 0
    num_key_heads: int | None = None
    kind: AttentionKind = AttentionKind.LINEAR


LayerGroup = GqaGroup | SwaGroup | MlaGroup | LinearGroup


@dataclass(frozen=True, slots=True, kw_only=True)
class MoeSpec:
    """Mixture of experts: routed experts, top-k, expert width; shared experts; dense layers."""

    num_experts: int
    num_experts_per_tok: int
    moe_intermediate_size: int
    num_shared_experts: int = 0
    shared_intermediate_size: int = 0
    num_dense_layers: int = 0
    dense_intermediate_size: int = 0
    num_moe_layers: int | None = None  # default: every layer that is not dense (FFN-only layers differ)
    gated: bool = True  # gate, up, down (SwiGLU); False: up, down (e.g. squared ReLU)

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.gated else 2


@dataclass(frozen=True, slots=True, kw_only=True)
class MeasuredProfile:
    """Measured prefill on one instance (e.g. PAPER.md Table 5): lengths -> seconds, KV bytes."""

    hardware: str
    gpus: int
    lengths: tuple[int, ...]
    prefill_s: tuple[float, ...]
    kv_bytes: tuple[float, ...] | None = None
    source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSpec:
    name: str
    source: str
    params_total: float
    params_active: float
    hidden_size: int
    vocab_size: int
    num_hidden_layers: int
    layers: tuple[LayerGroup, ...]
    intermediate_size: int = 0
    moe: MoeSpec | None = None
    weight_dtype: DType = DType.BF16
    kv_dtype: DType = DType.BF16
    state_dtype: DType = DType.FP32
    conv_dtype: DType = DType.BF16
    max_position_embeddings: int | None = None
    profiles: tuple[MeasuredProfile, ...] = field(default_factory=tuple)
    notes: str = ""

    def groups(self, kind: AttentionKind) -> tuple[LayerGroup, ...]:
        return tuple(g for g in self.layers if g.kind == kind)

    def profile_for(self, hardware: str, gpus: int) -> MeasuredProfile | None:
        for p in self.profiles:
            if p.hardware.lower() == hardware.lower() and p.gpus == gpus:
                return p
        return None
