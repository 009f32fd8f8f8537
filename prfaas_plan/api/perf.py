"""Library API of `perf` and `calibrate` (a GPU's overlay): typed results in SI units (``specs.perf``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.inputs import default_lengths, instance, require_context, stack_of
from prfaas_plan.core import decode, prefill
from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import Catalog, load_gpu, load_model
from prfaas_plan.specs.hardware import GpuSpec
from prfaas_plan.specs.perf import BsMax, CalibrationResult, CalibrationRow, DecodeStep, PerfResult, PrefillTime
from prfaas_plan.specs.stack import PAPER_STACK, StackSpec

# `--hold` keys, as the hardware YAML's efficiency block spells them -> Efficiency field, scale to SI
HOLD_KEYS = {"compute": ("compute", 1.0), "low_precision": ("low_precision", 1.0), "memory": ("memory", 1.0),
             "comm": ("comm", 1.0),
             "prefill_overhead_ms": ("prefill_overhead_s", units.MS),
             "decode_overhead_ms": ("decode_overhead_s", units.MS)}


def gpu_lookup(catalog: Catalog | None = None, known: Sequence[GpuSpec] = (),
               stack: StackSpec | None = None) -> Callable[[str], GpuSpec | None]:
    """Hardware name -> spec for transferring a measured profile (``core.timing``): the GPUs in
    ``known`` first, then ``catalog`` (none: ``known`` only) with ``stack``; None when unknown."""
    def find(name: str) -> GpuSpec | None:
        for gpu in known:
            if gpu.name.lower() == name.lower():
                return gpu
        if catalog is None:
            return None
        try:
            return load_gpu(name, catalog, stack)
        except SpecError:
            return None

    return find


def perf(model_ref: str, *, hardware: str, gpus: int, lengths: Sequence[int] | None, batches: Sequence[int],
         context: int, tpot_s: float, output_tokens: int, catalog: Catalog,
         memory_fraction: float = decode.DEFAULT_MEMORY_FRACTION, allow_beyond_context: bool = False,
         stack: str | None = None) -> PerfResult:
    """Analytic prefill per length, decode step per batch at one context, and BS_max for a TPOT SLO,
    on the serving stack ``stack`` (the default when None); times with the stack's P10-P90 band.

    Lengths and a context past the model's max_position_embeddings are refused unless allowed."""
    if any(b < 1 for b in batches):
        raise SpecError(f"batches must be positive, got {list(batches)}", field="--batches")
    if not tpot_s > 0:
        raise SpecError(f"must be a positive time, got {tpot_s:g} s", field="--tpot")
    if not 0 < memory_fraction <= 1:
        raise SpecError(f"must be in (0, 1], got {memory_fraction:g}", field="--memory-fraction")
    m = load_model(model_ref, catalog)
    lengths = default_lengths(m) if lengths is None else lengths
    require_context(m, lengths, "--lengths", allow=allow_beyond_context, ref=model_ref)
    require_context(m, [context], "--context", allow=allow_beyond_context, ref=model_ref)

    prof = stack_of(stack, catalog)
    inst = instance(hardware, gpus, catalog, prof)
    (plo, phi), (dlo, dhi) = prof.band("prefill"), prof.band("decode")
    pre = prefill.prefill_time(m, inst, np.asarray(lengths, dtype=np.float64))
    step = decode.decode_step(m, inst, np.asarray(batches, dtype=np.float64), context)
    cap = decode.decode_capacity(m, inst, tpot_s=tpot_s, context=context, output_tokens=output_tokens,
                                 memory_fraction=memory_fraction)
    return PerfResult(
        model=m.name, instance=inst.name, efficiency=inst.gpu.efficiency, stack=prof,
        prefill=tuple(PrefillTime(
            length_tokens=int(n), prefill_s=float(pre.seconds[i]), prefill_s_p10=float(pre.seconds[i] * plo),
            prefill_s_p90=float(pre.seconds[i] * phi), bound=str(pre.bound[i]), compute_s=float(pre.compute_s[i]),
            memory_s=float(pre.memory_s[i]), activation_s=float(pre.activation_s[i]), comm_s=float(pre.comm_s[i]),
            overhead_s=float(pre.overhead_s[i])) for i, n in enumerate(lengths)),
        decode=tuple(DecodeStep(
            batch=int(b), context_tokens=int(context), step_s=float(step.seconds[i]),
            step_s_p10=float(step.seconds[i] * dlo), step_s_p90=float(step.seconds[i] * dhi),
            bound=str(step.bound[i]), compute_s=float(step.compute_s[i]), memory_s=float(step.memory_s[i]),
            comm_s=float(step.comm_s[i]), overhead_s=float(step.overhead_s[i])) for i, b in enumerate(batches)),
        capacity=BsMax(
            bs_max=cap.bs_max, bs_tpot=cap.bs_slo, bs_memory=cap.bs_memory, binding=cap.binding, tpot_s=cap.tpot_s,
            context_tokens=int(context), output_tokens=int(output_tokens), memory_fraction=memory_fraction,
            step_s=cap.step_s, tokens_per_s=cap.tokens_per_s, requests_per_s=cap.requests_per_s,
            # a decode step P90 x slower serves 1/P90 the tokens at the same batch (the SLO aside)
            requests_per_s_p10=cap.requests_per_s / dhi, requests_per_s_p90=cap.requests_per_s / dlo))


def parse_hold(items: Sequence[str]) -> dict[str, float]:
    """``["prefill_overhead_ms=400", "comm=0.7"]`` -> Efficiency fields in SI."""
    out: dict[str, float] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in HOLD_KEYS:
            raise SpecError(f"{item!r}: expected KEY=VALUE with KEY one of {', '.join(HOLD_KEYS)}", field="--hold")
        name, scale = HOLD_KEYS[key]
        try:  # inf and nan refused (inf overhead was a traceback); 400, 400ms or 0.4s; 0.7 or 70%
            number = units.parse_fraction(value) if scale == 1.0 else units.parse_in(value, "ms")
        except ValueError as exc:
            raise SpecError(f"{item!r}: {exc}", field="--hold") from None
        if scale == 1.0 and not 0 < number <= 1:  # an efficiency: a fraction of peak
            raise SpecError(f"{item!r}: {key} must be in (0, 1]", field="--hold")
        if number < 0:
            raise SpecError(f"{item!r}: {key} must be at least 0", field="--hold")
        out[name] = number * scale
    return out


def _hold_text(hold: Mapping[str, float]) -> str:
    """Held factors as the user wrote them: {"prefill_overhead_s": 0.4} -> "prefill_overhead_ms=400"."""
    keys = {name: (key, scale) for key, (name, scale) in HOLD_KEYS.items()}
    return ", ".join(f"{keys[n][0]}={v / keys[n][1]:g}" for n, v in hold.items())


def calibrate(csv_path: str, *, hardware: str, gpus: int, catalog: Catalog, hold: Mapping[str, float] | None = None,
              today: dt.date | None = None) -> CalibrationResult:
    """Fit ``hardware``'s efficiency factors to a measurement CSV (see ``io.measurements``)."""
    from prfaas_plan.core import calibrate as cal  # here: only calibrate fits (optimize imports gpu_lookup)
    from prfaas_plan.io.measurements import overlay_yaml, read_measurements

    # an overlay is the plain roofline (the paper's Table 3 form, docs/sources.md#table-3): fitted from the
    # paper profile's factors,
    # with none of a fitted profile's further terms (GEMM size, GPU generation, floors)
    inst = instance(hardware, gpus, catalog, stack_of(PAPER_STACK, catalog))
    rows = read_measurements(csv_path, lambda name: load_model(name, catalog))
    name = Path(csv_path).name
    source = f"calibrated on {name}, {(today or dt.date.today()).isoformat()}"
    if hold:
        source += f" (held: {_hold_text(hold)})"
    pre = tuple(cal.PrefillMeasurement(model=r.model, length=r.length, cached_prefix=r.cached_prefix,
                                       prefill_s=r.prefill_s, row=r.row) for r in rows if r.kind == "prefill")
    dec = tuple(cal.DecodeMeasurement(model=r.model, batch=r.batch, context=r.context, step_s=r.step_s, row=r.row)
                for r in rows if r.kind == "decode")
    try:
        fit = cal.calibrate(inst, pre, dec, source=source, hold=hold)
    except SpecError as exc:  # a held value is the option's fault, too few rows the file's
        if exc.field == "hold":
            raise exc.at(field="--hold") from None
        raise exc.at(source=csv_path, field=exc.field) from None
    ordered = [r for r in rows if r.kind == "prefill"] + [r for r in rows if r.kind == "decode"]
    out_rows = tuple(CalibrationRow(
        row=r.row, kind=r.kind, model=r.model.name, length_tokens=r.length if r.kind == "prefill" else None,
        batch=r.batch if r.kind == "decode" else None, context_tokens=r.context if r.kind == "decode" else None,
        measured_s=float(fit.measured_s[i]), predicted_s=float(fit.predicted_s[i]),
        rel_error=float(fit.rel_error[i])) for i, r in enumerate(ordered))
    held_args = "".join(f" --hold {h}" for h in _hold_text(hold).split(", ")) if hold else ""
    comment = (f"Efficiency overlay for {inst.gpu.name} written by `prfaas-plan calibrate {name} --hardware "
               f"{hardware} --gpus {gpus}{held_args}`.\nFitted: {', '.join(fit.fitted)}; RMS error "
               f"{fit.rms_rel_error:.1%}, max {fit.max_abs_rel_error:.1%} over {len(out_rows)} rows.")
    return CalibrationResult(
        hardware=inst.gpu.name, instance=inst.name, measurements=csv_path, efficiency=fit.efficiency,
        previous_efficiency=inst.gpu.efficiency, holdable=tuple(cal.HOLDABLE), fitted=tuple(fit.fitted),
        held=tuple(hold or ()), rows=out_rows, rms_rel_error=fit.rms_rel_error,
        max_abs_rel_error=fit.max_abs_rel_error,
        overlay_yaml=overlay_yaml(inst.gpu.name, fit.efficiency, comment=comment))
