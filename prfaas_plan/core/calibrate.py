"""Fit a GPU's efficiency factors to measured prefill and decode times (least squares, log time).

Minimises sum_i (log T_model,i(theta) - log T_measured,i)^2 over theta with
``scipy.optimize.least_squares`` (trust-region reflective, bounds e in (0, 1], overheads >= 0).
Log residuals weigh a 0.4 s and a 7 s measurement alike (relative error). Which parameters are
fitted depends on the rows given:

- prefill rows: ``compute`` and ``prefill_overhead_s``, plus ``memory`` when the memory term
  binds (exceeds compute) for at least one prefill row at the starting point;
- decode rows: ``memory`` and ``decode_overhead_s``.

``comm`` is never fitted (prefill and decode times cannot tell it from compute), nor is
``low_precision`` (the FP8/FP4 GEMM ratio comes from public kernel figures, see
benchmarks/data/README.md); they keep the hardware's value, as does any factor the caller holds
(``hold``): e.g. a prefill overhead known from short prompts when every row is long. The same
factors then hold for every model on that GPU.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core.decode import DecodeWork, decode_work, step_from_work
from prfaas_plan.core.prefill import PrefillWork, prefill_work, time_from_work
from prfaas_plan.errors import SolverError, SpecError
from prfaas_plan.specs.hardware import Efficiency, InstanceSpec
from prfaas_plan.specs.model import ModelSpec

_EFF_MIN = 1e-4
_BOUNDS = {"compute": (_EFF_MIN, 1.0), "memory": (_EFF_MIN, 1.0),
           "prefill_overhead_s": (0.0, np.inf), "decode_overhead_s": (0.0, np.inf)}
_STARTS = {"compute": (0.1, 0.3, 0.6), "memory": (0.5, 0.85),
           "prefill_overhead_s": (0.05, 0.4), "decode_overhead_s": (0.002, 0.01)}


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillMeasurement:
    """A measured prefill: l new tokens after a cached prefix, on the calibrated instance."""

    model: ModelSpec
    length: int
    prefill_s: float
    cached_prefix: int = 0
    row: int | None = None  # where it came from (CSV row), for messages


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeMeasurement:
    """A measured decode step: B requests at context c."""

    model: ModelSpec
    batch: int
    context: int
    step_s: float
    row: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationFit:
    """The fitted efficiency and how well it reproduces each row (prefill rows first).

    rel_error = predicted / measured - 1 per row; rms and max over all rows.
    """

    efficiency: Efficiency
    fitted: tuple[str, ...]
    kinds: tuple[str, ...]
    measured_s: NDArray[np.float64]
    predicted_s: NDArray[np.float64]
    rel_error: NDArray[np.float64]
    rms_rel_error: float
    max_abs_rel_error: float
    evaluations: int


HOLDABLE = tuple(f.name for f in fields(Efficiency) if f.name != "source")


def _memory_binds(instance: InstanceSpec, work: PrefillWork) -> bool:
    r = time_from_work(work, instance)
    return bool(np.any(r.memory_s > r.compute_s))


def _fitted_parameters(instance: InstanceSpec, prefill: list[tuple[PrefillMeasurement, PrefillWork]],
                       decode: list[DecodeMeasurement], hold: Mapping[str, float]) -> tuple[str, ...]:
    names: list[str] = []
    if prefill:
        names += ["compute", "prefill_overhead_s"]
        if any(_memory_binds(instance, w) for _, w in prefill):
            names.append("memory")
    if decode:
        names += [n for n in ("memory", "decode_overhead_s") if n not in names]
    return tuple(n for n in names if n not in hold)


def _check_hold(hold: Mapping[str, float]) -> None:
    for name, value in hold.items():
        if name not in HOLDABLE:
            raise SpecError(f"cannot hold {name!r} (use one of {', '.join(HOLDABLE)})", field="hold")
        lo, hi = _BOUNDS.get(name, (_EFF_MIN, 1.0))
        if not lo <= value <= hi:
            shown = f"[{lo:g}, {hi:g}]" if lo == 0 else f"(0, {hi:g}]"  # efficiencies: any positive fraction
            raise SpecError(f"{name} = {value:g} is outside {shown}", field="hold")


def calibrate(instance: InstanceSpec, prefill: tuple[PrefillMeasurement, ...] = (),
              decode: tuple[DecodeMeasurement, ...] = (), *, source: str,
              hold: Mapping[str, float] | None = None) -> CalibrationFit:
    """Least-squares efficiency factors for ``instance``'s GPU from measured times.

    Parameters
    ----------
    instance : the GPU type and GPU count the measurements were taken on; its current
        efficiency is the starting point and supplies the factors that are not fitted.
    prefill, decode : measurements (seconds, tokens).
    source : provenance written into the result's ``Efficiency.source``.
    hold : efficiency fields (``Efficiency`` names, SI) fixed at the given values, not fitted.

    Raises
    ------
    SpecError
        fewer rows than fitted parameters, no rows, or a bad ``hold``.
    SolverError
        the least-squares solver did not converge from any starting point.
    """
    pre = [(m, prefill_work(m.model, m.length, m.cached_prefix, gpus=instance.gpus)) for m in prefill]
    dec: list[tuple[DecodeMeasurement, DecodeWork]] = [
        (m, decode_work(m.model, m.batch, m.context, gpus=instance.gpus)) for m in decode]
    hold = dict(hold or {})
    _check_hold(hold)
    instance = replace(instance, gpu=replace(instance.gpu, efficiency=replace(instance.gpu.efficiency, **hold)))
    names = _fitted_parameters(instance, pre, list(decode), hold)
    rows = len(pre) + len(dec)
    if rows == 0:
        raise SpecError("no measurement rows to calibrate on")
    if not names:
        raise SpecError("every parameter these rows could fit is held; nothing to fit", field="hold")
    if rows < len(names):
        given = [m.row for m, _ in pre] + [m.row for m, _ in dec]
        where = f" (row {', '.join(str(r) for r in given)})" if all(r is not None for r in given) else ""
        raise SpecError(f"{rows} measurement row(s){where} cannot fit {len(names)} parameters "
                        f"({', '.join(names)}); give at least {len(names)} rows or hold some parameters")
    measured = np.array([m.prefill_s for m, _ in pre] + [m.step_s for m, _ in dec], dtype=np.float64)
    base = instance.gpu.efficiency

    def efficiency(x: NDArray[np.float64]) -> Efficiency:
        return replace(base, **{n: float(v) for n, v in zip(names, x, strict=True)})

    def predict(x: NDArray[np.float64]) -> NDArray[np.float64]:
        e = efficiency(x)
        out = [float(time_from_work(w, instance, e).seconds) for _, w in pre]
        out += [float(step_from_work(w, m.model, instance, e).seconds) for m, w in dec]
        return np.asarray(out)

    def residuals(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.log(predict(x)) - np.log(measured)

    lo = np.array([_BOUNDS[n][0] for n in names])
    hi = np.array([_BOUNDS[n][1] for n in names])
    starts = [np.array([getattr(base, n) for n in names])]
    starts += [np.array(s) for s in itertools.product(*(_STARTS[n] for n in names))]
    from scipy.optimize import least_squares  # lazily: 0.6 s of import that only calibrate needs

    best = None
    evaluations = 0
    for x0 in starts:
        x0 = np.clip(x0, lo + 1e-6, np.where(np.isinf(hi), x0, hi - 1e-6))
        res = least_squares(residuals, x0, bounds=(lo, hi), method="trf", x_scale="jac")
        evaluations += res.nfev
        if res.success and np.all(np.isfinite(res.x)) and (best is None or res.cost < best.cost):
            best = res
    if best is None:
        raise SolverError(f"calibration did not converge from any of {len(starts)} starting points")
    fitted = replace(efficiency(best.x), source=source)
    predicted = predict(best.x)
    rel = predicted / measured - 1.0
    return CalibrationFit(efficiency=fitted, fitted=names, kinds=("prefill",) * len(pre) + ("decode",) * len(dec),
                          measured_s=measured, predicted_s=predicted, rel_error=rel,
                          rms_rel_error=float(np.sqrt(np.mean(rel**2))), max_abs_rel_error=float(np.max(np.abs(rel))),
                          evaluations=evaluations)
