"""Typed results of the analytic latency model (`latency`, and the TTFT side of `optimize`,
`simulate`, `degrade`, `thresholds`): each path's and system's TTFT law at a rate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, kw_only=True)
class PathTiming:
    """Analytic TTFT of one path (prfaas or local) at a rate; seconds."""

    name: str
    share: float
    rate_rps: float
    ttft_mean_s: float
    ttft_p50_s: float
    ttft_p90_s: float
    ttft_p99_s: float
    wait_mean_s: float
    prefill_mean_s: float
    transfer_mean_s: float
    admission_mean_s: float
    zero_load_ttft_mean_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemTiming:
    """Analytic TTFT of one system (or one site of a topology) at one arrival rate. Above
    capacity the TTFT fields are None and ``unstable_stages`` names what diverges."""

    threshold_tokens: float | None
    n_prfaas: int
    n_p: int
    n_d: int
    capacity_rps: float
    capacity_binding: str
    rate_rps: float
    utilization: Mapping[str, float]
    unstable_stages: tuple[str, ...]
    tpot_s: float
    p_offload: float
    zero_load_ttft_mean_s: float
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None
    paths: tuple[PathTiming, ...]
    link_utilization: float

    @property
    def stable(self) -> bool:
        return not self.unstable_stages

    @property
    def load(self) -> float:
        return self.rate_rps / self.capacity_rps

    def statistic(self, stat: str) -> float | None:
        """The TTFT statistic ``mean``, ``p50``, ``p90`` or ``p99``."""
        return self.ttft_mean_s if stat == "mean" else getattr(self, f"ttft_{stat}_s")


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceCheck:
    """A trace's whole replay through the simulator at `latency`'s rate, against the analytic TTFT.

    ``simulated[system]``: (mean, P90) TTFT, s; ``holds[system]``: the analytic model stable and its
    P90 within ``TRACE_CHECK_RTOL`` of the simulated one. ``peak_to_mean`` and ``arrival_scv``: the
    trace's burstiness as the analytic model takes it (``core.arrivals``)."""

    requests: int
    peak_to_mean: float
    arrival_scv: float
    simulated: Mapping[str, tuple[float, float]]
    holds: Mapping[str, bool]


TRACE_CHECK_RTOL = 0.25


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologyTiming:
    """Analytic TTFT of a topology's system at a total rate: per site, and over every request."""

    capacity_rps: float
    capacity_binding: str
    rate_rps: float
    prfaas_utilization: float
    n_prfaas: int
    sites: Mapping[str, SystemTiming]
    demand_shares: Mapping[str, float]  # PD site -> its share of the total rate
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None

    @property
    def stable(self) -> bool:
        return all(s.stable for s in self.sites.values())

    @property
    def load(self) -> float:
        return self.rate_rps / self.capacity_rps


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencyResult:
    """`latency`: every system at the same total rate, per PD site and over every request; ``head``
    names the headline system. ``trace_check``: with a trace, its replay in the simulator (the
    analytic model checked; one PD site)."""

    scenario: str
    model: str
    rate_rps: float
    load: float
    head: str
    systems: Mapping[str, TopologyTiming]
    trace_check: TraceCheck | None = None

    @property
    def sites(self) -> tuple[str, ...]:
        """The PD sites, in the scenario's order."""
        return tuple(self.systems[self.head].sites)

    def at_site(self, site: str) -> dict[str, SystemTiming]:
        """Each system's timing at PD site ``site``."""
        return {name: t.sites[site] for name, t in self.systems.items()}
