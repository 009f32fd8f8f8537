"""Weight and state dtypes of a config."""

from __future__ import annotations

from prfaas_plan.errors import SpecError
from prfaas_plan.io.hf.config import Cfg

_TORCH_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32", "half": "fp16", "float": "fp32"}
_STATE_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def weight_dtype(c: Cfg, notes: list[str]) -> str:
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


def state_dtype(c: Cfg) -> str | None:
    key = c.first("mamba_ssm_dtype", "mamba_ssm_cache_dtype")
    if key is None or c.get(key) == "auto":
        return None
    value = str(c.get(key))
    if value not in _STATE_DTYPES:
        raise c.fail(key, f"unknown dtype {value!r} (known: {', '.join(_STATE_DTYPES)}, auto)")
    return _STATE_DTYPES[value]
