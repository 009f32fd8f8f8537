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

Parameter counts are computed from the architecture (docs/sources.md#models totals within 5%, see
tests/test_hf_import.py): embeddings, lm_head unless tied, attention / linear-attention / Mamba
projections, dense MLPs and experts; norms, biases and the tiny gate vectors are left out (< 0.1%).
``params_active`` counts the weights one token multiplies by (so prefill FLOPs = 2 x active x l):
every routed expert except the top-k is left out, and so is the input embedding table (a lookup,
not a GEMM). That is how OpenAI (gpt-oss-120b 5.1B) and NVIDIA (Nemotron-3-Nano 3.2B) count it.
Multi-token-prediction layers and vision towers are not counted.

The reading is split by concern under ``io.hf``: ``config`` (typed field lookup), ``layout``
(layer kinds), ``mixers`` (attention / linear attention / Mamba), ``ffn`` (dense and MoE) and
``weights`` (dtypes and checkpoint weight formats).
"""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

import yaml

from prfaas_plan.errors import SpecError
from prfaas_plan.io.hf.config import FFN_ONLY_DENSE, FFN_ONLY_MOE, LINEAR_KINDS, Cfg
from prfaas_plan.io.hf.ffn import ffn as _ffn
from prfaas_plan.io.hf.layout import layer_kinds as _layer_kinds
from prfaas_plan.io.hf.mixers import mixer as _mixer
from prfaas_plan.io.hf.weights import state_dtype as _state_dtype
from prfaas_plan.io.hf.weights import weight_format as _weight_format


def _name(c: Cfg) -> str:
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


def _mixer_groups(c: Cfg, kinds: list[str], notes: list[str]) -> tuple[dict[tuple[Any, ...], dict[str, Any]], int]:
    """The layers' mixers grouped by their settings (one schema entry per group, with its count),
    and the mixers' parameters; FFN-only layers have none."""
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
    return groups, mixer_params


def import_hf_config(config: dict[str, Any], *, source: str) -> dict[str, Any]:
    """A HuggingFace ``config.json`` mapping -> a mapping valid against ``io.schema.ModelFile``."""
    if not isinstance(config, dict):
        raise SpecError(f"cannot interpret the config: expected a JSON object, got {type(config).__name__}",
                        source=source)
    c = Cfg(config, source)
    notes: list[str] = []
    n = c.int("num_hidden_layers")
    h = c.int("hidden_size")
    vocab = c.int("vocab_size")
    kinds = _layer_kinds(c, n)
    ffn = _ffn(c, kinds, notes)

    groups, mixer_params = _mixer_groups(c, kinds, notes)
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
    parts = {"embed": embed, "head": head, "mixer": mixer_params, "dense": n_dense * ffn.dense_params,
             "shared": n_moe * (ffn.moe_fixed_params - ffn.router_params), "experts": experts_total,
             "router": n_moe * ffn.router_params}
    spans = {"mixer": mixers, "dense": n_dense, "shared": n_moe, "experts": n_moe, "router": n_moe}
    out["weight_dtype"], weight_format = _weight_format(c, parts, spans, notes)
    if weight_format is not None:
        out["weight_format"] = weight_format
    out["kv_dtype"] = "bf16"
    state = _state_dtype(c)
    if any(k in LINEAR_KINDS for k in kinds):
        out["state_dtype"] = state or "fp32"
    if ffn.moe is not None:
        out["moe"] = ffn.moe
    if any(c.get(k) is True for k in ("parallel_attn", "use_parallel_residual", "new_decoder_architecture")):
        out["parallel_attn"] = True  # attention and MLP off one input: one all-reduce per layer
    out["layers"] = list(groups.values())
    lead = ("Imported from a HuggingFace config; params computed from the architecture "
            "(active = per-token matmul weights: no input embedding, top-k experts).")
    out["notes"] = " ".join([lead, *notes])
    return out


def dump_yaml(data: dict[str, Any]) -> str:
    """The model mapping as a readable YAML file, keys in schema order, one mapping per layer group."""
    header = "# Written by `prfaas-plan model import`; check the notes and the parameter counts.\n"
    return header + yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)
