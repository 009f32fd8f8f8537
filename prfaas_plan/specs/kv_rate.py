"""The typed result of `kv-rate`: Phi_kv(l) = S_kv(l) / T_prefill(l) per length (Eq. 1) and, for
N instances, the egress B_out = N x Phi_kv (Eq. 2)."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.stack import StackSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class KvRateRow:
    """One length under one time source; the P10-P90 ends are the stack's band on a modelled time
    (a measured time is its own: both ends equal it)."""

    length_tokens: int
    kv_bytes: float  # S_kv(l)
    prefill_s: float  # T_prefill(l)
    prefill_s_p10: float
    prefill_s_p90: float
    kv_bytes_per_s: float  # Phi_kv(l)
    kv_bytes_per_s_p10: float  # at the slow end of T_prefill's band
    kv_bytes_per_s_p90: float
    source: str  # where its time comes from, with the reason: "extrapolated (beyond the measured 128K)"
    basis: str  # measured, interpolated, extrapolated, analytic (scaled ...)
    beyond_context: bool
    kv_source: str  # the measured profile's basis for S_kv, or "kv engine"
    egress_bytes_per_s: float | None  # N x Phi_kv for --instances N (Eq. 2)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeSource:
    source: str  # measured, scaled or analytic
    detail: str


@dataclass(frozen=True, slots=True, kw_only=True)
class KvRateResult:
    model: str
    instance: str  # e.g. 8xH200
    instances: int | None  # N of Eq. 2, None: no egress asked
    kv_dtype: str
    state_dtype: str
    sources: tuple[TimeSource, ...]  # one per time source asked (both: measured, then analytic)
    stack: StackSpec
    rows: tuple[KvRateRow, ...]
