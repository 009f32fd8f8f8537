"""Typed results of `perf` (analytic prefill and decode, BS_max) and `calibrate` (a GPU's overlay,
or a serving-stack profile); SI units. Their JSON and CSV are written by ``report.perf_json``."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.hardware import Efficiency
from prfaas_plan.specs.stack import StackSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class PrefillTime:
    """T_prefill of one prompt length, its P10-P90 (the stack's band) and its parts."""

    length_tokens: int
    prefill_s: float
    prefill_s_p10: float
    prefill_s_p90: float
    bound: str  # the part that sets it: overhead, compute, memory, ...
    compute_s: float
    memory_s: float
    activation_s: float
    comm_s: float
    overhead_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeStep:
    """T_step of a batch at one context, its P10-P90 and its parts."""

    batch: int
    context_tokens: int
    step_s: float
    step_s_p10: float
    step_s_p90: float
    bound: str
    compute_s: float
    memory_s: float
    comm_s: float
    overhead_s: float

    @property
    def tokens_per_s(self) -> float:
        return self.batch / self.step_s


@dataclass(frozen=True, slots=True, kw_only=True)
class BsMax:
    """BS_max for a TPOT SLO: the smaller of what the SLO allows and what HBM holds; step and rates
    at BS_max (requests_per_s: Eq. 5), the rates' P10-P90 from the decode band."""

    bs_max: int
    bs_tpot: int  # largest batch meeting the SLO, memory aside
    bs_memory: int  # largest batch whose KV fits
    binding: str  # tpot, memory, weights (they do not fit) or overhead (B = 1 misses the SLO)
    tpot_s: float
    context_tokens: int
    output_tokens: int
    memory_fraction: float  # HBM share for weights + KV
    step_s: float
    tokens_per_s: float
    requests_per_s: float
    requests_per_s_p10: float
    requests_per_s_p90: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PerfResult:
    """`perf`: one model on one instance under one serving-stack profile."""

    model: str
    instance: str
    efficiency: Efficiency  # the instance's GPU's, after the stack is applied
    stack: StackSpec
    prefill: tuple[PrefillTime, ...]
    decode: tuple[DecodeStep, ...]
    capacity: BsMax


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationRow:
    """One measured time against the fitted model; a prefill has a length, a decode step a batch and context."""

    row: int | None  # the CSV's line
    kind: str  # prefill or decode
    model: str
    length_tokens: int | None
    batch: int | None
    context_tokens: int | None
    measured_s: float
    predicted_s: float
    rel_error: float  # predicted / measured - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationResult:
    """`calibrate` of one GPU: its efficiency overlay fitted to a measurement CSV."""

    hardware: str
    instance: str
    measurements: str  # the CSV, as given
    efficiency: Efficiency  # fitted
    previous_efficiency: Efficiency
    holdable: tuple[str, ...]  # every factor a fit may move, in Efficiency's order
    fitted: tuple[str, ...]
    held: tuple[str, ...]
    rows: tuple[CalibrationRow, ...]  # prefill rows first
    rms_rel_error: float
    max_abs_rel_error: float
    overlay_yaml: str  # the overlay file's text, with a comment saying how it was made

    def how(self, name: str) -> str:
        """fitted, held or kept (the previous value)."""
        return "fitted" if name in self.fitted else "held" if name in self.held else "kept"

    @property
    def suggested_path(self) -> str:
        return f"CATALOG_DIR/hardware/{self.hardware}-calibrated.yaml"


@dataclass(frozen=True, slots=True, kw_only=True)
class StackPoint:
    """One measured point of a profile fit: where it came from, the fit's time and the held-out ratio."""

    file: str  # its source: a benchmark file, or a row's source in the public set
    line: int | None
    model: str
    instance: str
    kind: str
    tokens: int | None
    batch: int | None
    measured_s: float
    predicted_s: float
    rel_error: float  # predicted / measured - 1
    held_out_ratio: float  # measured / predicted by a fit without its source (in-sample with < 3 sources)


@dataclass(frozen=True, slots=True, kw_only=True)
class StackCalibration:
    """`calibrate` into a serving-stack profile: the fitted profile and its residuals."""

    profile: StackSpec  # fitted; its prefill_band and band_from are the fit's
    base: str  # the profile the fit started from
    fitted: tuple[str, ...]  # in the order they were fitted
    rows: tuple[StackPoint, ...]
    median_abs_rel_error: float
    stack_yaml: str  # the profile as stacks/NAME.yaml

    @property
    def parameters(self) -> tuple[tuple[str, float], ...]:
        """The fitted parameters and their values (SI)."""
        return tuple((n, getattr(self.profile.efficiency, n)) for n in self.fitted)
