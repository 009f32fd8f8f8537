"""The typed results of the TTFT SLO in `optimize`: the largest rate Lambda_TTFT at which each
system meets ``statistic`` TTFT <= ``bound_s`` (the analytic latency model), one PD site searched
over configurations, a topology's systems held at their throughput-best ones."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class SloPoint:
    """One system's configuration under the SLO and its TTFT at Lambda_TTFT (``binding``: ttft
    where the SLO holds the rate below capacity, else what bounds the capacity)."""

    threshold_tokens: float | None
    n_prfaas: int
    n_p: int
    n_d: int
    lambda_ttft_rps: float
    capacity_rps: float
    load: float
    binding: str
    ttft_mean_s: float
    ttft_p90_s: float
    ttft_p99_s: float
    ttft_at_rate_s: float  # the bounded statistic at Lambda_TTFT


@dataclass(frozen=True, slots=True, kw_only=True)
class SloPlan:
    """One PD site: PrfaaS-PD's best configuration under the SLO and the baselines' (None: no
    configuration of that system meets the bound, or the scenario has no such baseline)."""

    bound_s: float
    statistic: str  # mean or p90
    prfaas: SloPoint
    homogeneous: SloPoint | None
    naive_heterogeneous: SloPoint | None
    prfaas_vs_homogeneous: float | None
    search_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteTtft:
    ttft_mean_s: float
    ttft_p90_s: float
    ttft_p99_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySloSystem:
    lambda_ttft_rps: float
    capacity_rps: float
    load: float
    binding: str
    sites: Mapping[str, SiteTtft]  # at Lambda_TTFT, per PD site


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySloPlan:
    """A topology: the largest total rate at which every site of each system meets the SLO, the
    systems held at their throughput configurations (None: misses it even at zero load)."""

    bound_s: float
    statistic: str
    systems: tuple[tuple[str, TopologySloSystem | None], ...]  # (system, result) in the systems' order
    prfaas_vs_homogeneous: float | None

    def of(self, name: str) -> TopologySloSystem | None:
        return dict(self.systems).get(name)
