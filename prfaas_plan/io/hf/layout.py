"""Which attention kind each decoder layer has, from the layout fields of a config."""

from __future__ import annotations

from prfaas_plan.errors import SpecError
from prfaas_plan.io.hf.config import (
    FFN_ONLY_DENSE,
    FFN_ONLY_MOE,
    FULL,
    GDN,
    KDA,
    LIGHTNING,
    LINEAR_KINDS,
    MAMBA,
    MAMBA2,
    SWA,
    Cfg,
)

# Fields whose presence means some layers are linear attention / SSM; if the layout has no such
# layer, the config says something the importer did not understand.
_LINEAR_FIELDS = ("linear_attn_config", "linear_num_value_heads", "linear_key_head_dim", "mamba_num_heads",
                  "mamba_head_dim", "mamba_d_state", "mamba_expand", "ssm_state_size")
_SWA_FIELDS = ("swa_num_key_value_heads", "swa_head_dim", "swa_v_head_dim")
# Layout fields of architectures this importer does not read (Zamba, Llama 4 chunked attention).
_UNREAD_LAYOUT_FIELDS = ("layers_block_type", "attn_layer_indices", "no_rope_layers")


def layer_kinds(c: Cfg, n: int) -> list[str]:
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


def _from_layer_types(c: Cfg, n: int) -> list[str]:
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


def _linear_variant(c: Cfg, where: str) -> str:
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


def _from_override_pattern(c: Cfg, n: int) -> list[str]:
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


def _from_codes(c: Cfg, key: str, n: int, codes: dict[int, str], meaning: str) -> list[str]:
    values = c.int_list(key, n)
    for i, v in enumerate(values):
        if v not in codes:
            raise SpecError(f"cannot interpret value {v!r} at layer {i} ({meaning})", source=c.source,
                            field=c.path(key))
    return [codes[v] for v in values]


def _kda_sets(c: Cfg, n: int) -> tuple[set[int], set[int] | None]:
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


def _from_kda_config(c: Cfg, n: int) -> list[str]:
    full, kda = _kda_sets(c, n)
    if kda is not None and (kda & full or len(kda | full) != n):
        raise c.fail("linear_attn_config.kda_layers", "kda_layers and full_attn_layers must split the layers "
                                                      f"1..{n} between them")
    return [FULL if i in full else KDA for i in range(n)]


def _cross_check_kda(c: Cfg, kinds: list[str], n: int) -> None:
    if not c.has("linear_attn_config"):
        return
    full, _ = _kda_sets(c, n)
    if {i for i, k in enumerate(kinds) if k == FULL} != full:
        raise c.fail("linear_attn_config.full_attn_layers", "disagrees with layer_types")


def _cross_check_interval(c: Cfg, kinds: list[str]) -> None:
    k = c.opt_int("full_attention_interval")
    if k is None or SWA in kinds:
        return
    if [(i + 1) % k == 0 for i in range(len(kinds))] != [kind == FULL for kind in kinds]:
        raise c.fail("full_attention_interval", f"{k} disagrees with layer_types")
