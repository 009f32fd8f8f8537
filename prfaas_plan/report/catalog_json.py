"""The JSON of the catalog commands (`models`, `hardware`, `stacks`, `model show`), written from their typed
results (``specs.catalog_view``): the one place their keys are spelled."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from prfaas_plan.report.stack_json import stack_json
from prfaas_plan.specs.catalog_view import GpuRow, LayerRow, ModelRow, ModelShow, StackRow
from prfaas_plan.specs.model import LayerGroup


def models_json(rows: tuple[ModelRow, ...]) -> dict[str, Any]:
    return {"models": [{"name": r.model.name, "layers": r.layers, "params_total": r.model.params_total,
                        "params_active": r.model.params_active, "kv_bytes_per_token": r.kv.kv_bytes_per_token,
                        "swa_max_bytes": r.kv.swa_max_bytes, "state_bytes": r.kv.state_bytes,
                        "profiles": [f"{p.gpus}x{p.hardware}" for p in r.model.profiles], "file": r.file}
                       for r in rows]}


def hardware_json(rows: tuple[GpuRow, ...]) -> dict[str, Any]:
    return {"hardware": hardware_rows(rows)}


def hardware_rows(rows: tuple[GpuRow, ...]) -> list[dict[str, Any]]:
    """One row per GPU: its datasheet figures (`hardware`'s JSON list and CSV rows)."""
    return [{"name": g.name, "bf16_flops": g.bf16_flops, "fp8_flops": g.fp8_flops,
                          "hbm_bytes": g.hbm_bytes, "hbm_bytes_per_s": g.hbm_bytes_per_s,
                          "scaleup_bytes_per_s": g.scaleup_bytes_per_s, "nic_bytes_per_s": g.nic_bytes_per_s,
                          "power_w": g.power_w, "price_per_hour": g.price_per_hour,
                          "efficiency_source": g.efficiency.source, "file": r.file}
            for r in rows for g in (r.gpu,)]


def stacks_json(rows: tuple[StackRow, ...]) -> dict[str, Any]:
    return {"stacks": stacks_rows(rows)}


def stacks_rows(rows: tuple[StackRow, ...]) -> list[dict[str, Any]]:
    """One row per serving-stack profile (`stacks`'s JSON list and CSV rows)."""
    return [{**stack_json(st), "default": r.default, "gpus": list(st.gpus), "description": st.description,
                        "prefill_overhead_s": st.efficiency.prefill_overhead_s,
                        "decode_overhead_s": st.efficiency.decode_overhead_s, "compute": st.efficiency.compute,
                        "path": r.file} for r in rows for st in (r.stack,)]


def group_json(group: LayerGroup) -> dict[str, Any]:
    """A layer group's fields as its model YAML names them (kind and variant as text)."""
    return {f.name: (str(getattr(group, f.name)) if f.name in ("kind", "variant") else getattr(group, f.name))
            for f in fields(group)} | {"kind": str(group.kind)}


def layer_rows(r: ModelShow) -> list[dict[str, Any]]:
    """`model show`'s layer groups with their KV bytes (its JSON list and CSV rows)."""
    return [_layer(x) for x in r.layers]


def _layer(r: LayerRow) -> dict[str, Any]:
    return group_json(r.group) | {"kv_bytes_per_token": r.kv_bytes_per_token, "state_bytes": r.state_bytes}


def model_show_json(r: ModelShow) -> dict[str, Any]:
    m, kv, wf, s = r.model, r.kv, r.model.weight_format, r.saving
    return {
        "name": m.name, "source": m.source, "params_total": m.params_total, "params_active": m.params_active,
        "hidden_size": m.hidden_size, "vocab_size": m.vocab_size, "num_hidden_layers": m.num_hidden_layers,
        "weight_dtype": str(m.weight_dtype),
        "weight_format": None if wf is None else {
            "name": wf.name, "expert_bytes": wf.expert_bytes, "other_bytes": wf.other_bytes,
            "excluded": list(wf.excluded), "source": wf.source},
        "weights_bytes": m.weights_bytes_total, "max_position_embeddings": m.max_position_embeddings,
        "kv_dtype": kv.kv_dtype, "state_dtype": kv.state_dtype, "kv_bytes_per_token": kv.kv_bytes_per_token,
        "swa_bytes_per_token": kv.swa_bytes_per_token, "swa_window_tokens": kv.swa_window_tokens,
        "swa_max_bytes": kv.swa_max_bytes, "state_bytes": kv.state_bytes,
        "moe": None if m.moe is None else {k: getattr(m.moe, k) for k in m.moe.__slots__},
        "layers": layer_rows(r),
        "s_kv": [{"length_tokens": n, "kv_bytes": b} for n, b in r.s_kv],
        "saving": None if s is None else {
            "reference": s.reference, "total_layers": s.total_layers, "growing_layers": s.growing_layers,
            "hybrid_factor": s.hybrid_factor, "attention_factor": s.attention_factor, "total_factor": s.total_factor},
        "profiles": [{"hardware": p.hardware, "gpus": p.gpus, "source": p.source, "lengths": list(p.lengths)}
                     for p in m.profiles],
        "notes": m.notes,
    }


def models_csv_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """`models` as CSV: the profiles as one space-separated cell."""
    return [{k: v for k, v in r.items() if k != "profiles"} | {"profiles": " ".join(r["profiles"])}
            for r in payload["models"]]
