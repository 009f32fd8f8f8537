"""The typed result of the TTFT SLO in `optimize`: the largest rate Lambda_TTFT at which each
system meets ``statistic`` TTFT <= ``bound_s`` at every PD site (the analytic latency model), each
system's configuration searched under the bound (``api.slo``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SloSite:
    """One PD site of a system under the SLO: its configuration and its TTFT at Lambda_TTFT."""

    site: str
    threshold_tokens: float | None  # None: homogeneous PD (nothing offloaded); 0: every request offloaded
    n_p: int
    n_d: int
    ttft_mean_s: float
    ttft_p90_s: float
    ttft_p99_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SloSystem:
    """One system's configuration under the SLO (``binding``: ttft where the SLO holds the rate
    below capacity, else what bounds the capacity)."""

    n_prfaas: int
    lambda_ttft_rps: float
    capacity_rps: float
    load: float
    binding: str
    ttft_at_rate_s: float  # the bounded statistic at Lambda_TTFT, at the site where it is highest
    sites: tuple[SloSite, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SloPlan:
    """PrfaaS-PD's best configuration under the SLO and the baselines' (None: no configuration of
    that system meets the bound, or the scenario has no such baseline)."""

    bound_s: float
    statistic: str  # mean or p90
    prfaas: SloSystem
    homogeneous: SloSystem | None
    naive_heterogeneous: SloSystem | None
    prfaas_vs_homogeneous: float | None
    search_s: float
