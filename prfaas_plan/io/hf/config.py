"""Field lookup over a HuggingFace ``config.json``: typed, bounded reads whose errors name the field."""

from __future__ import annotations

import math
from typing import Any

from prfaas_plan.errors import SpecError, kind_of

FULL, SWA = "full", "swa"
GDN, KDA, LIGHTNING, MAMBA2, MAMBA = "gdn", "kda", "lightning", "mamba2", "mamba"
FFN_ONLY_MOE, FFN_ONLY_DENSE = "ffn-moe", "ffn-dense"  # decoder layers without a token mixer
LINEAR_KINDS = (GDN, KDA, LIGHTNING, MAMBA2, MAMBA)

# Sanity bounds on integer fields: far above any published model (widths reach ~10^5, vocabularies
# ~10^6, contexts ~10^7), so only a wrong value (hidden_size 1e30) trips them.
_MAX_COUNT = 1 << 16  # layers, heads, experts
_MAX_WIDTH = 1 << 20  # hidden, intermediate, head dims, ranks, kernels
_MAX_VOCAB = 1 << 24
_MAX_TOKENS = (1 << 31) - 1  # contexts and windows
_TOKEN_FIELDS = ("max_position_embeddings", "model_max_length", "sliding_window", "sliding_window_size",
                 "index_topk", "attention_chunk_size")


def maximum(key: str) -> int:
    """The largest value an integer field may plausibly hold."""
    name = key.rsplit(".", 1)[-1]
    if name in _TOKEN_FIELDS:
        return _MAX_TOKENS
    if name == "vocab_size":
        return _MAX_VOCAB
    if any(word in name for word in ("layers", "heads", "experts", "layer_", "_per_tok", "topk", "group")):
        return _MAX_COUNT
    return _MAX_WIDTH


class Cfg:
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
        return SpecError(f"cannot interpret the config: {why}", source=self.source, field=self.path(key))

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
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"expected an integer, got {kind_of(value)} ({value!r})")
        if not math.isfinite(value) or value != int(value):
            raise self.fail(key, f"{value!r} is not an integer")
        if value < minimum:
            raise self.fail(key, f"{value!r} must be at least {minimum}")
        if value > maximum(key):
            raise self.fail(key, f"{value!r} is implausibly large (at most {maximum(key):,})")
        return int(value)

    def int_list(self, key: str, length: int | None = None) -> list[int]:
        value = self.get(key)
        if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise self.fail(key, f"expected a list of integers, got {value!r}")
        if length is not None and len(value) != length:
            raise self.fail(key, f"{len(value)} entries but num_hidden_layers is {length}")
        return value

