"""A serving-stack profile written as ``stacks/NAME.yaml`` (what `calibrate` and the stack
validation write): the one place the profile file's keys are spelled on output (``io.stack_schema`` reads them)."""

from __future__ import annotations

from typing import Any

from prfaas_plan import units
from prfaas_plan.specs.stack import StackSpec


def stack_yaml(st: StackSpec) -> str:
    """A profile as ``stacks/NAME.yaml`` (values rounded to 4 significant digits, SI -> ms)."""
    import yaml

    e = st.efficiency
    ms = {"prefill_overhead_s", "decode_overhead_s", "collective_latency_s", "decode_layer_s", "request_overhead_s",
          "moe_layer_s", "moe_expert_s"}
    params: dict[str, Any] = {}
    for key in ("compute", "low_precision", "memory", "comm", "prefill_overhead_s", "decode_overhead_s", "moe",
                "moe_low_precision", "attention_full", "attention_mla", "attention_swa", "attention_linear",
                "gemm_half_tokens", "peak_exponent", "collective_latency_s", "decode_layer_s", "request_overhead_s",
                "moe_layer_s", "moe_expert_s"):
        value = getattr(e, key)
        if value is None:
            continue
        name, value = (key.removesuffix("_s") + "_ms", float(units.s_to_ms(value))) if key in ms else (key, value)
        params[name] = float(f"{value:.4g}")
    params["source"] = e.source
    doc = {"name": st.name, "engine": st.engine, "versions": st.versions, "gpus": list(st.gpus),
           "description": st.description, "source": st.source, "parameters": params,
           "measurements": st.measurements, "points": st.points, "sources": st.sources,
           "prefill_band": {"p10": round(st.prefill_band[0], 3), "p90": round(st.prefill_band[1], 3)}}
    if st.decode_band is not None:
        doc["decode_band"] = {"p10": round(st.decode_band[0], 3), "p90": round(st.decode_band[1], 3)}
    doc["band_from"] = st.band_from
    return yaml.safe_dump(doc, sort_keys=False, width=110)
