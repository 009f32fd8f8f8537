"""What a forward pass does, from the architecture alone: GEMM parameters per token (mixers, dense
and shared FFN, routed experts), the experts a batch of tokens touches, the collectives of a
tensor/expert-parallel instance and the attention FLOPs of each layer kind (docs/model.md#time-model).
No efficiency, no GPU: ``core.prefill`` and ``core.decode`` turn these into times.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.specs.model import (
    AttentionKind,
    GqaGroup,
    LayerGroup,
    LinearVariant,
    MlaGroup,
    ModelSpec,
    SwaGroup,
)

LINEAR_CHUNK = 64  # chunk length of the chunked linear-attention kernels (flash-linear-attention)
# FLOPs per token, head and d_k x d_v of the recurrent state: 2 to read it (q S), 2 to update it
# (k^T v); the delta rule (KDA, GDN) also predicts v from the state first (k S), 2 more.
STATE_FLOPS = {LinearVariant.KDA: 6, LinearVariant.GDN: 6, LinearVariant.LIGHTNING: 4,
                LinearVariant.MAMBA2: 4, LinearVariant.MAMBA: 6}


# ---------------------------------------------------------------------------------------------
# Parameters (GEMM weights) per token, from the architecture


def projection_params(group: LayerGroup, hidden: int) -> float:
    """GEMM weights of one layer's token mixer (attention or linear attention), in parameters.

    GQA/SWA: q, k, v, o = hidden x (H d_k + n_kv (d_k + d_v)) + H d_v x hidden.
    MLA: q (through q_lora_rank when set), kv_a = hidden x (kv_lora_rank + rope), kv_b =
    kv_lora_rank x H (nope + v), o = H v x hidden; DSA adds the indexer's q, k and head weights.
    Linear (KDA, GDN, Lightning): q, k (num_key_heads x d_k each), v and an output gate (H d_v
    each), o. Mamba-2: in_proj hidden x (d_inner + conv_channels + H), out_proj; Mamba-1:
    in_proj hidden x 2 d_inner, x_proj, dt_proj (rank hidden/16), out_proj.
    """
    if isinstance(group, GqaGroup | SwaGroup):
        h, n_kv = group.num_attention_heads, group.num_key_value_heads
        return float(hidden * (h * group.head_dim + n_kv * (group.head_dim + group.v_head_dim))
                     + h * group.v_head_dim * hidden)
    if isinstance(group, MlaGroup):
        h = group.num_attention_heads
        qk = group.qk_nope_head_dim + group.qk_rope_head_dim
        q = group.q_lora_rank * (hidden + h * qk) if group.q_lora_rank else hidden * h * qk
        kv_a = hidden * (group.kv_lora_rank + group.qk_rope_head_dim)
        kv_b = group.kv_lora_rank * h * (group.qk_nope_head_dim + group.v_head_dim)
        out = h * group.v_head_dim * hidden
        indexer = 0
        if group.index_head_dim:
            ih = group.index_n_heads or 0
            indexer = ((group.q_lora_rank or hidden) * ih * group.index_head_dim
                       + hidden * group.index_head_dim + hidden * ih)
        return float(q + kv_a + kv_b + out + indexer)
    if group.variant == LinearVariant.MAMBA2:
        d_inner = group.num_heads * min(group.head_dim_k, group.head_dim_v)
        return float(hidden * (d_inner + group.conv_channels + group.num_heads) + d_inner * hidden)
    if group.variant == LinearVariant.MAMBA:
        d_inner, d_state = group.num_heads, group.head_dim_v
        dt_rank = math.ceil(hidden / 16)
        return float(hidden * 2 * d_inner + d_inner * (dt_rank + 2 * d_state) + dt_rank * d_inner
                     + d_inner * hidden)
    qk = 2 * (group.num_key_heads or group.num_heads) * group.head_dim_k
    v = group.num_heads * group.head_dim_v
    return float(hidden * (qk + 2 * v) + v * hidden)


def expert_params(model: ModelSpec) -> float:
    """Weights of one routed expert: 3 (gate, up, down) or 2 (ungated) x hidden x moe_intermediate_size."""
    if model.moe is None:
        return 0.0
    return float(model.moe.mlp_matrices * model.hidden_size * model.moe.moe_intermediate_size)


def moe_layers(model: ModelSpec) -> int:
    if model.moe is None:
        return 0
    return model.moe.num_moe_layers or model.num_hidden_layers - model.moe.num_dense_layers


def ffn_params_per_token(model: ModelSpec) -> float:
    """FFN weights one token goes through: dense layers, top-k routed + shared experts, router.

    Shared experts: num_shared_experts x shared_intermediate_size (moe_intermediate_size when
    that is 0). A dense model without ``intermediate_size`` falls back to params_active minus
    the mixers and the embeddings.
    """
    h = model.hidden_size
    moe = model.moe
    if moe is None:
        if model.intermediate_size:
            return 3.0 * h * model.intermediate_size * model.num_hidden_layers
        mixers = sum(g.count * projection_params(g, h) for g in model.layers)
        return max(model.params_active - mixers - 2.0 * model.vocab_size * h, 0.0)
    mats = moe.mlp_matrices
    dense = moe.num_dense_layers * mats * h * (moe.dense_intermediate_size or model.intermediate_size)
    shared = moe.num_shared_experts * mats * h * (moe.shared_intermediate_size or moe.moe_intermediate_size)
    routed = moe.num_experts_per_tok * expert_params(model)
    return dense + moe_layers(model) * (routed + shared + h * moe.num_experts)


def gemm_params_per_token(model: ModelSpec) -> float:
    """Weights every token multiplies through (mixers + FFN), without embeddings and LM head."""
    mixers = sum(g.count * projection_params(g, model.hidden_size) for g in model.layers)
    return mixers + ffn_params_per_token(model)


def routed_params_per_token(model: ModelSpec) -> float:
    """The part of ``gemm_params_per_token`` in routed experts' grouped GEMMs: top-k x expert x MoE layers."""
    if model.moe is None:
        return 0.0
    return moe_layers(model) * model.moe.num_experts_per_tok * expert_params(model)


def all_reduces(model: ModelSpec) -> int:
    """Tensor-parallel all-reduces per forward pass: one after every token mixer and one after every
    dense FFN, except that a parallel block (``parallel_attn``: mixer and dense FFN summed off one
    input) reduces both partial sums in one; MoE layers combine by all-to-all instead."""
    dense_ffn = model.num_hidden_layers - moe_layers(model)
    return model.num_hidden_layers + (0 if model.parallel_attn else dense_ffn)


def collectives(model: ModelSpec, gpus: int) -> int:
    """Collectives per forward pass over G GPUs: the all-reduces (``all_reduces``) and an all-to-all
    dispatch and combine per MoE layer; none on one GPU."""
    if gpus <= 1:
        return 0
    return all_reduces(model) + 2 * moe_layers(model)


def expected_distinct_experts(num_experts: int, top_k: int, picks: ArrayLike) -> NDArray[np.float64] | float:
    """E[distinct experts] when ``picks`` tokens each choose top_k of num_experts uniformly.

    Parameters
    ----------
    num_experts, top_k : n routed experts per MoE layer, k picked per token.
    picks : B, tokens routed together (a decode batch, or a prefill's length); any shape.

    Notes
    -----
    E = n (1 - (1 - k/n)^B): one token misses a given expert with probability 1 - k/n, B
    independent tokens with (1 - k/n)^B (docs/model.md#decode).

    Examples
    --------
    >>> expected_distinct_experts(8, 2, 2)
    3.5
    """
    b = np.asarray(picks, dtype=np.float64)
    out = num_experts * (1.0 - (1.0 - top_k / num_experts) ** b)
    return float(out) if out.ndim == 0 else out


def touched_experts(model: ModelSpec, tokens: ArrayLike) -> NDArray[np.float64] | float:
    """E[routed experts] ``tokens`` tokens touch in one MoE layer (0 for a dense model)."""
    if model.moe is None:
        return 0.0 * np.asarray(tokens, dtype=np.float64)
    return expected_distinct_experts(model.moe.num_experts, model.moe.num_experts_per_tok, tokens)


def weights_touched(model: ModelSpec, tokens: ArrayLike) -> NDArray[np.float64] | float:
    """Parameters read by a forward pass over ``tokens`` tokens (one batch or one prefill).

    params_total less the routed experts no token picked: non-expert weights (mixers, dense
    and shared FFN, embeddings, LM head) + E[distinct experts] x expert size per MoE layer.
    """
    t = np.asarray(tokens, dtype=np.float64)
    if model.moe is None:
        out = np.full_like(t, model.params_total)
    else:
        per_layer = expert_params(model)
        n = model.moe.num_experts
        missed = n - np.asarray(expected_distinct_experts(n, model.moe.num_experts_per_tok, t))
        out = np.maximum(model.params_total - missed * per_layer * moe_layers(model), 0.0)
    return float(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------------------------------
# Attention work per layer kind


def _pairs_window(start: NDArray[np.float64], end: NDArray[np.float64], window: float) -> NDArray[np.float64]:
    """Query-key pairs of queries at positions start+1..end, each seeing at most ``window`` keys.

    F(n) = sum_{j=1..n} min(j, W) = n(n+1)/2 for n <= W, W(W+1)/2 + (n - W) W beyond; the
    pairs are F(end) - F(start). With W = inf this is l p + l(l+1)/2 (causal over a prefix p).
    """
    def f(n: NDArray[np.float64]) -> NDArray[np.float64]:
        if math.isinf(window):
            return n * (n + 1) / 2
        return np.where(n <= window, n * (n + 1) / 2, window * (window + 1) / 2 + (n - window) * window)

    return f(end) - f(start)


def by_attention_class(model: ModelSpec, flops: Callable[[LayerGroup], NDArray[np.float64]]
                       ) -> dict[str, NDArray[np.float64]]:
    """``flops`` of every layer group, summed per attention op class (``attention_class``)."""
    out: dict[str, NDArray[np.float64]] = {}
    for g in model.layers:
        name = attention_class(g)
        out[name] = out[name] + flops(g) if name in out else flops(g)
    return out


def attention_class(group: LayerGroup) -> str:
    """The op class (``specs.hardware.OP_CLASSES``) of a group's attention kernels."""
    if isinstance(group, SwaGroup):
        return "attention_swa"
    if isinstance(group, GqaGroup):
        return "attention_full"
    if isinstance(group, MlaGroup):
        return "attention_mla"
    return "attention_linear"


def attention_flops(group: LayerGroup, lengths: ArrayLike, cached_prefix: ArrayLike = 0) -> NDArray[np.float64]:
    """Attention FLOPs of all layers of one group for l new tokens after a cached prefix p.

    GQA: 2 H (d_k + d_v) x pairs, pairs = l p + l(l+1)/2 (causal). SWA: the same with each query
    seeing at most W keys. MLA (prefill runs it as MHA): 2 H (nope + rope + v) x pairs. DSA: the
    indexer over all pairs, 2 x index_heads x index_head_dim x pairs, plus MLA in its absorbed
    form (key kv_lora_rank + rope, value kv_lora_rank) over at most index_topk keys per query.
    Linear (chunked form, chunk C): l H (c d_k d_v + C (d_k + d_v)), c = 4, or 6 for the delta rule.
    """
    length = np.asarray(lengths, dtype=np.float64)
    p = np.asarray(cached_prefix, dtype=np.float64)
    start, end = p + 0.0 * length, p + length
    if isinstance(group, GqaGroup | SwaGroup):
        window = group.sliding_window if isinstance(group, SwaGroup) else math.inf
        per_pair = 2.0 * group.num_attention_heads * (group.head_dim + group.v_head_dim)
        return group.count * per_pair * _pairs_window(start, end, window)
    if isinstance(group, MlaGroup):
        h = group.num_attention_heads
        if group.kind == AttentionKind.DSA:
            full = _pairs_window(start, end, math.inf)
            sparse = _pairs_window(start, end, group.index_topk or math.inf)
            indexer = 2.0 * (group.index_n_heads or 0) * (group.index_head_dim or 0) * full
            mqa = 2.0 * h * (2 * group.kv_lora_rank + group.qk_rope_head_dim) * sparse
            return group.count * (indexer + mqa)
        per_pair = 2.0 * h * (group.qk_nope_head_dim + group.qk_rope_head_dim + group.v_head_dim)
        return group.count * per_pair * _pairs_window(start, end, math.inf)
    dk, dv = group.head_dim_k, group.head_dim_v
    per_token = group.num_heads * (STATE_FLOPS[group.variant] * dk * dv + LINEAR_CHUNK * (dk + dv))
    return group.count * per_token * (length + 0.0 * p)
