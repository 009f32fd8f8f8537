"""Weight and state dtypes of a config, and the checkpoint's weight format (bytes per weight).

``quantization_config`` methods read, with the bytes per weight they store (scales included):

- ``fp8`` (transformers fine-grained FP8, DeepSeek-V3 / Kimi-K2 / MiniMax): e4m3 weights and one
  fp32 ``weight_scale_inv`` per ``weight_block_size`` block: 1 + 4 / (128 x 128) bytes; without a
  block size one scale per tensor, 1 byte. Every Linear layer except ``modules_to_not_convert`` and
  lm_head (transformers keeps the output layer unconverted).
- ``mxfp4`` (gpt-oss): OCP MX, e2m1 values plus one e8m0 scale per 32: 0.5 + 1/32 bytes. Only the
  MoE experts are converted (transformers' Mxfp4 integration); the rest stays at torch_dtype.
- ``modelopt`` (NVIDIA Model Optimizer; vLLM docs/features/quantization/modelopt.md): quant_algo
  FP8 (per tensor, 1 byte), FP8_PER_CHANNEL_PER_TOKEN (1), FP8_PB_WO (128 x 128 blocks, fp32
  scales), MXFP8 (1 + 1/32), NVFP4 (e2m1 + one fp8 e4m3 scale per ``group_size`` = 16: 0.5 + 1/16
  = 9/16 bytes, the per-tensor fp32 scale aside); every Linear except ``exclude_modules``.
- ``compressed-tensors`` (llm-compressor): per ``config_groups`` entry, ``weights.num_bits`` / 8
  plus one scale per group (``strategy: group`` / ``tensor_group``, ``group_size``) or per block
  (``block_structure``), in ``scale_dtype`` (fp8 for nvfp4-pack-quantized, e8m0 for mxfp4, else
  the model's dtype), plus a packed zero point per group when not symmetric; ``targets`` ("Linear"
  or module patterns) less ``ignore``. int4 ``pack-quantized`` with group 32: 0.5 + 2/32 bytes.

Embeddings are lookups, not Linear layers: no method converts them. MoE router gates stay at
torch_dtype too (not Linear in DeepSeek-style code; under 0.1% of the weights). Per-channel scales
(one per output row, < 0.1%) are not counted.
"""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.errors import SpecError, kind_of
from prfaas_plan.io.hf.config import Cfg
from prfaas_plan.io.hf.modules import CATEGORIES, LINEAR, classify

_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "half": "fp16", "float": "fp32"}
_STATE_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}
_FP32_SCALE = 4.0
_MX_BLOCK = 32  # OCP MX block: one e8m0 scale per 32 elements
_Q = "quantization_config"
_DEFAULT = "transformers default"  # where of an exclusion the config does not write

_SHOWN = {"head": "lm_head", "mixer": "attention", "dense": "dense MLPs", "shared": "shared experts",
          "experts": "experts"}
Scheme = tuple[str, float, str]  # (name, bytes per weight with scales, GEMM compute dtype)


def torch_dtype(c: Cfg, notes: list[str]) -> str:
    """The unquantised dtype of the checkpoint (``torch_dtype`` / ``dtype``)."""
    key = c.first("torch_dtype", "dtype")
    if key is None:
        notes.append("torch_dtype not given: weights assumed bf16.")
        return "bf16"
    value = str(c.get(key))
    if value not in _TORCH_DTYPES:
        raise c.fail(key, f"unknown dtype {value!r} (known: {', '.join(_TORCH_DTYPES)})")
    return _TORCH_DTYPES[value]


def weight_format(c: Cfg, params: dict[str, float], layers: dict[str, int],
                  notes: list[str]) -> tuple[str, dict[str, Any] | None]:
    """(weight_dtype, weight_format mapping or None) from ``quantization_config`` and torch_dtype.

    ``params`` holds the parameters per category (``io.hf.modules``), ``layers`` the decoder layers
    each category spans (for patterns that name one layer). weight_dtype is the GEMM compute dtype
    (fp8 / fp4 where activations are quantised too, torch_dtype for weight-only schemes).
    """
    base = torch_dtype(c, notes)
    q = c.get(_Q)
    if q is None:
        return base, None
    if not isinstance(q, dict):
        raise c.fail(_Q, f"expected a mapping, got {kind_of(q)}")
    method = q.get("quant_method")
    method = method.lower() if isinstance(method, str) else method
    if method == "fp8":
        schemes, excluded = _fp8(c, q)
    elif method == "mxfp4":
        schemes = {"experts": ("MXFP4 (e8m0 scale per 32)", 0.5 + 1 / _MX_BLOCK, "fp4")}
        excluded = _patterns(c, q, "modules_to_not_convert")
    elif method == "modelopt":
        schemes, excluded = _modelopt(c, q, base)
    elif method == "compressed-tensors":
        schemes, excluded = _compressed_tensors(c, q, base)
    else:
        raise SpecError(f"cannot interpret quant_method {_shown(method)} (known: fp8, mxfp4, modelopt, "
                        "compressed-tensors)", source=c.source, field=f"{_Q}.quant_method")
    return _mix(c, base, schemes, excluded, params, layers, notes)


def _shown(value: Any) -> str:
    """A config value as the JSON file writes it (null, not Python's None)."""
    return "null (missing)" if value is None else repr(value)


def _patterns(c: Cfg, q: dict[str, Any], key: str) -> list[tuple[str, str]]:
    """(field path, pattern) of a module list such as ``ignore``."""
    value = q.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise c.fail(f"{_Q}.{key}", f"expected a list of module names, got {value!r}")
    return [(f"{_Q}.{key}[{i}]", v) for i, v in enumerate(value)]


def _fp8(c: Cfg, q: dict[str, Any]) -> tuple[dict[str, Scheme], list[tuple[str, str]]]:
    block = q.get("weight_block_size")
    if block is None:
        scheme: Scheme = ("FP8 per tensor", 1.0, "fp8")
    else:
        a, b = _block(c, f"{_Q}.weight_block_size", block)
        scheme = (f"FP8 block {a}x{b} (fp32 scale per block)", 1.0 + _FP32_SCALE / (a * b), "fp8")
    excluded = [(_DEFAULT, "lm_head"), *_patterns(c, q, "modules_to_not_convert")]
    return {cat: scheme for cat in LINEAR}, excluded


def _block(c: Cfg, where: str, block: Any) -> tuple[int, int]:
    if not (isinstance(block, list) and len(block) == 2
            and all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 1 << 16 for v in block)):
        raise SpecError(f"cannot interpret {where}: expected two positive block sizes, got {block!r}",
                        source=c.source, field=where)
    return block[0], block[1]


def _modelopt(c: Cfg, q: dict[str, Any], base: str) -> tuple[dict[str, Scheme], list[tuple[str, str]]]:
    inner = q.get("quantization") if isinstance(q.get("quantization"), dict) else q
    algo = inner.get("quant_algo")
    algo = algo.upper() if isinstance(algo, str) else algo
    where = f"{_Q}.quant_algo"
    if algo == "NVFP4":
        g = inner.get("group_size", 16)
        if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= 1 << 16:
            raise c.fail(f"{_Q}.group_size", f"expected a positive group size, got {g!r}")
        scheme: Scheme = (f"NVFP4 (fp8 scale per {g})", 0.5 + 1 / g, "fp4")
    elif algo in ("FP8", "FP8_PER_CHANNEL_PER_TOKEN"):
        scheme = (f"{algo} (modelopt)", 1.0, "fp8")
    elif algo == "FP8_PB_WO":
        scheme = ("FP8 block 128x128, weight-only (modelopt)", 1.0 + _FP32_SCALE / (128 * 128), base)
    elif algo == "MXFP8":
        scheme = ("MXFP8 (e8m0 scale per 32)", 1.0 + 1 / _MX_BLOCK, "fp8")
    else:
        raise SpecError(f"cannot interpret quant_algo {_shown(algo)} of modelopt (known: NVFP4, FP8, "
                        "FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, MXFP8)", source=c.source, field=where)
    excluded = _patterns(c, inner, "exclude_modules") + _patterns(c, inner, "ignore")
    return {cat: scheme for cat in LINEAR}, excluded


def _compressed_tensors(c: Cfg, q: dict[str, Any], base: str) -> tuple[dict[str, Scheme], list[tuple[str, str]]]:
    groups = q.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise c.fail(f"{_Q}.config_groups", f"expected a mapping of quantisation groups, got {groups!r}")
    fmt = str(q.get("format") or "")
    schemes: dict[str, Scheme] = {}
    for name, group in groups.items():
        where = f"{_Q}.config_groups.{name}"
        if not isinstance(group, dict):
            raise c.fail(where, f"expected a mapping, got {kind_of(group)}")
        weights = group.get("weights")
        if weights is None:
            continue  # activations only: the weights stay at torch_dtype
        scheme = _ct_scheme(c, where, weights, group.get("input_activations"), str(group.get("format") or fmt),
                            base)
        targets = group.get("targets")
        if not isinstance(targets, list) or not targets or not all(isinstance(t, str) for t in targets):
            raise c.fail(f"{where}.targets", f"expected a list of module names or classes, got {targets!r}")
        for i, target in enumerate(targets):
            if target == "Linear":
                schemes |= {cat: scheme for cat in LINEAR}
                continue
            match = classify(target)
            if match is None or match.layer is not None or match.category in ("embed", "router"):
                raise c.fail(f"{where}.targets[{i}]", f"{target!r} is not a module set the importer can "
                                                      "count (use Linear or a pattern over experts, attention, "
                                                      "MLPs or lm_head)")
            if match.category != "vision":
                schemes[match.category] = scheme
    return schemes, _patterns(c, q, "ignore")


def _ct_scheme(c: Cfg, where: str, w: Any, acts: Any, fmt: str, base: str) -> Scheme:
    if not isinstance(w, dict):
        raise c.fail(f"{where}.weights", f"expected a mapping, got {kind_of(w)}")
    bits = w.get("num_bits")
    if isinstance(bits, bool) or bits not in (2, 3, 4, 8, 16):
        raise c.fail(f"{where}.weights.num_bits", f"expected 2, 3, 4, 8 or 16 bits, got {bits!r}")
    kind = str(w.get("type", "int"))
    if kind not in ("int", "float"):
        raise c.fail(f"{where}.weights.type", f"expected int or float, got {kind!r}")
    strategy = str(w.get("strategy", "tensor"))
    scale = _scale_bytes(c, f"{where}.weights.scale_dtype", w.get("scale_dtype"), fmt, base)
    value = bits / units.BITS_PER_BYTE
    label = f"{kind}{bits}"
    if strategy in ("group", "tensor_group"):
        g = w.get("group_size")
        if isinstance(g, bool) or not isinstance(g, int) or not 1 <= g <= 1 << 20:
            raise c.fail(f"{where}.weights.group_size", f"strategy {strategy} needs a positive group_size, got {g!r}")
        zero = 0.0 if w.get("symmetric", True) else bits / units.BITS_PER_BYTE  # packed zero point per group
        value += (scale + zero) / g
        label += f" group {g}"
    elif strategy == "block":
        a, b = _block(c, f"{where}.weights.block_structure", w.get("block_structure"))
        value += scale / (a * b)
        label += f" block {a}x{b}"
    elif strategy not in ("tensor", "channel"):
        raise c.fail(f"{where}.weights.strategy", f"unknown strategy {strategy!r} (known: tensor, channel, group, "
                                                  "tensor_group, block)")
    compute = base
    if isinstance(acts, dict) and acts.get("num_bits") in (4, 8):
        compute = "fp4" if acts["num_bits"] == 4 else "fp8"  # int8 W8A8 runs at the 8-bit tensor-core peak
    return (f"{label} (compressed-tensors{', ' + fmt if fmt else ''})", value, compute)


def _scale_bytes(c: Cfg, where: str, dtype: Any, fmt: str, base: str) -> float:
    if dtype is None:
        return 1.0 if "fp4" in fmt else _BYTES.get(base, 2.0)  # nvfp4: fp8 e4m3, mxfp4: e8m0
    text = str(dtype).lower().removeprefix("torch.")
    for key, size in (("float8", 1.0), ("uint8", 1.0), ("e8m0", 1.0), ("bfloat16", 2.0), ("float16", 2.0),
                      ("float32", 4.0)):
        if key in text:
            return size
    raise c.fail(where, f"unknown scale dtype {dtype!r}")


def _mix(c: Cfg, base: str, schemes: dict[str, Scheme], excluded: list[tuple[str, str]],
         params: dict[str, float], layers: dict[str, int], notes: list[str]) -> tuple[str, dict[str, Any]]:
    """Bytes per weight of the routed experts and the mean over the rest, from the schemes per category."""
    unq = _BYTES.get(base, 2.0)
    kept = dict.fromkeys(CATEGORIES, 0.0)  # share of each category left unquantised
    for where, pattern in excluded:
        match = classify(pattern)
        if match is None:
            raise SpecError(f"cannot interpret module {pattern!r}: not a layer the importer can place (attention, "
                            "MLP, experts, router, embeddings, lm_head)", source=c.source, field=where)
        if match.category == "vision":
            continue
        span = layers.get(match.category, 0)
        if match.layer is None:
            kept[match.category] = 1.0
        elif match.layer < span:  # a layer past the decoder (MTP) is not counted anyway
            kept[match.category] = min(1.0, kept[match.category] + 1 / span)

    def per_weight(cat: str) -> float:
        s = schemes.get(cat)
        if s is None:
            return unq
        return (1 - kept[cat]) * s[1] + kept[cat] * unq

    expert_bytes = per_weight("experts")
    others = [cat for cat in CATEGORIES if cat != "experts"]
    other_params = sum(params.get(cat, 0.0) for cat in others)
    other_bytes = sum(params.get(cat, 0.0) * per_weight(cat) for cat in others) / other_params
    quantised = {cat: s for cat, s in schemes.items() if params.get(cat, 0.0) * (1 - kept[cat]) > 0}
    if not quantised:
        raise c.fail(_Q, "no weight the importer counts is quantised (targets less ignore is empty)")
    # the scheme of the most weights names the format and sets the GEMM compute dtype
    lead = max(quantised, key=lambda cat: params.get(cat, 0.0) * (1 - kept[cat]))
    name, _, compute = quantised[lead]
    covered = sorted(quantised, key=CATEGORIES.index)
    full = f"{name} on {', '.join(_SHOWN[cat] for cat in covered)}; the rest {base}"
    total = params.get("experts", 0.0) * expert_bytes + other_params * other_bytes
    notes.append(f"Weights: {full}, {total / sum(params.values()):.3f} bytes per weight on average, scales "
                 "included (weight_format).")
    if compute == base and compute in _BYTES:
        notes.append(f"weight_dtype {base}: the GEMMs run at {base} (weight-only quantisation).")
    out = {"name": full, "expert_bytes": expert_bytes, "other_bytes": other_bytes,
           "excluded": [p for where, p in excluded if where != _DEFAULT],
           "source": f"{_Q}.quant_method {c.get(_Q).get('quant_method')}"}
    return compute, out


def state_dtype(c: Cfg) -> str | None:
    key = c.first("mamba_ssm_dtype", "mamba_ssm_cache_dtype")
    if key is None or c.get(key) == "auto":
        return None
    value = str(c.get(key))
    if value not in _STATE_DTYPES:
        raise c.fail(key, f"unknown dtype {value!r} (known: {', '.join(_STATE_DTYPES)}, auto)")
    return _STATE_DTYPES[value]
