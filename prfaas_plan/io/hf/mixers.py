"""Token mixers (attention, linear attention, Mamba): the schema layer mapping and its weights."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from prfaas_plan.io.hf.config import FULL, GDN, KDA, LIGHTNING, MAMBA2, SWA, Cfg


@dataclass
class Layer:
    mixer: dict[str, Any]  # the schema layer mapping without ``count``
    params: int


def _head_dim(c: Cfg, heads: int, notes: list[str], *keys: str) -> int:
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


def _gqa(c: Cfg, notes: list[str], *, sliding: bool) -> Layer:
    h = c.int("hidden_size")
    p = "swa_" if sliding else ""
    heads = c.int(*([p + "num_attention_heads"] if sliding else []), "num_attention_heads")
    kv = c.opt_int(*([p + "num_key_value_heads"] if sliding else []), "num_key_value_heads")
    if kv is None:
        kv = heads
        note = "num_key_value_heads not given: multi-head attention (the transformers default)."
        if note not in notes:
            notes.append(note)
    if heads % kv:  # GQA: every KV head serves the same number of query heads
        kv_key = c.first(*([p + "num_key_value_heads"] if sliding else []), "num_key_value_heads") \
            or "num_key_value_heads"
        raise c.fail(kv_key, f"{heads} attention heads are not a multiple of {kv} KV heads")
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
    return Layer(mixer, params)


def _mla(c: Cfg) -> Layer:
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
    return Layer(mixer, params)


def _linear(c: Cfg, variant: str, notes: list[str]) -> Layer:
    h = c.int("hidden_size")
    if variant == GDN:
        n_v, n_k = c.int("linear_num_value_heads"), c.int("linear_num_key_heads")
        if n_v % n_k:  # GDN: value heads share the key heads in equal groups
            raise c.fail("linear_num_key_heads", f"{n_v} value heads (linear_num_value_heads) are not a multiple "
                                                 f"of {n_k} key heads")
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
    return Layer({"kind": "linear", "variant": variant} | mixer, params)


def mixer(c: Cfg, kind: str, notes: list[str]) -> Layer:
    if kind == FULL:
        return _mla(c) if c.has("kv_lora_rank") else _gqa(c, notes, sliding=False)
    if kind == SWA:
        if c.has("kv_lora_rank"):
            raise c.fail("kv_lora_rank", "sliding-window layers with MLA are not a layer kind the planner knows")
        return _gqa(c, notes, sliding=True)
    return _linear(c, kind, notes)
