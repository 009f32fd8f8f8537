"""Analytic prefill time T_prefill(l, cached_prefix) of any model on one instance.

A roofline with fixed costs (DESIGN.md "The models inside", PAPER.md Eq. 1):

    T_prefill(l, p) = overhead + max(compute, memory) + activations + comm

    compute     = GEMM FLOPs / (G x GEMM rate(weight dtype))
                  + attention FLOPs / (peak(bf16) x G x e_compute)
    GEMM rate   = peak(bf16) x e_compute for bf16 weights; for FP8/FP4 weights
                  max(peak(dtype) x e_compute x e_low_precision, peak(bf16) x e_compute)
    memory      = (weights read + KV/state written + cached-prefix KV read) / (HBM B/s x G x e_memory)
    activations = activation bytes per GPU / (HBM B/s x e_memory)
    comm        = collective bytes per GPU / (scale-up B/s per direction x e_comm)

for l new tokens after a cached prefix of p tokens, on an instance of G GPUs with tensor and
expert parallelism over all of them. Work is counted per layer group from the architecture fields
(dispatch on the group's attention kind, never on the model name); the efficiencies and the
overhead belong to the serving stack on the GPU (``GpuSpec.efficiency``), never to a model.
The op classes with their own factor are the ones Table 3 identifies (Table 5 checks): bf16 GEMMs and
attention (e_compute) and low-precision GEMMs (e_low_precision relative to it); see
benchmarks/data/README.md for the fit and the public kernel figures behind it.

``activations`` is the memory-bound traffic of the kernels between the GEMMs (norms, residual
adds, all-reduce buffers, MoE gather and top-k sum). Under tensor parallelism every GPU runs it
on every token (it is replicated, not sharded) and it does not overlap the GEMMs, so it is added,
not max-ed. Without it a single set of factors cannot reconcile attention-heavy models with
small-active-parameter MoE models (see benchmarks/data/README.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core import kv
from prfaas_plan.core.timing import PrefillTimer, Source
from prfaas_plan.specs.hardware import Efficiency, InstanceSpec
from prfaas_plan.specs.model import (
    AttentionKind,
    DType,
    GqaGroup,
    LayerGroup,
    LinearVariant,
    MlaGroup,
    ModelSpec,
    SwaGroup,
)

ACT_BYTES = DType.BF16.bytes  # activations are bf16, in HBM and on the scale-up link
LINEAR_CHUNK = 64  # chunk length of the chunked linear-attention kernels (flash-linear-attention)
# FLOPs per token, head and d_k x d_v of the recurrent state: 2 to read it (q S), 2 to update it
# (k^T v); the delta rule (KDA, GDN) also predicts v from the state first (k S), 2 more.
STATE_FLOPS = {LinearVariant.KDA: 6, LinearVariant.GDN: 6, LinearVariant.LIGHTNING: 4,
                LinearVariant.MAMBA2: 4, LinearVariant.MAMBA: 6}
# Activation traffic per token and layer, in hidden-size bf16 vectors read or written on every GPU
# (an estimate from the kernel sequence of a TP layer, SGLang-style): each sub-layer (mixer, FFN)
# does a fused residual-add + norm (read 2, write 2), reads its GEMM input, writes its GEMM output
# and the all-reduce result: 7. A fused MoE reads the token once per picked expert, writes the
# expert's output and reads it back for the top-k sum: 3 per pick.
ACT_VECTORS_PER_SUBLAYER = 7
ACT_VECTORS_PER_EXPERT_PICK = 3
BOUNDS = ("overhead", "compute", "memory", "comm")


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


def expert_rows(model: ModelSpec, tokens: ArrayLike) -> NDArray[np.float64]:
    """Rows of one routed expert's GEMM for ``tokens`` tokens: l k / E (tokens where dense)."""
    t = np.asarray(tokens, dtype=np.float64)
    if model.moe is None:
        return t
    return t * model.moe.num_experts_per_tok / model.moe.num_experts


def collectives(model: ModelSpec, gpus: int) -> int:
    """Collectives per forward pass over G GPUs: an all-reduce after every mixer and dense FFN, an
    all-to-all dispatch and combine per MoE layer; none on one GPU."""
    if gpus <= 1:
        return 0
    n_moe = moe_layers(model)
    return 2 * model.num_hidden_layers - n_moe + 2 * n_moe


def expected_distinct_experts(num_experts: int, top_k: int, picks: ArrayLike) -> NDArray[np.float64] | float:
    """E[distinct experts] when ``picks`` tokens each choose top_k of num_experts uniformly.

    Parameters
    ----------
    num_experts, top_k : n routed experts per MoE layer, k picked per token.
    picks : B, tokens routed together (a decode batch, or a prefill's length); any shape.

    Notes
    -----
    E = n (1 - (1 - k/n)^B): one token misses a given expert with probability 1 - k/n, B
    independent tokens with (1 - k/n)^B (DESIGN.md "Decode").

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


# ---------------------------------------------------------------------------------------------
# Work and time


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillWork:
    """What a prefill does, independent of efficiencies (arrays over l).

    gemm_flops (dense: mixers, dense and shared FFN, LM head) and moe_flops (routed experts) and
    attention_flops per op class for the whole instance, with the GEMMs' rows (tokens, and l k / E
    for a routed expert); memory_bytes read or written in HBM (whole instance); activation_bytes
    moved in HBM per GPU (replicated, see module doc); comm_bytes sent per GPU per direction over the
    scale-up link in ``collectives`` collectives.
    """

    gemm_flops: NDArray[np.float64]
    moe_flops: NDArray[np.float64]
    attention: tuple[tuple[str, NDArray[np.float64]], ...]
    tokens: NDArray[np.float64]
    expert_rows: NDArray[np.float64]
    memory_bytes: NDArray[np.float64]
    activation_bytes: NDArray[np.float64]
    comm_bytes: NDArray[np.float64]
    collectives: int
    weight_dtype: DType
    moe_layers: int = 0
    experts: NDArray[np.float64] | float = 0.0  # E[routed experts the tokens touch] per MoE layer

    @property
    def attention_flops(self) -> NDArray[np.float64]:
        return sum((f for _, f in self.attention), np.zeros_like(self.tokens))


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillResult:
    """T_prefill(l) and its parts, in seconds, arrays over l.

    seconds = overhead_s + max(compute_s, memory_s) + activation_s + comm_s; ``bound`` names
    the largest of overhead, compute, memory (memory_s + activation_s, all HBM traffic) and comm.
    """

    seconds: NDArray[np.float64]
    compute_s: NDArray[np.float64]
    memory_s: NDArray[np.float64]
    activation_s: NDArray[np.float64]
    comm_s: NDArray[np.float64]
    overhead_s: NDArray[np.float64]
    bound: NDArray[np.str_]


def collective_bytes(model: ModelSpec, tokens: ArrayLike, gpus: int) -> NDArray[np.float64]:
    """Bytes each GPU sends (per direction) for ``tokens`` tokens through all layers.

    Tensor parallel over G GPUs: after every token mixer and every dense FFN, a ring all-reduce
    of tokens x hidden bf16 values, 2 (G-1)/G of it per GPU. Expert parallel MoE layers: an
    all-to-all dispatch (fp8 with fp8 weights, else bf16) and bf16 combine of each token's top-k
    activations, tokens sharded over the GPUs, (G-1)/G of the picks leaving a GPU:
    (G-1)/G x tokens/G x k x hidden x (dispatch + combine bytes).
    """
    t = np.asarray(tokens, dtype=np.float64)
    if gpus <= 1:
        return np.zeros_like(t)
    g = float(gpus)
    h = model.hidden_size
    all_reduce = 2.0 * (g - 1) / g * t * h * ACT_BYTES
    n_moe = moe_layers(model)
    out = all_reduce * (model.num_hidden_layers + model.num_hidden_layers - n_moe)
    if model.moe is not None:
        dispatch = DType.FP8.bytes if model.weight_dtype in (DType.FP8, DType.FP4) else ACT_BYTES
        a2a = (g - 1) / g * t / g * model.moe.num_experts_per_tok * h * (dispatch + ACT_BYTES)
        out = out + n_moe * a2a
    return out


def activation_bytes(model: ModelSpec, tokens: ArrayLike) -> NDArray[np.float64]:
    """HBM bytes each GPU moves between the GEMMs for ``tokens`` tokens through all layers.

    tokens x hidden x 2 B x (2 x 7 per layer + 3 x top-k per MoE layer); see
    ACT_VECTORS_PER_SUBLAYER and ACT_VECTORS_PER_EXPERT_PICK.
    """
    t = np.asarray(tokens, dtype=np.float64)
    top_k = model.moe.num_experts_per_tok if model.moe else 0
    vectors = (2 * ACT_VECTORS_PER_SUBLAYER * model.num_hidden_layers
               + ACT_VECTORS_PER_EXPERT_PICK * top_k * moe_layers(model))
    return vectors * model.hidden_size * ACT_BYTES * t


def prefill_work(model: ModelSpec, lengths: ArrayLike, cached_prefix: ArrayLike = 0, *, gpus: int) -> PrefillWork:
    """FLOPs, HBM bytes and link bytes of prefilling l new tokens after a cached prefix p.

    GEMMs: 2 x (mixer + FFN params per token) x l, plus the LM head once (first output token).
    HBM: weights touched by l tokens, read once (a lower bound with chunked prefill), + the KV
    and states written (``core.kv`` transfer bytes) + the cached prefix's KV read.
    """
    length = np.asarray(lengths, dtype=np.float64)
    p = np.asarray(cached_prefix, dtype=np.float64) + 0.0 * length
    routed = routed_params_per_token(model)
    gemm = 2.0 * (gemm_params_per_token(model) - routed) * length + 2.0 * model.vocab_size * model.hidden_size
    by_class: dict[str, NDArray[np.float64]] = {}
    for g in model.layers:
        name = attention_class(g)
        by_class[name] = by_class.get(name, np.zeros_like(length)) + attention_flops(g, length, p)
    f = kv.footprint(model)
    written = np.asarray(f.transfer_bytes(length + p, p), dtype=np.float64)
    prefix_read = f.kv_bytes_per_token * p
    weights = np.asarray(model.weight_bytes(weights_touched(model, length)), dtype=np.float64)  # scales included
    return PrefillWork(gemm_flops=gemm, moe_flops=2.0 * routed * length, attention=tuple(by_class.items()),
                       tokens=length, expert_rows=expert_rows(model, length),
                       memory_bytes=weights + written + prefix_read,
                       activation_bytes=activation_bytes(model, length),
                       comm_bytes=collective_bytes(model, length, gpus), collectives=collectives(model, gpus),
                       weight_dtype=model.weight_dtype, moe_layers=moe_layers(model),
                       experts=touched_experts(model, length))


def bound_of(overhead_s: NDArray[np.float64], compute_s: NDArray[np.float64], memory_s: NDArray[np.float64],
             comm_s: NDArray[np.float64]) -> NDArray[np.str_]:
    """Name of the largest of the four parts (ties go to the first in BOUNDS)."""
    parts = np.stack(np.broadcast_arrays(overhead_s, compute_s, memory_s, comm_s))
    return np.asarray(BOUNDS)[np.argmax(parts, axis=0)]


def time_from_work(work: PrefillWork, instance: InstanceSpec, efficiency: Efficiency | None = None) -> PrefillResult:
    """T_prefill = overhead + max(compute, memory) + activations + comm for precomputed work.

    compute = [dense GEMM FLOPs / rate_dense x (1 + M_half / l) + routed FLOPs / rate_moe
    + sum over attention classes of FLOPs / (peak_bf16 x e_class)] / G (a routed expert's few rows
    are bounded by its weight reads, in the memory term);
    comm = bytes / (scale-up x e_comm) + collectives x latency floor; the fixed cost is the
    stack's per prefill plus, per MoE layer, a cost and a cost per routed expert the tokens touch
    (routing, permutation, dispatch, and a grouped GEMM's tiles of each expert however few its rows)."""
    gpu, g = instance.gpu, instance.gpus
    e = efficiency or gpu.efficiency
    half = e.gemm_half_tokens
    dense = work.gemm_flops / gpu.gemm_flops_per_s(work.weight_dtype, e)
    if half:
        dense = dense * (1.0 + half / np.maximum(work.tokens, 1.0))
    compute = dense
    if work.moe_flops.any():  # few rows per expert: bounded by the experts' weight reads (the memory term)
        compute = compute + work.moe_flops / gpu.gemm_flops_per_s(work.weight_dtype, e, op="moe")
    for name, flops in work.attention:
        compute = compute + flops / (gpu.bf16_flops * gpu.class_efficiency(name, e))
    compute = compute / g
    memory = work.memory_bytes / (gpu.hbm_bytes_per_s * g * e.memory)
    activation = work.activation_bytes / (gpu.hbm_bytes_per_s * e.memory)
    comm = work.comm_bytes / (gpu.scaleup_bytes_per_s * e.comm) + work.collectives * e.collective_latency_s
    overhead = e.prefill_overhead_s + work.moe_layers * (e.moe_layer_s + work.experts * e.moe_expert_s) \
        + np.zeros_like(compute)
    seconds = overhead + np.maximum(compute, memory) + activation + comm
    return PrefillResult(seconds=seconds, compute_s=compute, memory_s=memory, activation_s=activation, comm_s=comm,
                         overhead_s=overhead, bound=bound_of(overhead, compute, memory + activation, comm))


def prefill_time(model: ModelSpec, instance: InstanceSpec, lengths: ArrayLike, cached_prefix: ArrayLike = 0, *,
                 efficiency: Efficiency | None = None) -> PrefillResult:
    """Analytic T_prefill(l, p) on ``instance``, vectorised over l (tokens) and p; seconds.

    Parameters
    ----------
    model, instance : specs; the instance's GPU carries the efficiencies and overhead.
    lengths : new (uncached) tokens l, any shape.
    cached_prefix : tokens p already in the prefix cache (broadcast against l).
    efficiency : replaces ``instance.gpu.efficiency`` (used by calibration).

    Notes
    -----
    T = overhead + max(compute, memory) + activations + comm; see the module docstring and
    ``prefill_work``.
    """
    work = prefill_work(model, lengths, cached_prefix, gpus=instance.gpus)
    return time_from_work(work, instance, efficiency)


def efficiency_detail(instance: InstanceSpec) -> str:
    return f"{instance.gpu.name} efficiency: {instance.gpu.efficiency.source}"


def analytic_timer(model: ModelSpec, instance: InstanceSpec) -> PrefillTimer:
    """The analytic T_prefill(l) as a ``PrefillTimer`` (Source.ANALYTIC) with its provenance."""

    def seconds(length: NDArray[np.float64]) -> NDArray[np.float64]:
        return prefill_time(model, instance, length).seconds

    return PrefillTimer(Source.ANALYTIC, efficiency_detail(instance), seconds)


def with_efficiency(instance: InstanceSpec, efficiency: Efficiency) -> InstanceSpec:
    """The same instance with other efficiency factors (the GPU spec is frozen)."""
    return replace(instance, gpu=replace(instance.gpu, efficiency=efficiency))
