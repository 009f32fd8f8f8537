"""Module names and patterns of a checkpoint (``ignore``, ``targets``, ``modules_to_not_convert``)
-> the weight categories the importer counts parameters in.

Categories: ``embed`` (input table), ``head`` (lm_head), ``mixer`` (attention / linear attention /
Mamba projections), ``dense`` (dense-layer MLPs), ``shared`` (shared experts), ``experts`` (routed
experts), ``router`` (MoE gates) and ``vision`` (towers the importer does not count). A pattern
that names one layer (``model.layers.3.mlp``) covers that layer's share of its category.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CATEGORIES = ("embed", "head", "mixer", "dense", "shared", "experts", "router")
LINEAR = ("head", "mixer", "dense", "shared", "experts")  # nn.Linear modules; embeddings and gates are not

_MIXER_WORDS = ("self_attn", "attn", "attention", "mixer", "q_proj", "k_proj", "v_proj", "o_proj", "qkv_proj",
                "kv_a_proj", "kv_b_proj", "q_a_proj", "q_b_proj", "in_proj", "out_proj", "conv1d", "indexer",
                "wq", "wk", "wkv")
_MLP_WORDS = ("mlp", "feed_forward", "ffn", "gate_proj", "up_proj", "down_proj", "gate_up_proj", "fc1", "fc2",
              "w1", "w2", "w3")
_VISION_WORDS = ("vision", "visual", "mm_projector", "multi_modal_projector", "image", "audio")
_LAYER = re.compile(r"layers?\\?\.(\d+)\\?\.")


@dataclass(frozen=True)
class Match:
    category: str
    layer: int | None  # one decoder layer, or None for every layer


def classify(pattern: str) -> Match | None:
    """The category a module name or pattern (``re:`` regex, ``*`` glob) covers; None if unknown."""
    p = pattern.lower().removeprefix("re:")
    layer = _LAYER.search(p)
    index = int(layer.group(1)) if layer else None
    words = set(re.findall(r"[a-z0-9_]+", p))
    if any(w in p for w in _VISION_WORDS):
        return Match("vision", index)
    if "lm_head" in words or p.strip("^$") in ("output", "lm_head"):
        return Match("head", None)
    if any("embed" in w for w in words) or "wte" in words:
        return Match("embed", None)
    if any(w.startswith("shared_expert") for w in words):
        return Match("shared", index)
    if "experts" in words or ("block_sparse_moe" in words and "gate" not in words):
        return Match("experts", index)
    if "router" in words or "e_score_correction_bias" in words or re.search(r"(^|\\?\.|\*)gate\W*$", p):
        return Match("router", index)
    if words & set(_MIXER_WORDS):
        return Match("mixer", index)
    if words & set(_MLP_WORDS):
        return Match("dense", index)
    return None
