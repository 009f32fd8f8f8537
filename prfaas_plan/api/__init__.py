"""Library API: the functions the CLI calls, one per command. They return typed results in SI
units (``specs``); their JSON is written at the edge (``report/*_json``), people's units in
``report.render``. ``import_model`` alone returns a mapping: the model YAML it writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.inputs import default_lengths, instance, require_context, stack_of
from prfaas_plan.core import kv
from prfaas_plan.core.profile import EXTRAPOLATED, EXTRAPOLATION, profile_basis
from prfaas_plan.core.timers import prefill_timer
from prfaas_plan.core.timing import Source
from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import Catalog, load_gpu, load_model
from prfaas_plan.specs.catalog_view import GpuRow, KvFigures, KvSaving, LayerRow, ModelRow, ModelShow, StackRow
from prfaas_plan.specs.kv_rate import KvRateResult, KvRateRow, TimeSource
from prfaas_plan.specs.model import DType, LinearGroup, MeasuredProfile, ModelSpec


def _dtype(value: str | None, field: str) -> DType | None:
    if value is None:
        return None
    try:
        return DType(value.lower())
    except ValueError:
        raise SpecError(f"unknown dtype {value!r} (use bf16, fp8, fp32)", field=field) from None


def layer_summary(model: ModelSpec) -> str:
    parts = []
    for g in model.layers:
        label = str(g.variant) if isinstance(g, LinearGroup) else str(g.kind)
        parts.append(f"{g.count} {label}")
    return " + ".join(parts)


def _kv_figures(f: kv.KvFootprint) -> KvFigures:
    return KvFigures(kv_dtype=str(f.kv_dtype), state_dtype=str(f.state_dtype), kv_bytes_per_token=f.kv_bytes_per_token,
                     swa_bytes_per_token=f.swa_bytes_per_token, swa_window_tokens=f.swa_window_tokens,
                     swa_max_bytes=f.swa_max_bytes, state_bytes=f.state_bytes)


def list_models(catalog: Catalog) -> tuple[ModelRow, ...]:
    """Every catalog model with its KV per token and constant state, by name."""
    rows = []
    for path in catalog.entries("models").values():
        m = load_model(str(path), catalog)
        rows.append(ModelRow(model=m, layers=layer_summary(m), kv=_kv_figures(kv.footprint(m)), file=str(path)))
    return tuple(sorted(rows, key=lambda r: r.model.name.lower()))


def list_hardware(catalog: Catalog) -> tuple[GpuRow, ...]:
    """Every catalog GPU, by name."""
    rows = [GpuRow(gpu=load_gpu(str(path), catalog), file=str(path)) for path in catalog.entries("hardware").values()]
    return tuple(sorted(rows, key=lambda r: r.gpu.name.lower()))


def model_show(ref: str, catalog: Catalog, *, kv_dtype: str | None = None, state_dtype: str | None = None,
               reference_kv_heads: int = 8, reference_head_dim: int = 128) -> ModelShow:
    """The model's architecture, KV bytes per layer group, S_kv(l) at 1K-128K and its KV saving
    against a dense GQA reference."""
    for value, option in ((reference_kv_heads, "--ref-kv-heads"), (reference_head_dim, "--ref-head-dim")):
        if value < 1:
            raise SpecError(f"must be a positive whole number, got {value}", field=option)
    m = load_model(ref, catalog)
    kvd, std = _dtype(kv_dtype, "--kv-dtype"), _dtype(state_dtype, "--state-dtype")
    f = kv.footprint(m, kv_dtype=kvd, state_dtype=std)
    saving = kv.hybrid_saving(m, reference_kv_heads=reference_kv_heads,
                              reference_head_dim=reference_head_dim, kv_dtype=kvd)
    lengths = [k * units.K_TOKENS for k in (1, 8, 32, 128)]
    return ModelShow(
        model=m, kv=_kv_figures(f),
        layers=tuple(LayerRow(group=g, kv_bytes_per_token=r.kv_bytes_per_token, state_bytes=r.state_bytes)
                     for g, r in zip(m.layers, kv.breakdown(m, kv_dtype=kvd, state_dtype=std), strict=True)),
        s_kv=tuple((n, f.s_kv(n)) for n in lengths),
        saving=None if saving is None else KvSaving(
            reference=f"GQA, {saving.reference_kv_heads} KV heads x {saving.reference_head_dim}, every layer",
            total_layers=saving.total_layers, growing_layers=saving.growing_layers,
            hybrid_factor=saving.hybrid_factor, attention_factor=saving.attention_factor,
            total_factor=saving.total_factor))


def import_model(config_path: str) -> dict[str, Any]:
    """HuggingFace config.json -> the model YAML mapping (validated)."""
    from pathlib import Path

    from prfaas_plan.io.hf_import import import_hf_config
    from prfaas_plan.io.load import read_json, validate
    from prfaas_plan.io.schema import ModelFile

    data = import_hf_config(read_json(Path(config_path)), source=config_path)
    validate(ModelFile, data, config_path)
    return data


def _length_range(lengths: Sequence[int]) -> str:
    return f"{units.format_length(lengths[0])}..{units.format_length(lengths[-1])}"


def _time_basis(model: ModelSpec, n: int, profile: MeasuredProfile | None, basis: str | None) -> tuple[str, str]:
    """(basis word, label) of one kv-rate row: measured / interpolated / extrapolated / analytic."""
    reasons = []
    if basis == EXTRAPOLATED and profile is not None:
        side = "beyond" if n > profile.lengths[-1] else "below"
        edge = profile.lengths[-1] if side == "beyond" else profile.lengths[0]
        reasons.append(f"{side} the measured {units.format_length(edge)}")
    word = basis or "analytic"
    if model.beyond_context([n]):
        if basis is None:
            reasons.append("analytic")
        word = EXTRAPOLATED
        reasons.append(f"beyond the {units.format_length(model.max_position_embeddings or 0)} context")
    return word, word + (f" ({', '.join(reasons)})" if reasons else "")


def kv_rate(model_ref: str, *, hardware: str, gpus: int, lengths: Sequence[int] | None, catalog: Catalog,
            instances: int | None = None, kv_dtype: str | None = None, state_dtype: str | None = None,
            source: str = "auto", allow_beyond_context: bool = False, stack: str | None = None) -> KvRateResult:
    """Phi_kv(l) = S_kv(l) / T_prefill(l) per length (Eq. 1) and, for N instances, B_out (Eq. 2).

    Analytic and scaled times carry the stack's P10-P90 band (``*_p10``, ``*_p90``: measured /
    predicted on sources its fit never saw); a measured profile's times are their own.

    Each row says where its time comes from: ``measured`` at a profile point, ``interpolated``
    between points, ``extrapolated`` outside them or past the model's context (analytic rows
    there too); ``analytic`` otherwise. Lengths past max_position_embeddings are refused unless
    ``allow_beyond_context``; ``lengths=None`` is :func:`default_lengths`.
    """
    if instances is not None and instances < 1:
        raise SpecError(f"must be a positive number of instances, got {instances}", field="--instances")
    m = load_model(model_ref, catalog)
    lengths = default_lengths(m) if lengths is None else lengths
    require_context(m, lengths, "--lengths", allow=allow_beyond_context, ref=model_ref)
    prof = stack_of(stack, catalog)
    inst = instance(hardware, gpus, catalog, prof)
    kvd, std = _dtype(kv_dtype, "--kv-dtype"), _dtype(state_dtype, "--state-dtype")
    if source == "both":
        timers = [prefill_timer(m, inst, source=s) for s in (Source.MEASURED, Source.ANALYTIC)]
    else:
        try:
            src = Source(source)
        except ValueError:
            raise SpecError(f"unknown source {source!r} (use auto, measured, scaled, analytic, both)",
                            field="--source") from None
        from prfaas_plan.api.perf import gpu_lookup

        timers = [prefill_timer(m, inst, source=src, gpu_of=gpu_lookup(catalog, stack=prof))]
    f = kv.footprint(m, kv_dtype=kvd, state_dtype=std)
    length = np.asarray(lengths, dtype=np.float64)
    rows: list[KvRateRow] = []
    details = []
    for timer in timers:
        t = np.asarray(timer(length))
        use_measured_kv = timer.kv_bytes is not None and kvd in (None, m.kv_dtype) and std in (None, m.state_dtype)
        s = np.asarray(timer.kv_bytes(length)) if use_measured_kv else np.asarray(f.s_kv(length))
        phi = s / t
        lo, hi = (1.0, 1.0) if timer.source == Source.MEASURED else prof.band("prefill")
        profile = timer.profile  # the measured one, or another instance's for a scaled timer
        basis = profile_basis(profile, length) if profile is not None else None
        detail = timer.detail
        if basis is not None and EXTRAPOLATED in basis:
            detail += f"; outside the measured {_length_range(profile.lengths)}: {EXTRAPOLATION}"
        details.append(TimeSource(source=str(timer.source), detail=detail))
        for i, n in enumerate(lengths):
            word, label = _time_basis(m, n, profile, None if basis is None else str(basis[i]))
            if timer.source == Source.SCALED:
                word, label = f"scaled {word}", f"scaled {label}"
            rows.append(KvRateRow(
                length_tokens=int(n), kv_bytes=float(s[i]), prefill_s=float(t[i]), prefill_s_p10=float(t[i] * lo),
                prefill_s_p90=float(t[i] * hi), kv_bytes_per_s=float(phi[i]), kv_bytes_per_s_p10=float(phi[i] / hi),
                kv_bytes_per_s_p90=float(phi[i] / lo), source=label, basis=word,
                beyond_context=bool(m.beyond_context([n])),
                kv_source=str(basis[i]) if use_measured_kv and basis is not None else "kv engine",
                egress_bytes_per_s=None if instances is None else float(instances * phi[i])))
    return KvRateResult(model=m.name, instance=inst.name, instances=instances, kv_dtype=str(f.kv_dtype),
                        state_dtype=str(f.state_dtype), sources=tuple(details), stack=prof, rows=tuple(rows))


def list_stacks(catalog: Catalog) -> tuple[StackRow, ...]:
    """Every serving-stack profile of the catalog, the default first."""
    from prfaas_plan.io.load import load_stack
    from prfaas_plan.specs.stack import DEFAULT_STACK

    rows = []
    for path in catalog.entries("stacks").values():
        st = load_stack(str(path), catalog)
        rows.append(StackRow(stack=st, default=st.name.lower() == DEFAULT_STACK.lower(), file=str(path)))
    return tuple(sorted(rows, key=lambda r: (not r.default, r.stack.name.lower())))
