"""HuggingFace ``config.json`` -> the model YAML mapping (the shape of ``io.schema.ModelFile``).

Everything is read from fields: the layer layout from ``layer_types``, ``hybrid_layer_pattern``,
``hybrid_override_pattern``, ``linear_attn_config``, ``attn_type_list``, ``full_attention_interval``,
``attn_layer_period``, ``sliding_window_pattern``, ``layer_group_size`` or ``use_sliding_window``;
the attention kind of a layer from the fields present (``kv_lora_rank`` -> MLA, ``index_head_dim``
-> DSA, ``linear_num_value_heads`` -> GDN, ``linear_attn_config`` -> KDA, Mamba fields -> Mamba).
``model_type`` and ``architectures`` are never consulted. A config that cannot be read completely
raises ``SpecError("cannot interpret ...")`` naming the field; nothing is guessed silently, and the
documented conventions that are applied (MHA when ``num_key_value_heads`` is absent, head_dim =
hidden / heads) are written to ``notes``.

Parameter counts are computed from the architecture (REFERENCE.md 1.1 totals within 5%, see
tests/test_hf_import.py): embeddings, lm_head unless tied, attention / linear-attention / Mamba
projections, dense MLPs and experts; norms, biases and the tiny gate vectors are left out (< 0.1%).
``params_active`` counts the weights one token multiplies by (so prefill FLOPs = 2 x active x l):
every routed expert except the top-k is left out, and so is the input embedding table (a lookup,
not a GEMM). That is how OpenAI (gpt-oss-120b 5.1B) and NVIDIA (Nemotron-3-Nano 3.2B) count it.
Multi-token-prediction layers and vision towers are not counted.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import yaml

from prfaas_plan.errors import SpecError

FULL, SWA = "full", "swa"
GDN, KDA, LIGHTNING, MAMBA2, MAMBA = "gdn", "kda", "lightning", "mamba2", "mamba"
FFN_ONLY_MOE, FFN_ONLY_DENSE = "ffn-moe", "ffn-dense"  # decoder layers without a token mixer
LINEAR_KINDS = (GDN, KDA, LIGHTNING, MAMBA2, MAMBA)

# Fields whose presence means some layers are linear attention / SSM; if the layout has no such
# layer, the config says something the importer did not understand.
_LINEAR_FIELDS = ("linear_attn_config", "linear_num_value_heads", "linear_key_head_dim", "mamba_num_heads",
                  "mamba_head_dim", "mamba_d_state", "mamba_expand", "ssm_state_size")
_SWA_FIELDS = ("swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim")
# Layout fields of architectures this importer does not read (Zamba, Llama 4 chunked attention).
_UNREAD_LAYOUT_FIELDS = ("layers_block_type", "attn_layer_indices", "no_rope_layers")
# Activations of non-gated MLPs (two matrices, not three): squared ReLU (Nemotron-H).
_NON_GATED_ACTS = ("relu2",)
_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "half": "fp16", "float": "fp32"}
_STATE_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


class _Cfg:
    """Field lookup over a config and its nested ``text_config``; errors name the field."""

    def __init__(self, root: dict[str, Any], source: str):
        self.root = root
        text = root.get("text_config")
        self.text = text if isinstance(text, dict) else {}
        self.source = source

    def path(self, key: str) -> str:
        return f"text_config.{key}" if self.text.get(key) is not None else key

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key`` (text_config first); ``null`` counts as absent."""
        for scope in (self.text, self.root):
            if scope.get(key) is not None:
                return scope[key]
        return default

    def has(self, key: str) -> bool:
        return self.get(key) is not None

    def first(self, *keys: str) -> str | None:
        """The first of ``keys`` the config sets."""
        return next((k for k in keys if self.has(k)), None)

    def fail(self, key: str, why: str) -> SpecError:
        return SpecError(f"cannot interpret {key}: {why}", source=self.source, field=self.path(key))

    def int(self, *keys: str, minimum: int = 1) -> int:
        """A required integer field (the first of ``keys`` present), at least ``minimum``."""
        key = self.first(*keys)
        if key is None:
            shown = " / ".join(keys)
            raise SpecError(f"cannot interpret the config: {shown} is missing", source=self.source, field=keys[0])
        return self._check_int(key, self.get(key), minimum)

    def opt_int(self, *keys: str, minimum: int = 1) -> int | None:
        key = self.first(*keys)
        return None if key is None else self._check_int(key, self.get(key), minimum)

    def _check_int(self, key: str, value: Any, minimum: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
            raise self.fail(key, f"{value!r} is not an integer")
        if value < minimum:
            raise self.fail(key, f"{value!r} must be at least {minimum}")
        return int(value)

    def int_list(self, key: str, length: int | None = None) -> list[int]:
        value = self.get(key)
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise self.fail(key, f"expected a list of integers, got {value!r}")
        if length is not None and len(value) != length:
            raise self.fail(key, f"{len(value)} entries but num_hidden_layers is {length}")
        return value


@dataclass
class _Layer:
    mixer: dict[str, Any]  # the schema layer mapping without ``count``
    params: int


# ---------------------------------------------------------------------------- layout


def _layer_kinds(c: _Cfg, n: int) -> list[str]:
    """One kind per decoder layer (FULL, SWA, a linear variant, or FFN-only), from the layout fields."""
    for key in _UNREAD_LAYOUT_FIELDS:
        if c.has(key):
            raise c.fail(key, "this layer layout field is not supported by the importer")
    kinds: list[str]
    if c.has("layer_types"):
        kinds = _from_layer_types(c, n)
        _cross_check_interval(c, kinds)
        _cross_check_kda(c, kinds, n)
    elif c.has("hybrid_override_pattern"):
        kinds = _from_override_pattern(c, n)
    elif c.has("hybrid_layer_pattern"):
        kinds = _from_codes(c, "hybrid_layer_pattern", n, {0: FULL, 1: SWA}, "0 = full attention, 1 = sliding window")
    elif c.has("linear_attn_config"):
        kinds = _from_kda_config(c, n)
    elif c.has("attn_type_list"):
        kinds = _from_codes(c, "attn_type_list", n, {1: FULL, 0: LIGHTNING}, "1 = softmax attention, 0 = lightning")
    elif c.has("full_attention_interval"):
        k = c.int("full_attention_interval")
        kinds = [FULL if (i + 1) % k == 0 else _linear_variant(c, c.path("full_attention_interval")) for i in range(n)]
    elif c.has("attn_layer_period"):
        period, offset = c.int("attn_layer_period"), c.int("attn_layer_offset", minimum=0)
        if not c.has("mamba_d_state"):
            raise c.fail("attn_layer_period", "the non-attention layers need mamba_d_state / mamba_expand / "
                                              "mamba_d_conv (Mamba-1)")
        kinds = [FULL if i % period == offset else MAMBA for i in range(n)]
    elif c.has("sliding_window_pattern"):
        p = c.int("sliding_window_pattern")
        kinds = [FULL if (i + 1) % p == 0 else SWA for i in range(n)]
    elif c.has("layer_group_size"):
        g = c.int("layer_group_size")
        kinds = [FULL if (i + 1) % g == 0 or i >= n // g * g else LIGHTNING for i in range(n)]
    elif c.get("use_sliding_window") is True:
        start = c.int("max_window_layers", minimum=0) if c.has("max_window_layers") else 0
        kinds = [SWA if i >= start else FULL for i in range(n)]
    elif c.has("sliding_window") and c.get("use_sliding_window") is not False:
        raise c.fail("sliding_window", "set, but no per-layer pattern says which layers slide (give layer_types, "
                                       "or use_sliding_window with max_window_layers)")
    elif c.has("attention_chunk_size"):
        raise c.fail("attention_chunk_size", "chunked attention without a per-layer pattern is not supported")
    else:
        kinds = [FULL] * n
    if not any(k in LINEAR_KINDS for k in kinds):
        key = c.first(*_LINEAR_FIELDS)
        if key is not None:
            raise c.fail(key, "linear-attention / SSM fields are set but the layer layout has no such layer")
    if SWA not in kinds:
        key = c.first(*_SWA_FIELDS)
        if key is not None:
            raise c.fail(key, "sliding-window fields are set but the layer layout has no sliding-window layer")
    return kinds


def _from_layer_types(c: _Cfg, n: int) -> list[str]:
    names = c.get("layer_types")
    if not isinstance(names, list) or len(names) != n:
        got = len(names) if isinstance(names, list) else repr(names)
        raise c.fail("layer_types", f"expected a list of {n} layer types (num_hidden_layers), got {got}")
    known = {"full_attention": FULL, "sliding_attention": SWA, "linear_attention": None}
    kinds = []
    for i, name in enumerate(names):
        if name not in known:
            raise SpecError(f"cannot interpret layer type {name!r} (known: {', '.join(known)})",
                            source=c.source, field=f"{c.path('layer_types')}[{i}]")
        kinds.append(known[name] or _linear_variant(c, f"{c.path('layer_types')}[{i}]"))
    return kinds


def _linear_variant(c: _Cfg, where: str) -> str:
    """Which linear attention a ``linear_attention`` layer is, from the fields that describe it."""
    gdn, kda = c.has("linear_num_value_heads"), c.has("linear_attn_config")
    if gdn and kda:
        raise c.fail("linear_attn_config", "both linear_attn_config (KDA) and linear_num_value_heads (Gated "
                                           "DeltaNet) are set; cannot tell which linear attention the layers use")
    if gdn:
        return GDN
    if kda:
        return KDA
    raise SpecError(f"cannot interpret {where}: linear-attention layers need linear_num_value_heads / "
                    "linear_key_head_dim / ... (Gated DeltaNet) or linear_attn_config (KDA)",
                    source=c.source, field=where)


def _from_override_pattern(c: _Cfg, n: int) -> list[str]:
    """Nemotron-H: M = Mamba-2, * = attention, E = MoE FFN only, - = MLP only."""
    pattern = c.get("hybrid_override_pattern")
    letters = {"M": MAMBA2, "*": FULL, "E": FFN_ONLY_MOE, "-": FFN_ONLY_DENSE}
    if not isinstance(pattern, str) or len(pattern) != n:
        got = len(pattern) if isinstance(pattern, str) else repr(pattern)
        raise c.fail("hybrid_override_pattern", f"expected a string of {n} letters (num_hidden_layers), got {got}")
    for i, ch in enumerate(pattern):
        if ch not in letters:
            raise SpecError(f"cannot interpret letter {ch!r} at layer {i} (known: M = Mamba-2, * = attention, "
                            "E = MoE, - = MLP)", source=c.source, field=c.path("hybrid_override_pattern"))
    return [letters[ch] for ch in pattern]


def _from_codes(c: _Cfg, key: str, n: int, codes: dict[int, str], meaning: str) -> list[str]:
    values = c.int_list(key, n)
    for i, v in enumerate(values):
        if v not in codes:
            raise SpecError(f"cannot interpret value {v!r} at layer {i} ({meaning})", source=c.source,
                            field=c.path(key))
    return [codes[v] for v in values]


def _kda_sets(c: _Cfg, n: int) -> tuple[set[int], set[int] | None]:
    """0-based full-attention and (if listed) KDA layers from ``linear_attn_config`` (1-based lists)."""
    la = c.get("linear_attn_config")
    if not isinstance(la, dict):
        raise c.fail("linear_attn_config", f"expected a mapping, got {la!r}")
    out = []
    for key in ("full_attn_layers", "kda_layers"):
        ids = la.get(key)
        if ids is None:
            if key == "full_attn_layers":
                raise c.fail("linear_attn_config.full_attn_layers", "missing")
            out.append(None)
            continue
        if not isinstance(ids, list) or not all(isinstance(i, int) and 1 <= i <= n for i in ids):
            raise c.fail(f"linear_attn_config.{key}", f"expected 1-based layer numbers 1..{n}, got {ids!r}")
        out.append({i - 1 for i in ids})
    return out[0], out[1]


def _from_kda_config(c: _Cfg, n: int) -> list[str]:
    full, kda = _kda_sets(c, n)
    if kda is not None and (kda & full or len(kda | full) != n):
        raise c.fail("linear_attn_config.kda_layers", "kda_layers and full_attn_layers must split the layers "
                                                      f"1..{n} between them")
    return [FULL if i in full else KDA for i in range(n)]


def _cross_check_kda(c: _Cfg, kinds: list[str], n: int) -> None:
    if not c.has("linear_attn_config"):
        return
    full, _ = _kda_sets(c, n)
    if {i for i, k in enumerate(kinds) if k == FULL} != full:
        raise c.fail("linear_attn_config.full_attn_layers", "disagrees with layer_types")


def _cross_check_interval(c: _Cfg, kinds: list[str]) -> None:
    k = c.opt_int("full_attention_interval")
    if k is None or SWA in kinds:
        return
    if [(i + 1) % k == 0 for i in range(len(kinds))] != [kind == FULL for kind in kinds]:
        raise c.fail("full_attention_interval", f"{k} disagrees with layer_types")


# ---------------------------------------------------------------------------- mixers


def _head_dim(c: _Cfg, heads: int, notes: list[str], *keys: str) -> int:
    explicit = c.opt_int(*keys, "head_dim")
    if explicit is not None:
        return explicit
    hidden = c.int("hidden_size")
    if hidden % heads:
        raise c.fail("head_dim", f"missing, and hidden_size {hidden} is not a multiple of num_attention_heads {heads}")
    note = "head_dim not given: hidden_size / num_attention_heads."
    if note not in notes:
        notes.append(note)
    return hidden // heads


def _gqa(c: _Cfg, notes: list[str], *, sliding: bool) -> _Layer:
    h = c.int("hidden_size")
    p = "swa_" if sliding else ""
    heads = c.int(*([p + "num_attention_heads"] if sliding else []), "num_attention_heads")
    kv = c.opt_int(*([p + "num_key_value_heads"] if sliding else []), "num_key_value_heads")
    if kv is None:
        kv = heads
        note = "num_key_value_heads not given: multi-head attention (the transformers default)."
        if note not in notes:
            notes.append(note)
    d_k = _head_dim(c, heads, notes, *([p + "head_dim"] if sliding else []))
    d_v = c.opt_int(*([p + "v_head_dim"] if sliding else []), "v_head_dim") or d_k
    mixer: dict[str, Any] = {"kind": SWA if sliding else "gqa", "num_attention_heads": heads,
                             "num_key_value_heads": kv, "head_dim": d_k}
    if d_v != d_k:
        mixer["v_head_dim"] = d_v
    if sliding:
        key = c.first("sliding_window", "sliding_window_size")
        if key is None:
            raise c.fail("sliding_window", "sliding-window layers need sliding_window (or sliding_window_size)")
        window = c.int(key)
        other = c.opt_int("sliding_window_size")
        if other is not None and other != window:
            raise c.fail("sliding_window_size", f"{other} disagrees with sliding_window {window}")
        mixer["sliding_window"] = window
    gate = 2 if c.get("attn_output_gate") is True else 1  # gated attention: q_proj also yields the gate
    params = h * heads * d_k * gate + h * kv * (d_k + d_v) + heads * d_v * h
    return _Layer(mixer, params)


def _mla(c: _Cfg) -> _Layer:
    h = c.int("hidden_size")
    heads = c.int("num_attention_heads")
    kvl, rope = c.int("kv_lora_rank"), c.int("qk_rope_head_dim")
    nope, v = c.int("qk_nope_head_dim"), c.int("v_head_dim")
    ql = c.opt_int("q_lora_rank")
    mixer: dict[str, Any] = {"kind": "mla", "num_attention_heads": heads, "kv_lora_rank": kvl,
                             "qk_rope_head_dim": rope, "qk_nope_head_dim": nope, "v_head_dim": v}
    if ql is not None:
        mixer["q_lora_rank"] = ql
    q = h * ql + ql * heads * (nope + rope) if ql else h * heads * (nope + rope)
    params = q + h * (kvl + rope) + kvl * heads * (nope + v) + heads * v * h
    if c.has("index_head_dim"):  # DSA: the lightning indexer keeps its own key cache
        n_idx, d_idx, topk = c.int("index_n_heads"), c.int("index_head_dim"), c.int("index_topk")
        mixer |= {"kind": "dsa", "index_n_heads": n_idx, "index_head_dim": d_idx, "index_topk": topk}
        params += (ql or h) * n_idx * d_idx + h * d_idx + h * n_idx
    return _Layer(mixer, params)


def _linear(c: _Cfg, variant: str, notes: list[str]) -> _Layer:
    h = c.int("hidden_size")
    if variant == GDN:
        n_v, n_k = c.int("linear_num_value_heads"), c.int("linear_num_key_heads")
        d_k, d_v = c.int("linear_key_head_dim"), c.int("linear_value_head_dim")
        kernel = c.int("linear_conv_kernel_dim")
        conv = 2 * n_k * d_k + n_v * d_v  # q, k and v short convolutions
        mixer = {"num_heads": n_v, "head_dim_k": d_k, "head_dim_v": d_v, "conv_channels": conv,
                 "conv_kernel": kernel, "num_key_heads": n_k}
        # in_proj_qkvz, in_proj_ba, conv1d, out_proj (+ A_log, dt_bias)
        params = h * (2 * n_k * d_k + 2 * n_v * d_v) + h * 2 * n_v + conv * kernel + n_v * d_v * h + 2 * n_v
    elif variant == KDA:
        la = c.get("linear_attn_config")
        heads = c._check_int("linear_attn_config.num_heads", la.get("num_heads"), 1)
        d = c._check_int("linear_attn_config.head_dim", la.get("head_dim"), 1)
        kernel = c._check_int("linear_attn_config.short_conv_kernel_size", la.get("short_conv_kernel_size"), 1)
        hd = heads * d
        mixer = {"num_heads": heads, "head_dim_k": d, "head_dim_v": d, "conv_channels": 3 * hd,
                 "conv_kernel": kernel}
        # q, k, v, o; q/k/v short convs; low-rank decay gate f_a/f_b and output gate g_a/g_b; beta; A_log, dt_bias
        params = 4 * h * hd + 3 * hd * kernel + 2 * (h * d + d * hd) + h * heads + heads + hd
    elif variant == LIGHTNING:
        heads = c.int("num_attention_heads")
        d = _head_dim(c, heads, notes)
        mixer = {"num_heads": heads, "head_dim_k": d, "head_dim_v": d}
        params = 5 * h * heads * d  # qkv, output gate, out_proj; no short convolution
    elif variant == MAMBA2:
        heads, hd = c.int("mamba_num_heads", "mamba_n_heads"), c.int("mamba_head_dim", "mamba_d_head")
        state, groups = c.int("ssm_state_size", "mamba_d_state"), c.int("n_groups", "mamba_n_groups")
        kernel = c.int("conv_kernel", "mamba_d_conv")
        d_inner = heads * hd
        conv = d_inner + 2 * groups * state
        mixer = {"num_heads": heads, "head_dim_k": hd, "head_dim_v": state, "conv_channels": conv,
                 "conv_kernel": kernel}
        # in_proj (z, x, B, C, dt), conv1d, out_proj (+ A_log, D, dt_bias, norm)
        params = h * (2 * d_inner + 2 * groups * state + heads) + conv * kernel + d_inner * h + 3 * heads + d_inner
    else:  # Mamba-1: d_inner channels, each with a d_state recurrent state
        state, kernel = c.int("mamba_d_state"), c.int("mamba_d_conv")
        d_inner = c.int("mamba_expand") * h
        rank_key = c.first("mamba_dt_rank")
        rank = math.ceil(h / 16) if rank_key is None or c.get(rank_key) == "auto" else c.int("mamba_dt_rank")
        mixer = {"num_heads": d_inner, "head_dim_k": 1, "head_dim_v": state, "conv_channels": d_inner,
                 "conv_kernel": kernel}
        params = (h * 2 * d_inner + d_inner * kernel + d_inner * (rank + 2 * state) + rank * d_inner
                  + d_inner * state + 2 * d_inner + d_inner * h)
    return _Layer({"kind": "linear", "variant": variant} | mixer, params)


def _mixer(c: _Cfg, kind: str, notes: list[str]) -> _Layer:
    if kind == FULL:
        return _mla(c) if c.has("kv_lora_rank") else _gqa(c, notes, sliding=False)
    if kind == SWA:
        if c.has("kv_lora_rank"):
            raise c.fail("kv_lora_rank", "sliding-window layers with MLA are not a layer kind the planner knows")
        return _gqa(c, notes, sliding=True)
    return _linear(c, kind, notes)


# ---------------------------------------------------------------------------- FFN / MoE


@dataclass
class _Ffn:
    moe: dict[str, Any] | None
    kinds: list[str]  # "moe", "dense" or "none" per decoder layer
    dense_params: int
    expert_params: int
    moe_fixed_params: int  # router + shared experts, per MoE layer
    top_k: int


def _ffn(c: _Cfg, layer_kinds: list[str], notes: list[str]) -> _Ffn:
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
        if "moe" in kinds:
            raise c.fail("hybrid_override_pattern", "has MoE layers (E) but no n_routed_experts / num_experts")
        inter = c.int("intermediate_size") if "dense" in kinds else 0
        return _Ffn(None, kinds, mats * h * inter, 0, 0, 0)

    experts = c.int(experts_key)
    top_k = c.int("num_experts_per_tok", "num_experts_per_token", "experts_per_token", "moe_topk")
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
    return _Ffn(moe, kinds, mats * h * dense_width, mats * h * width,
                h * experts + n_shared * mats * h * s_width, top_k)


def _moe_layers(c: _Cfg, n: int) -> list[str]:
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


# ---------------------------------------------------------------------------- dtypes, name


def _weight_dtype(c: _Cfg, notes: list[str]) -> str:
    q = c.get("quantization_config")
    if isinstance(q, dict):
        method = str(q.get("quant_method", "")).lower()
        if method == "fp8":
            return "fp8"
        if method == "mxfp4":
            skipped = q.get("modules_to_not_convert")
            notes.append("Hub weights are MXFP4 (fp4 + one scale per 32)" + (
                f" except {', '.join(map(str, skipped))}, which stay bf16" if skipped else "")
                + "; weight_dtype holds one value, so fp4.")
            return "fp4"
        if method == "modelopt":
            algo = str(q.get("quant_algo", "")).upper()
            if algo in ("FP8", "NVFP4"):
                return "fp8" if algo == "FP8" else "fp4"
        if method == "compressed-tensors":
            bits = {(w.get("weights") or {}).get("num_bits") for w in (q.get("config_groups") or {}).values()
                    if isinstance(w, dict)}
            types = {(w.get("weights") or {}).get("type") for w in (q.get("config_groups") or {}).values()
                     if isinstance(w, dict)}
            if types == {"float"} and bits in ({8}, {4}):
                return "fp8" if bits == {8} else "fp4"
        raise SpecError(f"cannot interpret quantization_config.quant_method {method!r} (known: fp8, mxfp4, "
                        "modelopt FP8/NVFP4, compressed-tensors float 8/4 bit)", source=c.source,
                        field="quantization_config.quant_method")
    key = c.first("torch_dtype", "dtype")
    if key is None:
        notes.append("torch_dtype not given: weights assumed bf16.")
        return "bf16"
    value = str(c.get(key))
    if value not in _TORCH_DTYPES:
        raise c.fail(key, f"unknown dtype {value!r} (known: {', '.join(_TORCH_DTYPES)})")
    return _TORCH_DTYPES[value]


def _state_dtype(c: _Cfg) -> str | None:
    key = c.first("mamba_ssm_dtype", "mamba_ssm_cache_dtype")
    if key is None or c.get(key) == "auto":
        return None
    value = str(c.get(key))
    if value not in _STATE_DTYPES:
        raise c.fail(key, f"unknown dtype {value!r} (known: {', '.join(_STATE_DTYPES)}, auto)")
    return _STATE_DTYPES[value]


def _name(c: _Cfg) -> str:
    """The file stem of ``source``; for a generic ``config.json``, ``_name_or_path`` or the folder name."""
    path = PurePath(c.source)
    if path.stem and path.stem.lower() != "config":
        return path.stem
    named = c.root.get("_name_or_path")
    if isinstance(named, str) and named.strip("/"):
        return PurePath(named.rstrip("/")).name
    if path.parent.name:
        return path.parent.name
    return str(c.get("model_type") or "imported-model")


# ---------------------------------------------------------------------------- entry points


def import_hf_config(config: dict[str, Any], *, source: str) -> dict[str, Any]:
    """A HuggingFace ``config.json`` mapping -> a mapping valid against ``io.schema.ModelFile``."""
    if not isinstance(config, dict):
        raise SpecError(f"cannot interpret the config: expected a JSON object, got {type(config).__name__}",
                        source=source)
    c = _Cfg(config, source)
    notes: list[str] = []
    n = c.int("num_hidden_layers")
    h = c.int("hidden_size")
    vocab = c.int("vocab_size")
    kinds = _layer_kinds(c, n)
    ffn = _ffn(c, kinds, notes)

    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    mixer_params = 0
    for kind in kinds:
        if kind in (FFN_ONLY_MOE, FFN_ONLY_DENSE):
            continue
        layer = _mixer(c, kind, notes)
        mixer_params += layer.params
        key = tuple(layer.mixer.items())
        if key in groups:
            groups[key]["count"] += 1
        else:
            m = dict(layer.mixer)
            groups[key] = {"kind": m.pop("kind")} | ({"variant": m.pop("variant")} if "variant" in m else {}) \
                | {"count": 1} | m
    mixers = sum(g["count"] for g in groups.values())
    if mixers != n:
        only = n - mixers
        notes.append(f"{only} of the {n} decoder layers are FFN-only (no attention, no state): "
                     f"num_hidden_layers counts the {mixers} attention/Mamba layers, moe.num_moe_layers the "
                     f"{ffn.kinds.count('moe')} MoE FFN layers.")
        if ffn.moe is not None:
            ffn.moe["num_moe_layers"] = ffn.kinds.count("moe")

    n_moe, n_dense = ffn.kinds.count("moe"), ffn.kinds.count("dense")
    experts_total = n_moe * (ffn.moe["num_experts"] if ffn.moe else 0) * ffn.expert_params
    experts_active = n_moe * ffn.top_k * ffn.expert_params
    ffn_fixed = n_moe * ffn.moe_fixed_params + n_dense * ffn.dense_params
    tied = c.get("tie_word_embeddings")
    if tied is None:
        notes.append("tie_word_embeddings not given: counted an untied lm_head.")
    embed = vocab * h
    head = 0 if tied is True else vocab * h
    total = embed + head + mixer_params + ffn_fixed + experts_total
    # one token's matmuls: the lm_head (the tied table when tied), never the input lookup
    active = (head or embed) + mixer_params + ffn_fixed + experts_active

    mtp = c.opt_int("num_nextn_predict_layers", "mtp_num_hidden_layers", "num_mtp_modules", minimum=0)
    if mtp:
        notes.append(f"{mtp} multi-token-prediction layer(s) not counted.")
    if isinstance(config.get("vision_config"), dict):
        notes.append("Vision tower not counted.")

    out: dict[str, Any] = {
        "name": _name(c),
        "source": source,
        "params_total": total,
        "params_active": active,
        "hidden_size": h,
        "vocab_size": vocab,
        "num_hidden_layers": mixers,
    }
    if n_dense and ffn.moe is None:
        out["intermediate_size"] = c.int("intermediate_size")
    elif n_dense:
        out["intermediate_size"] = ffn.moe["dense_intermediate_size"]
    max_pos = c.opt_int("max_position_embeddings", "model_max_length")
    if max_pos is not None:
        out["max_position_embeddings"] = max_pos
    out["weight_dtype"] = _weight_dtype(c, notes)
    out["kv_dtype"] = "bf16"
    state = _state_dtype(c)
    if any(k in LINEAR_KINDS for k in kinds):
        out["state_dtype"] = state or "fp32"
    if ffn.moe is not None:
        out["moe"] = ffn.moe
    out["layers"] = list(groups.values())
    lead = ("Imported from a HuggingFace config; params computed from the architecture "
            "(active = per-token matmul weights: no input embedding, top-k experts).")
    out["notes"] = " ".join([lead, *notes])
    return out


def dump_yaml(data: dict[str, Any]) -> str:
    """The model mapping as a readable YAML file, keys in schema order, one mapping per layer group."""
    header = "# Written by `prfaas-plan model import`; check the notes and the parameter counts.\n"
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)
