"""Analytic decode step time, BS_max for a TPOT SLO, and per-instance decode throughput.

    T_step(B, c) = decode overhead + layers x decode_layer_s
                   + max(GEMM FLOPs / (G x GEMM rate) + attention FLOPs / (peak(bf16) x G x e_attention),
                         bytes / (HBM B/s x G x e_memory)) + comm

for a batch of B requests, each generating one token at context c, on an instance of G GPUs:

- FLOPs = B x (2 x GEMM params per token + 2 x LM head) in the weight dtype (GEMM rate as in
  ``core.prefill``: bf16, or FP8/FP4 with e_low_precision) + B x attention at context c per layer kind;
- bytes = weights touched (MoE: E[distinct experts] = n (1 - (1 - k/n)^B) per MoE layer, plus
  all non-expert weights) + B x S_kv(c) (the KV and recurrent state read, ``core.kv``);
- comm  = the prefill collectives for B tokens (``core.prefill.collective_bytes``), each with the
  stack's latency floor on more than one GPU (``core.prefill.collectives``);
- layers x decode_layer_s: the step's floor of kernel launches per layer, which a small batch at a
  high TP cannot hide; per MoE layer, the stack's cost and its cost per routed expert for one
  token's top-k (the public decode steps are at batch 1; the cost is held over the batch).

BS_max (docs/model.md#decode) = the largest B with T_step(B, c) <= TPOT SLO and
B x S_kv(c_max) <= HBM x G x memory_fraction - weights. Theta_pd-d of one instance is
BS_max / (T_step x L_out) requests/s (Eq. 5, docs/model.md#throughput-model).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from prfaas_plan.core import kv
from prfaas_plan.core.memory import DEFAULT_MEMORY_FRACTION, holding
from prfaas_plan.core.prefill import bound_of, collective_bytes
from prfaas_plan.core.work import (
    STATE_FLOPS,
    by_attention_class,
    collectives,
    gemm_params_per_token,
    moe_layers,
    weights_touched,
)
from prfaas_plan.specs.hardware import Efficiency, InstanceSpec
from prfaas_plan.specs.model import AttentionKind, GqaGroup, LayerGroup, MlaGroup, ModelSpec, SwaGroup

MAX_BATCH = 65_536  # search limit for BS_max


def decode_attention_flops(group: LayerGroup, context: ArrayLike) -> NDArray[np.float64]:
    """Attention FLOPs of one new token at context c, all layers of one group.

    GQA: 2 H (d_k + d_v) c; SWA: c capped at the window; MLA (absorbed, as engines decode it):
    2 H (2 kv_lora_rank + rope) c; DSA: indexer 2 x index_heads x index_head_dim x c plus the
    absorbed MLA over min(c, index_topk) keys; linear: a state read and update, c_v H d_k d_v.
    """
    c = np.asarray(context, dtype=np.float64)
    if isinstance(group, GqaGroup | SwaGroup):
        seen = np.minimum(c, group.sliding_window) if isinstance(group, SwaGroup) else c
        return group.count * 2.0 * group.num_attention_heads * (group.head_dim + group.v_head_dim) * seen
    if isinstance(group, MlaGroup):
        mqa = 2.0 * group.num_attention_heads * (2 * group.kv_lora_rank + group.qk_rope_head_dim)
        if group.kind == AttentionKind.DSA:
            indexer = 2.0 * (group.index_n_heads or 0) * (group.index_head_dim or 0) * c
            return group.count * (indexer + mqa * np.minimum(c, group.index_topk or math.inf))
        return group.count * mqa * c
    per_token = group.num_heads * STATE_FLOPS[group.variant] * group.head_dim_k * group.head_dim_v
    return group.count * per_token + 0.0 * c


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeWork:
    """FLOPs and HBM bytes of one decode step (whole instance), link bytes per GPU; arrays over B.

    flops = gemm_flops + attention_flops (kept apart: they run at different rates)."""

    flops: NDArray[np.float64]
    gemm_flops: NDArray[np.float64]
    attention_flops: NDArray[np.float64]
    memory_bytes: NDArray[np.float64]
    comm_bytes: NDArray[np.float64]
    attention: tuple[tuple[str, NDArray[np.float64]], ...]  # attention_flops by op class
    collectives: int = 0
    moe_layers: int = 0
    experts: float = 0.0  # routed experts whose fixed cost a step pays per MoE layer (top-k: see decode_work)


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeStep:
    """T_step(B, c) and its parts in seconds (arrays broadcast over B and c); ``bound`` the largest."""

    seconds: NDArray[np.float64]
    compute_s: NDArray[np.float64]
    memory_s: NDArray[np.float64]
    comm_s: NDArray[np.float64]
    overhead_s: NDArray[np.float64]
    bound: NDArray[np.str_]


def decode_work(model: ModelSpec, batch: ArrayLike, context: ArrayLike, *, gpus: int) -> DecodeWork:
    """FLOPs, bytes moved and link bytes of one step for B requests at context c (tokens).

    bytes = weights touched by B tokens x weight bytes + B x S_kv(c), the KV and recurrent
    state each request reads (``core.kv.footprint``, the model's dtypes).
    """
    b = np.asarray(batch, dtype=np.float64)
    c = np.asarray(context, dtype=np.float64)
    gemm = 2.0 * gemm_params_per_token(model) + 2.0 * model.vocab_size * model.hidden_size
    by_class = by_attention_class(model, lambda g: decode_attention_flops(g, c))
    attention = sum(by_class.values(), np.zeros_like(c))
    weights = np.asarray(model.weight_bytes(weights_touched(model, b)), dtype=np.float64)  # scales included
    kv_read = b * np.asarray(kv.footprint(model).s_kv(c), dtype=np.float64)
    return DecodeWork(flops=b * (gemm + attention), gemm_flops=b * gemm + 0.0 * c, attention_flops=b * attention,
                      memory_bytes=weights + kv_read,
                      comm_bytes=np.asarray(collective_bytes(model, b, gpus)) + 0.0 * c,
                      attention=tuple((n, b * f) for n, f in by_class.items()), collectives=collectives(model, gpus),
                      moe_layers=moe_layers(model),
                      # one token's top-k: the public steps are at batch 1, and a fused decode step
                      # (CUDA graph) is not measured to pay per expert as a batch touches more
                      experts=float(model.moe.num_experts_per_tok) if model.moe else 0.0)


def decode_step(model: ModelSpec, instance: InstanceSpec, batch: ArrayLike, context: ArrayLike, *,
                efficiency: Efficiency | None = None) -> DecodeStep:
    """T_step(B, c) in seconds on ``instance``, vectorised over B and c (broadcast).

    Notes
    -----
    T_step = decode_overhead + max(GEMM FLOPs / (G x GEMM rate(weight dtype)) + attention FLOPs /
    (peak(bf16) x G x e_c), bytes / (HBM x G x e_m)) + comm bytes / (scale-up x e_comm); see ``decode_work``.
    """
    return step_from_work(decode_work(model, batch, context, gpus=instance.gpus), model, instance, efficiency)


def step_from_work(work: DecodeWork, model: ModelSpec, instance: InstanceSpec,
                   efficiency: Efficiency | None = None) -> DecodeStep:
    gpu, g = instance.gpu, instance.gpus
    e = efficiency or gpu.efficiency
    compute = work.gemm_flops / gpu.gemm_flops_per_s(model.weight_dtype, e)
    for name, flops in work.attention:
        compute = compute + flops / (gpu.bf16_flops * gpu.class_efficiency(name, e))
    compute = compute / g
    memory = work.memory_bytes / (gpu.hbm_bytes_per_s * g * e.memory)
    comm = work.comm_bytes / (gpu.scaleup_bytes_per_s * e.comm) + work.collectives * e.collective_latency_s
    compute, memory, comm = np.broadcast_arrays(compute, memory, comm)
    overhead = (e.decode_overhead_s + model.num_hidden_layers * e.decode_layer_s
                + work.moe_layers * (e.moe_layer_s + work.experts * e.moe_expert_s)) + np.zeros_like(compute)
    seconds = overhead + np.maximum(compute, memory) + comm
    return DecodeStep(seconds=seconds, compute_s=compute, memory_s=np.asarray(memory), comm_s=np.asarray(comm),
                      overhead_s=overhead, bound=bound_of(overhead, compute, memory, comm))


def memory_batch_limit(model: ModelSpec, instance: InstanceSpec, max_context: float, *,
                       memory_fraction: float = DEFAULT_MEMORY_FRACTION) -> int:
    """Largest B whose KV fits: floor((HBM x G x fraction - weights) / S_kv(c_max)); 0 where not one
    request's does beside the weights (``core.memory.holding``).

    KV is taken as spread over the instance's HBM (attention data-parallel or KV heads sharded);
    an engine that replicates the MLA latent on every tensor-parallel rank fits G times fewer.
    """
    h = holding(model, instance, max_context, memory_fraction=memory_fraction)
    if not h.fits:  # the one check of ``core.memory``: not even one request's KV beside the weights
        return 0
    free = h.usable_bytes - h.weights_bytes
    return int(min(max(free // h.kv_bytes, 1), MAX_BATCH)) if h.kv_bytes > 0 else MAX_BATCH


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeCapacity:
    """BS_max for a TPOT SLO and what one instance then serves.

    bs_slo: largest B meeting the SLO (ignoring memory); bs_memory: largest B whose KV fits;
    bs_max = min of both; binding: "tpot" or "memory" (or "weights" when they do not fit, or
    "overhead" when even B = 1 misses the SLO). step_s at max(bs_max, 1); tokens_per_s
    (= B / T_step) and requests_per_s (= B / (T_step x L_out), Theta_pd-d per instance, Eq. 5) at bs_max.
    """

    bs_max: int
    bs_slo: int
    bs_memory: int
    binding: str
    step_s: float
    tokens_per_s: float
    requests_per_s: float
    context_tokens: float
    tpot_s: float
    output_tokens: float


def decode_capacity(model: ModelSpec, instance: InstanceSpec, *, tpot_s: float, context: float,
                    output_tokens: float, max_context: float | None = None,
                    memory_fraction: float = DEFAULT_MEMORY_FRACTION,
                    efficiency: Efficiency | None = None) -> DecodeCapacity:
    """BS_max = max B with T_step(B, c) <= tpot_s and B x S_kv(max_context) within free HBM.

    T_step is non-decreasing in B, so the SLO limit is found on the vectorised grid B = 1..limit.
    """
    bs_memory = memory_batch_limit(model, instance, max_context or context, memory_fraction=memory_fraction)
    grid = np.arange(1, MAX_BATCH + 1, dtype=np.float64)
    with np.errstate(over="ignore"):  # a context beyond a float's reach: steps of inf, no batch meets the SLO
        steps = decode_step(model, instance, grid, context, efficiency=efficiency).seconds
    ok = np.nonzero(steps <= tpot_s)[0]
    bs_slo = int(ok[-1] + 1) if ok.size else 0
    bs_max = min(bs_slo, bs_memory)
    if bs_max == 0:
        binding = "weights" if bs_memory == 0 else "overhead"
    else:
        binding = "memory" if bs_memory < bs_slo else "tpot"
    step = float(steps[max(bs_max, 1) - 1])
    tokens = bs_max / step if bs_max else 0.0
    return DecodeCapacity(bs_max=bs_max, bs_slo=bs_slo, bs_memory=bs_memory, binding=binding, step_s=step,
                          tokens_per_s=tokens, requests_per_s=tokens / output_tokens, context_tokens=float(context),
                          tpot_s=tpot_s, output_tokens=float(output_tokens))


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeStaging:
    """Decode with staging: the KV slot of an offloaded request is reserved before its KV lands.

    A slot is held for hold_s = T_step x L_out while decoding, and an offloaded request (share
    p) holds one for staging_s (tau, its unloaded transfer + RTT + handoff) before that, so by
    Little's law the slots in use per instance are r (hold_s + p w tau) and the decoding batch
    r hold_s, where w (``slot_weight``) is a staged request's KV over one decode slot's (the staged
    are the long requests: their KV at their length, against a slot's at the mean context).
    Per instance

        r_d = min(bs_slo / hold_s, bs_memory / (hold_s + p w tau))

    with T_step at the unstaged BS_max; ``bs_staged`` = r_d x hold_s (the mean decoding batch it
    allows, <= ``bs_unstaged``) and ``requests_per_s`` = r_d. With p tau = 0 it is the unstaged
    rate exactly."""

    staging_s: float
    p_offload: float
    hold_s: float
    factor: float  # r_d / (BS_max / hold_s), in (0, 1]
    requests_per_s: float
    bs_unstaged: float
    bs_staged: float
    slot_weight: float = 1.0  # w: a staged request's KV in decode slots

    @property
    def bs_lost(self) -> float:
        return self.bs_unstaged - self.bs_staged


_FINITE = 1e300  # a staging time of an all-but-closed link is kept finite (its share p is ~0 there)


def staging_time(s_kv_bytes: float, link_bytes_per_s: float, *, rtt_s: float = 0.0, handoff_s: float = 0.0) -> float:
    """tau = S_kv / B_out + RTT + handoff: an offloaded request's unloaded transfer (no queueing on
    the link), the time its reserved decode slot waits for the KV."""
    with np.errstate(over="ignore", divide="ignore"):
        tau = float(np.float64(s_kv_bytes) / np.float64(link_bytes_per_s)) + rtt_s + handoff_s
    return 0.0 if math.isnan(tau) else min(tau, _FINITE)


def decode_staging(*, requests_per_s: float, bs_max: float, bs_memory: float, step_s: float, output_tokens: float,
                   p_offload: float, staging_s: float, slot_weight: float = 1.0) -> DecodeStaging:
    """r_d of ``DecodeStaging`` from a derived decode capacity (BS_max = min(bs_slo, bs_memory),
    its T_step and requests_per_s = BS_max / (T_step L_out)).

    r_d = requests_per_s x min(1, bs_memory hold / (BS_max (hold + p tau))): where bs_slo binds
    the SLO term is BS_max / hold, so the min is the formula's; the unstaged rate is kept bit for bit
    where staging does not bind."""
    hold = step_s * output_tokens
    staged = p_offload * staging_s * slot_weight
    factor = 1.0 if bs_max <= 0 else min(1.0, bs_memory * hold / (bs_max * (hold + staged)))
    return DecodeStaging(staging_s=staging_s, p_offload=p_offload, hold_s=hold, factor=factor,
                         requests_per_s=requests_per_s * factor if factor < 1.0 else requests_per_s,
                         bs_unstaged=float(bs_max), bs_staged=float(bs_max) * factor, slot_weight=slot_weight)
