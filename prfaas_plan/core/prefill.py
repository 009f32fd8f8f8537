"""Analytic prefill time T_prefill(l, cached_prefix) of any model on one instance.

A roofline with fixed costs (docs/model.md#time-model, Eq. 1, docs/model.md#kv-throughput-and-egress):

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

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core import kv
from prfaas_plan.core.timing import PrefillTimer, Source
from prfaas_plan.core.work import (  # noqa: F401 (re-exported: the work counts are read as prefill's)
    LINEAR_CHUNK,
    STATE_FLOPS,
    all_reduces,
    attention_class,
    attention_flops,
    by_attention_class,
    collectives,
    expected_distinct_experts,
    expert_params,
    ffn_params_per_token,
    gemm_params_per_token,
    moe_layers,
    projection_params,
    routed_params_per_token,
    touched_experts,
    weights_touched,
)
from prfaas_plan.specs.hardware import Efficiency, InstanceSpec
from prfaas_plan.specs.model import DType, ModelSpec

ACT_BYTES = DType.BF16.bytes  # activations are bf16, in HBM and on the scale-up link
# Activation traffic per token and layer, in hidden-size bf16 vectors read or written on every GPU
# (an estimate from the kernel sequence of a TP layer, SGLang-style): each sub-layer (mixer, FFN)
# does a fused residual-add + norm (read 2, write 2), reads its GEMM input, writes its GEMM output
# and the all-reduce result: 7. A fused MoE reads the token once per picked expert, writes the
# expert's output and reads it back for the top-k sum: 3 per pick.
ACT_VECTORS_PER_SUBLAYER = 7
ACT_VECTORS_PER_EXPERT_PICK = 3
BOUNDS = ("overhead", "compute", "memory", "comm")


# ---------------------------------------------------------------------------------------------
# Work and time


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillWork:
    """What a prefill does, independent of efficiencies (arrays over l).

    gemm_flops (dense: mixers, dense and shared FFN, LM head) and moe_flops (routed experts) and
    attention_flops per op class for the whole instance, with the dense GEMMs' rows (tokens);
    memory_bytes read or written in HBM (whole instance); activation_bytes
    moved in HBM per GPU (replicated, see module doc); comm_bytes sent per GPU per direction over the
    scale-up link in ``collectives`` collectives.
    """

    gemm_flops: NDArray[np.float64]
    moe_flops: NDArray[np.float64]
    attention: tuple[tuple[str, NDArray[np.float64]], ...]
    tokens: NDArray[np.float64]
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

    Tensor parallel over G GPUs: after every token mixer and every dense FFN (once per layer for a
    parallel block, ``core.work.all_reduces``), a ring all-reduce of tokens x hidden bf16 values,
    2 (G-1)/G of it per GPU. Expert parallel MoE layers: an
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
    out = all_reduce * all_reduces(model)
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
    by_class = by_attention_class(model, lambda g: attention_flops(g, length, p))
    f = kv.footprint(model)
    written = np.asarray(f.transfer_bytes(length + p, p), dtype=np.float64)
    prefix_read = f.kv_bytes_per_token * p
    weights = np.asarray(model.weight_bytes(weights_touched(model, length)), dtype=np.float64)  # scales included
    return PrefillWork(gemm_flops=gemm, moe_flops=2.0 * routed * length, attention=tuple(by_class.items()),
                       tokens=length,
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
