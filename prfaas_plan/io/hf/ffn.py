"""FFN and mixture of experts: which layers are MoE, expert widths, shared experts, weights."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prfaas_plan.io.hf.config import FFN_ONLY_DENSE, FFN_ONLY_MOE, Cfg

# Activations of non-gated MLPs (two matrices, not three): squared ReLU (Nemotron-H).
_NON_GATED_ACTS = ("relu2",)
# Fields only MoE architectures set (DeepSeek-V3 / Kimi, Qwen-MoE, Mixtral, Nemotron-H): with any of
# them and no expert count, the config is an MoE whose experts cannot be counted, not a dense model.
_MOE_FIELDS = ("moe_intermediate_size", "num_experts_per_tok", "num_experts_per_token", "experts_per_token",
               "moe_topk", "first_k_dense_replace", "n_shared_experts", "num_shared_experts",
               "shared_expert_intermediate_size", "moe_shared_expert_intermediate_size", "moe_layer_freq",
               "n_group", "topk_group", "routed_scaling_factor", "decoder_sparse_step", "expert_layer_period")


@dataclass
class Ffn:
    moe: dict[str, Any] | None
    kinds: list[str]  # "moe", "dense" or "none" per decoder layer
    dense_params: int
    expert_params: int
    moe_fixed_params: int  # router + shared experts, per MoE layer
    top_k: int
    router_params: int  # the gate, per MoE layer


def ffn(c: Cfg, layer_kinds: list[str], notes: list[str]) -> Ffn:
    h = c.int("hidden_size")
    n = len(layer_kinds)
    act_key = c.first("mlp_hidden_act", "hidden_act")
    act = c.get(act_key) if act_key else "silu"
    mats = 2 if act in _NON_GATED_ACTS else 3  # up (+ gate) + down
    experts_key = c.first("n_routed_experts", "num_experts", "num_local_experts", "moe_num_experts")
    if experts_key is not None and c.get(experts_key) == 0:  # some dense configs write 0 experts
        experts_key = None
    pattern = c.has("hybrid_override_pattern")
    kinds = ["moe" if k == FFN_ONLY_MOE else "dense" if k == FFN_ONLY_DENSE else "none" for k in layer_kinds] \
        if pattern else ["moe" if experts_key else "dense"] * n
    if experts_key is None:
        moe_field = next((k for k in _MOE_FIELDS if c.get(k) not in (None, 0, False, [])), None)
        if moe_field is not None:
            raise c.fail(moe_field, f"{c.get(moe_field)!r} describes mixture-of-experts layers, but the expert "
                                    "count (n_routed_experts / num_experts / num_local_experts) is missing")
        if "moe" in kinds:
            raise c.fail("hybrid_override_pattern", "has MoE layers (E) but no n_routed_experts / num_experts")
        inter = c.int("intermediate_size") if "dense" in kinds else 0
        return Ffn(None, kinds, mats * h * inter, 0, 0, 0, 0)

    experts = c.int(experts_key)
    top_k = c.int("num_experts_per_tok", "num_experts_per_token", "experts_per_token", "moe_topk")
    if top_k > experts:
        raise c.fail(c.first("num_experts_per_tok", "num_experts_per_token", "experts_per_token", "moe_topk")
                     or "num_experts_per_tok", f"{top_k} experts per token but only {experts} experts ({experts_key})")
    width_key = c.first("moe_intermediate_size", "intermediate_size")
    if width_key is None:
        raise c.fail("moe_intermediate_size", "MoE layers need moe_intermediate_size (or intermediate_size)")
    width = c.int(width_key)
    if not pattern:
        kinds = _moe_layers(c, n)
    # shared experts: a count of expert-wide MLPs, or one MLP of a given width
    if c.has("shared_expert_intermediate_size") or c.has("moe_shared_expert_intermediate_size") \
            or c.has("shared_intermediate_size"):
        s_width = c.int("shared_expert_intermediate_size", "moe_shared_expert_intermediate_size",
                        "shared_intermediate_size", minimum=0)
        n_shared = (c.opt_int("n_shared_experts", "num_shared_experts", minimum=0) or 1) if s_width else 0
    else:
        n_shared = c.opt_int("n_shared_experts", "num_shared_experts", minimum=0) or 0
        s_width = width if n_shared else 0
    n_dense = kinds.count("dense")
    moe: dict[str, Any] = {"num_experts": experts, "num_experts_per_tok": top_k, "moe_intermediate_size": width}
    if n_shared:
        moe |= {"num_shared_experts": n_shared, "shared_intermediate_size": s_width}
    dense_width = 0
    if n_dense:
        dense_width = c.int("intermediate_size")
        moe |= {"num_dense_layers": n_dense, "dense_intermediate_size": dense_width}
    if mats == 2:
        notes.append(f"MLPs and experts are not gated ({act}): two matrices each.")
        moe["gated"] = False
    return Ffn(moe, kinds, mats * h * dense_width, mats * h * width,
               h * experts + n_shared * mats * h * s_width, top_k, h * experts)


def _moe_layers(c: Cfg, n: int) -> list[str]:
    """Which decoder layers are MoE (the rest dense), from whichever of the known fields are set."""
    moe = [True] * n
    freq = c.get("moe_layer_freq")
    if isinstance(freq, list):
        values = c.int_list("moe_layer_freq", n)
        if any(v not in (0, 1) for v in values):
            raise c.fail("moe_layer_freq", "a per-layer list must hold 0 (dense) or 1 (MoE)")
        moe = [bool(v) for v in values]
    elif freq is not None:
        f = c.int("moe_layer_freq")
        moe = [m and i % f == 0 for i, m in enumerate(moe)]
    if c.has("first_k_dense_replace"):
        k = c.int("first_k_dense_replace", minimum=0)
        moe = [m and i >= k for i, m in enumerate(moe)]
    if c.has("mlp_only_layers"):
        dense = set(c.int_list("mlp_only_layers"))
        moe = [m and i not in dense for i, m in enumerate(moe)]
    if c.has("decoder_sparse_step"):
        s = c.int("decoder_sparse_step")
        moe = [m and (i + 1) % s == 0 for i, m in enumerate(moe)]
    if c.has("expert_layer_period"):
        p, o = c.int("expert_layer_period"), c.int("expert_layer_offset", minimum=0)
        moe = [m and i % p == o for i, m in enumerate(moe)]
    if c.has("mlp_layer_types"):
        types = c.get("mlp_layer_types")
        if not isinstance(types, list) or len(types) != n or any(t not in ("dense", "sparse") for t in types):
            raise c.fail("mlp_layer_types", f"expected {n} entries of 'dense' or 'sparse'")
        moe = [m and t == "sparse" for m, t in zip(moe, types, strict=True)]
    if not any(moe):
        raise c.fail("n_routed_experts", "experts are set but no layer is an MoE layer")
    return ["moe" if m else "dense" for m in moe]
