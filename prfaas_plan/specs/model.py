"""Frozen model specs: a model is a tuple of layer groups, each of one attention kind.

Field names follow HuggingFace ``config.json`` where one exists, so values can be checked
against the hub file. Derived quantities (bytes per token, state bytes) live in ``core.kv``;
the weight bytes a checkpoint stores (``WeightFormat``, scale overhead included) live here, so
decode memory and the weights that fit read one number.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np


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
    elements plus one fp32 scale per 128 (docs/sources.md#kv-dtypes), and ``index_topk`` keys attended.
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
    Short-conv state: conv_channels x (conv_kernel - 1) elements per layer (docs/model.md#kv-per-request).
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
    """Measured prefill on one instance (e.g. docs/sources.md#table-5): lengths -> seconds, KV bytes."""

    hardware: str
    gpus: int
    lengths: tuple[int, ...]
    prefill_s: tuple[float, ...]
    kv_bytes: tuple[float, ...] | None = None
    source: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class WeightFormat:
    """How the checkpoint stores its weights, in bytes per weight with the scales included.

    Routed experts and the other weights (mixers, dense and shared FFN, router, embeddings,
    LM head) may differ: gpt-oss keeps attention in bf16 and the experts in MXFP4.
    ``other_bytes`` is the mean over the other weights, the unquantised ones (the config's
    ``ignore`` / ``modules_to_not_convert``, and embeddings, which no scheme converts) included.
    Examples: FP8 block 128x128 = 1 + 4/16384 (fp32 scale per block); MXFP4 = 0.5 + 1/32 (e8m0
    per 32); NVFP4 = 0.5 + 1/16 (fp8 per 16); int4 group g = 0.5 + 2/g (bf16 scale per group).
    """

    name: str
    expert_bytes: float
    other_bytes: float
    excluded: tuple[str, ...] = ()
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
    weight_format: WeightFormat | None = None
    profiles: tuple[MeasuredProfile, ...] = field(default_factory=tuple)
    notes: str = ""
    # attention and dense MLP of a layer read the same normed input and their outputs are summed
    # (HF ``parallel_attn`` / ``new_decoder_architecture``, Falcon; ``use_parallel_residual``,
    # GPT-NeoX; GPT-J's block): under tensor parallelism engines reduce the two partial sums
    # together, one all-reduce per layer (vLLM's Falcon, TensorRT-LLM's Falcon since 2024)
    parallel_attn: bool = False

    def groups(self, kind: AttentionKind) -> tuple[LayerGroup, ...]:
        return tuple(g for g in self.layers if g.kind == kind)

    @property
    def routed_expert_params(self) -> float:
        """Weights of all routed experts: matrices x hidden x moe_intermediate_size x experts x MoE layers."""
        moe = self.moe
        if moe is None:
            return 0.0
        layers = moe.num_moe_layers or self.num_hidden_layers - moe.num_dense_layers
        return float(moe.mlp_matrices * self.hidden_size * moe.moe_intermediate_size * moe.num_experts * layers)

    def weight_bytes(self, params: float | Any) -> float | Any:
        """Bytes of ``params`` weights read together, every non-expert weight among them first.

        A forward pass touches all non-expert weights and some experts (``core.prefill.weights_touched``),
        so params = non-expert + touched experts, each part at its own bytes per weight. Without a
        ``weight_format``, every weight takes weight_dtype's bytes. Vectorised over ``params``.
        """
        f = self.weight_format
        if f is None:
            return params * self.weight_dtype.bytes
        other = self.params_total - self.routed_expert_params
        experts = np.maximum(np.asarray(params, dtype=np.float64) - other, 0.0)
        out = np.minimum(params, other) * f.other_bytes + experts * f.expert_bytes
        return float(out) if np.ndim(out) == 0 else out

    @property
    def weights_bytes_total(self) -> float:
        """Bytes of the whole checkpoint's weights (what must fit in HBM)."""
        return float(self.weight_bytes(self.params_total))

    def beyond_context(self, lengths: Iterable[float]) -> list[float]:
        """The lengths above ``max_position_embeddings`` (none when the limit is unknown)."""
        limit = self.max_position_embeddings
        return [] if limit is None else [n for n in lengths if n > limit]

    def profile_for(self, hardware: str, gpus: int) -> MeasuredProfile | None:
        for p in self.profiles:
            if p.hardware.lower() == hardware.lower() and p.gpus == gpus:
                return p
        return None
