"""Typed result of `latency` on a scenario of several models (``api.fleet_latency``): each
configuration's analytic TTFT per entry (a model at a PD site) and over every request."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from prfaas_plan.specs.latency import SystemTiming


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetTiming:
    """One configuration of the fleet at a total rate. ``entries``: each entry's timing at its
    share of the rate (its pool of the service, its local pool, its decode; ``link_utilization``:
    its site link's, every entry's KV on it); ``pools``: each entry's instances of the service and
    their utilisation; ``links``: each link's utilisation by all its traffic."""

    capacity_rps: float
    capacity_binding: str
    rate_rps: float
    entries: Mapping[str, SystemTiming]
    models: Mapping[str, str]  # entry label -> its model's name in the scenario
    demand_shares: Mapping[str, float]  # entry label -> its share of the total rate
    links_of: Mapping[str, str]  # entry label -> its link
    pools: Mapping[str, tuple[int, float]]  # entry label -> (instances, utilisation)
    links: Mapping[str, float]  # link -> utilisation
    ttft_mean_s: float | None
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None

    @property
    def stable(self) -> bool:
        return all(t.stable for t in self.entries.values())

    @property
    def load(self) -> float:
        return self.rate_rps / self.capacity_rps

    @property
    def unstable_stages(self) -> tuple[str, ...]:
        """Every unstable stage, named with its entry (``DeepSeek-V3: prfaas prefill``)."""
        return tuple(f"{label}: {s}" for label, t in self.entries.items() for s in t.unstable_stages)


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetLatencyResult:
    """`latency` on several models: the plan ("prfaas") and separate services ("separate"), the
    configurations `simulate` runs, at the same total rate."""

    scenario: str
    rate_rps: float
    load: float  # the rate over the smaller capacity
    systems: Mapping[str, FleetTiming]
