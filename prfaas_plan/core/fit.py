"""Fit a serving stack's time-model parameters on measurements across models, GPUs and sources.

Each measured point is one instance (GPU type, GPU count), one model and one time: a prefill of l
tokens (batch 1, no prefix cache) or a decode step of B requests at context c. The fit minimises
the robust (soft L1) sum of log(T_model / T_measured) over the parameters a ``StackFit`` names, so
a 50 ms and a 7 s point weigh alike (relative error), with ``scipy.optimize.least_squares``.
Efficiencies are fitted as logits (they stay in (0, 1)), costs as logs (they stay positive).

``leave_one_source_out`` fits on every source but one and predicts the one left out, in turn:
its residuals, never in-sample, give a profile's P10-P90 band (``specs.stack.StackSpec``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core.decode import decode_work, step_from_work
from prfaas_plan.core.prefill import prefill_work, time_from_work
from prfaas_plan.errors import SolverError, SpecError
from prfaas_plan.specs.hardware import Efficiency, InstanceSpec
from prfaas_plan.specs.model import ModelSpec

# parameter -> (transform, lower, upper, start): "logit" for fractions, "log" for positive costs
PARAMETERS = {
    "compute": ("logit", 0.1, 0.95, 0.5),
    "low_precision": ("logit", 0.2, 0.98, 0.6),
    "moe": ("logit", 0.01, 0.98, 0.3),
    "moe_low_precision": ("logit", 0.2, 0.98, 0.6),
    "attention_full": ("logit", 0.02, 0.98, 0.5),
    "attention_mla": ("logit", 0.02, 0.98, 0.5),
    "attention_linear": ("logit", 0.005, 0.98, 0.2),
    "memory": ("logit", 0.2, 0.98, 0.7),
    "gemm_half_tokens": ("log", 8.0, 8192.0, 256.0),
    "peak_exponent": ("logit", 0.0, 0.7, 0.2),
    "prefill_overhead_s": ("log", 1e-3, 1.0, 0.02),
    "collective_latency_s": ("log", 1e-7, 1e-3, 2e-5),
    "decode_overhead_s": ("log", 1e-4, 0.1, 0.003),
    "decode_layer_s": ("log", 1e-7, 1e-3, 5e-5),
    "request_overhead_s": ("log", 1e-4, 1.0, 0.02),
    "moe_layer_s": ("log", 1e-6, 0.01, 2e-4),
    "moe_expert_s": ("log", 1e-8, 1e-4, 3e-6),
}
PREFILL_PARAMETERS = ("compute", "low_precision", "moe", "moe_low_precision", "attention_linear", "gemm_half_tokens",
                      "peak_exponent", "prefill_overhead_s", "request_overhead_s", "moe_layer_s", "moe_expert_s")
DECODE_PARAMETERS = ("memory", "decode_overhead_s", "decode_layer_s", "collective_latency_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class Point:
    """One measurement: ``kind`` "prefill" (``length`` tokens, batch 1) or "decode" (``batch`` at
    ``context``), ``measured_s`` seconds, on ``instance``; ``source`` groups points for leaving out.
    ``client``: a prefill timed by a client (a TTFT), which adds the request's fixed cost."""

    model: ModelSpec
    instance: InstanceSpec
    kind: str
    measured_s: float
    source: str
    length: int = 0
    batch: int = 1
    context: int = 0
    client: bool = False
    row: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StackFit:
    """Fitted parameters and each point's prediction (same order as the points)."""

    efficiency: Efficiency
    fitted: tuple[str, ...]
    predicted_s: NDArray[np.float64]
    measured_s: NDArray[np.float64]

    @property
    def ratio(self) -> NDArray[np.float64]:
        """measured / predicted per point."""
        return self.measured_s / self.predicted_s


def _to_x(name: str, value: float) -> float:
    kind, lo, hi, _ = PARAMETERS[name]
    if kind == "log":
        return float(np.log(np.clip(value, lo, hi)))
    u = (np.clip(value, lo, hi) - lo) / (hi - lo)
    u = float(np.clip(u, 1e-6, 1 - 1e-6))
    return float(np.log(u / (1 - u)))


def _from_x(name: str, x: float) -> float:
    kind, lo, hi, _ = PARAMETERS[name]
    if kind == "log":
        return float(np.clip(np.exp(x), lo, hi))
    return float(lo + (hi - lo) / (1.0 + np.exp(-x)))


class _Works:
    """Each point's work, computed once (the parameters change only the rates)."""

    def __init__(self, points: Sequence[Point]):
        self.points = list(points)
        self.work = [prefill_work(p.model, p.length, gpus=p.instance.gpus) if p.kind == "prefill"
                     else decode_work(p.model, p.batch, p.context, gpus=p.instance.gpus) for p in self.points]

    def predict(self, e: Efficiency) -> NDArray[np.float64]:
        out = np.empty(len(self.points))
        for i, (p, w) in enumerate(zip(self.points, self.work, strict=True)):
            if p.kind == "prefill":
                out[i] = float(time_from_work(w, p.instance, e).seconds)  # type: ignore[arg-type]
                if p.client:
                    out[i] += e.request_overhead_s
            else:
                out[i] = float(step_from_work(w, p.model, p.instance, e).seconds)  # type: ignore[arg-type]
        return out


def predict(points: Sequence[Point], efficiency: Efficiency) -> NDArray[np.float64]:
    """T_model of every point with ``efficiency``."""
    return _Works(points).predict(efficiency)


def identified(points: Sequence[Point], names: Sequence[str]) -> tuple[str, ...]:
    """The parameters of ``names`` the points can see: decode ones need decode points, ``moe`` an MoE
    model, ``low_precision`` an FP8/FP4 model, ``attention_linear`` a linear-attention model,
    ``peak_exponent`` two GPU types, ``collective_latency_s`` an instance of several GPUs."""
    kinds = {p.kind for p in points}
    have = {
        "moe": any(p.model.moe is not None for p in points if p.kind == "prefill"),
        "moe_layer_s": any(p.model.moe is not None for p in points if p.kind == "prefill"),
        "moe_expert_s": len({p.model.moe.num_experts for p in points if p.kind == "prefill" and p.model.moe}) > 1,
        "low_precision": any(p.model.weight_dtype.value in ("fp8", "fp4") for p in points if p.kind == "prefill"),
        "moe_low_precision": any(p.model.weight_dtype.value in ("fp8", "fp4") and p.model.moe is not None
                                 for p in points if p.kind == "prefill"),
        "attention_linear": any(any(g.kind.value == "linear" for g in p.model.layers) for p in points
                                if p.kind == "prefill"),
        "peak_exponent": len({p.instance.gpu.name for p in points if p.kind == "prefill"}) > 1,
        "collective_latency_s": any(p.instance.gpus > 1 for p in points),
        "request_overhead_s": any(p.client for p in points) and any(not p.client for p in points
                                                                      if p.kind == "prefill"),
    }
    out = []
    for n in names:
        if n in DECODE_PARAMETERS and n != "collective_latency_s" and "decode" not in kinds:
            continue
        if n in PREFILL_PARAMETERS and "prefill" not in kinds:
            continue
        if not have.get(n, True):
            continue
        out.append(n)
    return tuple(out)


def fit_stack(points: Sequence[Point], base: Efficiency, names: Sequence[str], *, source: str = "",
              loss: str = "soft_l1", f_scale: float = 0.2, start: Efficiency | None = None) -> StackFit:
    """Least-squares parameters ``names`` (PARAMETERS keys) on ``points``, the rest from ``base``.

    Starts from PARAMETERS' starting values and shifted ones, and from ``start`` (a fit on more
    points, e.g.) when given; the lowest cost wins. Raises SpecError with fewer points than
    parameters, SolverError when the solver fails."""
    names = identified(points, names)
    if not points:
        raise SpecError("no measurement points to fit on")
    if len(points) < len(names):
        raise SpecError(f"{len(points)} point(s) cannot fit {len(names)} parameters ({', '.join(names)})")
    works = _Works(points)
    measured = np.array([p.measured_s for p in points], dtype=np.float64)

    def efficiency(x: NDArray[np.float64]) -> Efficiency:
        return replace(base, **{n: _from_x(n, float(v)) for n, v in zip(names, x, strict=True)})

    def residuals(x: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.log(works.predict(efficiency(x))) - np.log(measured)

    from scipy.optimize import least_squares  # lazily: only calibrate fits

    x0 = np.array([_to_x(n, PARAMETERS[n][3]) for n in names])
    starts = [x0, x0 - 1.0, x0 + 1.0]
    if start is not None:
        starts.insert(0, np.array([_to_x(n, v if (v := getattr(start, n)) is not None else PARAMETERS[n][3])
                                   for n in names]))
    best = None
    for x in starts:
        try:
            res = least_squares(residuals, x, loss=loss, f_scale=f_scale, method="trf", max_nfev=400)
        except ValueError:
            continue
        if np.all(np.isfinite(res.x)) and (best is None or res.cost < best.cost):
            best = res
    if best is None:
        raise SolverError("the stack fit did not converge from any starting point")
    e = replace(efficiency(best.x), source=source or base.source)
    return StackFit(efficiency=e, fitted=names, predicted_s=works.predict(e), measured_s=measured)


def leave_one_source_out(points: Sequence[Point], base: Efficiency, names: Sequence[str],
                         **kw: object) -> NDArray[np.float64]:
    """measured / predicted of every point, predicted by a fit on the other sources' points only
    (each fit also starts where the fit on every point lands, so folds find the same basin)."""
    out = np.full(len(points), np.nan)
    sources = sorted({p.source for p in points})
    whole = fit_stack(points, base, names, **kw).efficiency  # type: ignore[arg-type]
    for s in sources:
        train = [p for p in points if p.source != s]
        test = [i for i, p in enumerate(points) if p.source == s]
        fit = fit_stack(train, base, names, start=whole, **kw)  # type: ignore[arg-type]
        pred = predict([points[i] for i in test], fit.efficiency)
        out[test] = np.array([points[i].measured_s for i in test]) / pred
    return out
