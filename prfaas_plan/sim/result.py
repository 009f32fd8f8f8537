"""The statistics of one simulated run (``sim.run.simulate``, ``sim.topology.simulate_topology``) and
their JSON view."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from prfaas_plan.sim.entities import Hist

__all__ = ["SimResult", "SimulateRun", "SystemRun", "TopologySimResult", "json_ready"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SimResult:
    """Statistics of one simulated run; ``to_dict()`` is the JSON view. Times s, rates req/s."""

    system: str
    rate_rps: float
    requests: int  # arrived
    measured: int  # after warm-up
    completed: int  # measured requests admitted to decode (each completes one decode time later)
    span_s: float  # measurement window: [first measured arrival, last admission] (see sim.run)
    throughput_rps: float | None  # decode admissions (= completions in steady state) per second in the window
    ttft: Hist
    ttft_paths: dict[str, Hist]
    tpot_s: float
    stage_rps: dict[str, float]  # completions per second of each stage in the window
    routed_share: dict[str, float]  # fraction of arrivals in the window sent each way
    utilization: dict[str, float]  # busy fraction: instances of each pool, slots of decode
    mean_queue: dict[str, float]  # time-average requests waiting, per pool and for decode admission
    link_utilization: float | None  # busy fraction of the link in the window (= mean bytes/s / bandwidth)
    link_bytes_per_s: float | None
    link_series: tuple[np.ndarray, np.ndarray]  # (window start s, utilisation)
    # traces: the PD cluster's cache hits / input tokens over every replayed request, warm-up
    # included: what ``optimize --trace`` reports (core.trace.replay_prefix_cache) for the same
    # requests; and the measured requests' input tokens not prefilled (either cluster's cache)
    prefix_hit_rate: float | None
    recompute_avoided_rate: float | None
    kept_local: int  # requests the short-term rule kept local
    role_changes: int
    final_split: dict[str, int]
    events: int
    wall_s: float
    cpu_s: float
    records: list[dict[str, Any]] | None = field(default=None, repr=False)
    timeline: Any = field(default=None, repr=False)  # sim.replay.Timeline of a replayed bandwidth series

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "ttft_mean_s": self.ttft.mean, "ttft_p50_s": self.ttft.quantile(0.5),
            "ttft_p90_s": self.ttft.quantile(0.9), "ttft_p99_s": self.ttft.quantile(0.99), "tpot_s": self.tpot_s,
            "per_path": {name: {"count": h.n, "share": h.n / self.ttft.n if self.ttft.n else None,
                                "ttft_mean_s": h.mean, "ttft_p50_s": h.quantile(0.5), "ttft_p90_s": h.quantile(0.9),
                                "ttft_p99_s": h.quantile(0.99)} for name, h in self.ttft_paths.items()},
            "throughput_rps": self.throughput_rps, "completed": self.completed, "requests": self.requests,
            "measured": self.measured, "span_s": self.span_s, "rate_rps": self.rate_rps,
            "link_utilization": self.link_utilization, "link_bytes_per_s": self.link_bytes_per_s,
            "prefix_hit_rate": self.prefix_hit_rate, "recompute_avoided_rate": self.recompute_avoided_rate,
            "stage_rps": self.stage_rps, "routed_share": self.routed_share,
            "utilization": self.utilization, "mean_queue": self.mean_queue, "kept_local": self.kept_local,
            "role_changes": self.role_changes, "final_split": self.final_split,
        }
        return out

    @property
    def requests_per_cpu_s(self) -> float:
        return self.requests / self.cpu_s if self.cpu_s > 0 else math.inf


def _ttft(h: Hist) -> dict[str, float | None]:
    return {"ttft_mean_s": h.mean, "ttft_p50_s": h.quantile(0.5), "ttft_p90_s": h.quantile(0.9),
            "ttft_p99_s": h.quantile(0.99)}


def json_ready(x: Any) -> Any:
    """``x`` with numpy scalars as Python numbers and every NaN or infinity as None (strict JSON)."""
    if isinstance(x, dict):
        return {k: json_ready(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [json_ready(v) for v in x]
    if isinstance(x, np.generic):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySimResult:
    """Statistics of one simulated topology (PD sites sharing one PrfaaS pool); ``to_dict()`` is the
    JSON view. Times s, rates req/s, over one window for every site (see ``sim.topology``).

    ``sites`` holds each PD site's statistics as a ``SimResult`` (its arrivals, TTFT, link,
    pools); there ``stage_rps["prfaas"]`` counts the site's own requests leaving the shared pool,
    while ``utilization["prfaas"]`` and ``mean_queue["prfaas"]`` are the shared pool's. Stages here
    are named ``prfaas``, ``SITE:local``, ``SITE:link``, ``SITE:decode``; ``stage_share`` is the
    fraction of all arrivals in the window that passes through each (prfaas: sum_i share_i p_i).
    A link's rate there is its bytes/s over the bytes per arrival (the site's ``stage_rps["link"]``
    counts finished transfers, as ``SimResult`` does).
    """

    system: str
    rate_rps: float  # total arrival rate Lambda
    requests: int
    measured: int
    completed: int
    span_s: float
    throughput_rps: float | None  # decode admissions of every site per second in the window
    ttft: Hist  # every site's measured requests
    ttft_paths: dict[str, Hist]
    prfaas_utilization: float | None  # busy fraction of the shared pool's instances
    prfaas_mean_queue: float | None
    stage_rps: dict[str, float | None]
    stage_share: dict[str, float]
    stage_utilization: dict[str, float | None]  # busy fraction of each stage's instances, slots or link
    sites: dict[str, SimResult]
    events: int
    wall_s: float
    cpu_s: float

    def to_dict(self) -> dict[str, Any]:
        n = self.ttft.n
        out = _ttft(self.ttft) | {
            "per_path": {name: {"count": h.n, "share": h.n / n if n else None} | _ttft(h)
                         for name, h in self.ttft_paths.items()},
            "throughput_rps": self.throughput_rps, "completed": self.completed, "requests": self.requests,
            "measured": self.measured, "span_s": self.span_s, "rate_rps": self.rate_rps,
            "prfaas_utilization": self.prfaas_utilization, "prfaas_mean_queue": self.prfaas_mean_queue,
            "stage_rps": self.stage_rps, "stage_share": self.stage_share,
            "stage_utilization": self.stage_utilization,
            "sites": {name: r.to_dict() for name, r in self.sites.items()},
            "events": self.events, "wall_s": self.wall_s, "cpu_s": self.cpu_s,
        }
        return json_ready(out)


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemRun:
    """One system simulated at the shared total rate: each PD site's run (``sites``) and, where
    several sites share the prefill service, the one run over all of them (``shared``); its
    configuration (``specs.topology.TopologySystem``) and the analytic TTFT at the same rate
    (``specs.latency.TopologyTiming``)."""

    name: str
    system: Any  # specs.topology.TopologySystem
    sites: dict[str, SimResult]
    shared: TopologySimResult | None  # several PD sites; one site's run is its system's
    analytic: Any  # specs.latency.TopologyTiming
    load: float  # the shared rate over this system's capacity

    @property
    def result(self) -> SimResult | TopologySimResult:
        """The run over every request: the shared run, or the one site's."""
        return self.shared if self.shared is not None else next(iter(self.sites.values()))


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulateRun:
    """`simulate`: every system at the same total rate (``head`` the headline one) and the run's
    settings; its JSON is ``report.sim_json``'s."""

    scenario: str
    model: str
    head: str
    rate_rps: float
    load: float
    systems: dict[str, SystemRun]
    seed: int | None
    requests: int | None
    duration_s: float | None
    warmup_fraction: float
    workload: str  # trace or parametric
    arrival: str
    cache_mode: str
    control: Any  # specs.system.ControlConfig | None
    hit_rate_source: str | None = None  # a trace's: measured, assumed or unknown (specs.topology.WorkloadSpec)

    @property
    def sites(self) -> tuple[str, ...]:
        """The PD sites, in the scenario's order."""
        return tuple(self.systems[self.head].sites)

    def at_site(self, site: str) -> dict[str, SimResult]:
        """Each system's run at PD site ``site``."""
        return {name: s.sites[site] for name, s in self.systems.items()}
