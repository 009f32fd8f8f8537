"""The JSON and CSV rows of `perf` and `calibrate`, written from the typed ``specs.perf`` results:
the one place their keys are spelled (SI units, the unit in the key)."""

from __future__ import annotations

from typing import Any

from prfaas_plan.io.overlay import overlay_mapping
from prfaas_plan.report.stack_json import stack_json
from prfaas_plan.specs.hardware import Efficiency
from prfaas_plan.specs.perf import (
    BsMax,
    CalibrationResult,
    CalibrationRow,
    DecodeStep,
    PerfResult,
    PrefillTime,
    StackCalibration,
    StackPoint,
)

# a CSV row of `perf` is a prefill or a decode row: the union of both, in this order
_PERF_CSV_KEYS = ("table", "length_tokens", "batch", "context_tokens", "prefill_s", "prefill_s_p10", "prefill_s_p90",
                  "step_s", "step_s_p10", "step_s_p90", "tokens_per_s",
                  "bound", "compute_s", "memory_s", "activation_s", "comm_s", "overhead_s")


def efficiency_json(e: Efficiency) -> dict[str, Any]:
    """The factors an overlay can set (the rest of a profile is in its stack)."""
    return {"compute": e.compute, "low_precision": e.low_precision, "memory": e.memory, "comm": e.comm,
            "prefill_overhead_s": e.prefill_overhead_s,
            "decode_overhead_s": e.decode_overhead_s, "source": e.source}


def _prefill(p: PrefillTime) -> dict[str, Any]:
    return {"length_tokens": p.length_tokens, "prefill_s": p.prefill_s, "prefill_s_p10": p.prefill_s_p10,
            "prefill_s_p90": p.prefill_s_p90, "bound": p.bound, "compute_s": p.compute_s, "memory_s": p.memory_s,
            "activation_s": p.activation_s, "comm_s": p.comm_s, "overhead_s": p.overhead_s}


def _decode(d: DecodeStep) -> dict[str, Any]:
    return {"batch": d.batch, "context_tokens": d.context_tokens, "step_s": d.step_s, "step_s_p10": d.step_s_p10,
            "step_s_p90": d.step_s_p90, "tokens_per_s": d.tokens_per_s, "bound": d.bound, "compute_s": d.compute_s,
            "memory_s": d.memory_s, "comm_s": d.comm_s, "overhead_s": d.overhead_s}


def _capacity(c: BsMax) -> dict[str, Any]:
    return {"bs_max": c.bs_max, "bs_tpot": c.bs_tpot, "bs_memory": c.bs_memory, "binding": c.binding,
            "tpot_s": c.tpot_s, "context_tokens": c.context_tokens, "output_tokens": c.output_tokens,
            "memory_fraction": c.memory_fraction, "step_s": c.step_s, "tokens_per_s": c.tokens_per_s,
            "requests_per_s": c.requests_per_s, "requests_per_s_p10": c.requests_per_s_p10,
            "requests_per_s_p90": c.requests_per_s_p90}


def perf_json(r: PerfResult) -> dict[str, Any]:
    return {"model": r.model, "instance": r.instance, "efficiency": efficiency_json(r.efficiency),
            "stack": stack_json(r.stack), "prefill": [_prefill(p) for p in r.prefill],
            "decode": [_decode(d) for d in r.decode], "bs_max": r.capacity.bs_max,
            "decode_capacity": _capacity(r.capacity)}


def perf_csv_rows(r: PerfResult) -> list[dict[str, Any]]:
    """The prefill rows, then the decode rows, each with every key (None where the other table's)."""
    rows = [{"table": "prefill", **_prefill(p)} for p in r.prefill] + [
        {"table": "decode", **_decode(d)} for d in r.decode]
    return [{k: row.get(k) for k in _PERF_CSV_KEYS} for row in rows]


def _calibration_row(x: CalibrationRow) -> dict[str, Any]:
    return {"row": x.row, "kind": x.kind, "model": x.model, "length_tokens": x.length_tokens, "batch": x.batch,
            "context_tokens": x.context_tokens, "measured_s": x.measured_s, "predicted_s": x.predicted_s,
            "rel_error": x.rel_error}


def calibrate_rows(r: CalibrationResult) -> list[dict[str, Any]]:
    return [_calibration_row(x) for x in r.rows]


def calibrate_json(r: CalibrationResult, *, written: str | None = None) -> dict[str, Any]:
    out = {"hardware": r.hardware, "instance": r.instance, "measurements": r.measurements,
           "efficiency": efficiency_json(r.efficiency), "previous_efficiency": efficiency_json(r.previous_efficiency),
           "parameters": {n: r.how(n) for n in r.holdable}, "fitted": list(r.fitted), "rows": calibrate_rows(r),
           "rms_rel_error": r.rms_rel_error, "max_abs_rel_error": r.max_abs_rel_error,
           "overlay": overlay_mapping(r.hardware, r.efficiency), "overlay_yaml": r.overlay_yaml,
           "suggested_path": r.suggested_path}
    return out if written is None else out | {"written": written}


def _stack_point(p: StackPoint) -> dict[str, Any]:
    return {"file": p.file, "line": p.line, "model": p.model, "instance": p.instance, "kind": p.kind,
            "tokens": p.tokens, "batch": p.batch, "measured_s": p.measured_s, "predicted_s": p.predicted_s,
            "rel_error": p.rel_error, "held_out_ratio": p.held_out_ratio}


def calibrate_stack_rows(r: StackCalibration) -> list[dict[str, Any]]:
    return [_stack_point(p) for p in r.rows]


def calibrate_stack_json(r: StackCalibration, *, written: str | None = None) -> dict[str, Any]:
    lo, hi = r.profile.prefill_band
    out = {"name": r.profile.name, "base": r.base, "fitted": list(r.fitted), "parameters": dict(r.parameters),
           "rows": calibrate_stack_rows(r), "median_abs_rel_error": r.median_abs_rel_error, "band_p10": lo,
           "band_p90": hi, "band_from": r.profile.band_from, "stack_yaml": r.stack_yaml}
    return out if written is None else out | {"written": written}
