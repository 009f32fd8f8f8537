"""Several models over one topology (``models:``): the specs and `optimize`'s typed result.

Every instance holds one model's weights: the prefill service's instances are assigned to the
models (an integer split), each PD site's instances too, and each link carries the KV of every
model its site serves. Lambda is the common scale: model m is served at w_m x Lambda (its demand
share), so Lambda_max is the largest rate at which every model gets its share
(docs/model.md#several-models).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prfaas_plan.specs.results import Pool, Priced
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.topology import SiteSystem


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetModelSpec:
    """One model of the fleet: its label, demand share and its own scenario over the topology
    (its model, workload, decode and SLOs; only the sites that serve it)."""

    name: str
    demand_share: float
    scenario: ScenarioSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSpec:
    name: str
    source: str
    path: str
    models: tuple[FleetModelSpec, ...]

    @property
    def topology(self):  # the shared hardware: the first model's view lists every site it serves
        return self.models[0].scenario.topology


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetEntryPoint:
    """One model at one PD site at the plan; rates in req/s of this entry's own traffic."""

    model: str
    site: str
    label: str  # the model's name, with "@site" where the fleet has several PD sites
    link: str
    demand_share: float  # of the total rate
    threshold_tokens: float | None  # None: nothing offloaded at an unbounded length law
    n_p: int
    n_d: int
    n_prfaas: int  # the service's instances holding this model for this site
    p_offload: float
    lambda_rps: float  # w x Lambda
    theta_pd_p_rps: float | None  # N_p / T_local(short) / (1 - p); None when nothing is local
    theta_pd_d_rps: float
    theta_prfaas_rps: float | None  # a / T_prfaas(long) / p; None when nothing is offloaded
    egress_bytes_per_s: float
    prfaas_utilization: float | None  # of its a instances; None without any


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetLinkPoint:
    link: str
    usable_bytes_per_s: float
    egress_bytes_per_s: float  # every model's KV on it at Lambda_max
    utilization: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetPoint:
    """A configuration of the whole fleet: Lambda_max, every entry, every link, what binds."""

    lambda_max_rps: float
    entries: tuple[FleetEntryPoint, ...]
    links: tuple[FleetLinkPoint, ...]
    n_prfaas: int  # the service's instances (assigned ones; ``separate``: the slices' sum)
    binding: str  # e.g. "link prfaas->local", "prfaas-compute DeepSeek-V3", "decode Llama-3.1-70B"
    tight: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetRatios:
    shared_vs_separate: float | None
    shared_vs_homogeneous: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetMethodPlan:
    method: str
    best: FleetPoint
    separate: FleetPoint | None  # None: the demand-proportional slices serve no load
    homogeneous: FleetPoint | None  # None: the GPUs as PD instances serve no load
    ratios: FleetRatios
    cost: Priced
    search_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetModelInfo:
    name: str
    model: str
    demand_share: float
    sites: tuple[str, ...]
    mean_uncached_tokens: float
    output_tokens: float
    kv_bytes_per_token: float  # S_kv per token at the mean uncached length (its link weight)
    stack: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetPlanResult:
    scenario: str
    method: str
    methods: dict[str, FleetMethodPlan]
    models: tuple[FleetModelInfo, ...]
    prefill_site: str
    prefill: Pool
    sites: tuple[tuple[str, Pool], ...]
    thresholds: int
    sources: dict[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSystem:
    """A fleet at one configuration, to simulate: each entry (a model at a PD site) with its path
    (``config``: t, N_p, N_d; ``config.n_prfaas`` is its model's instances of the service), the
    pool of each model and the link of each site; Lambda_max of the exact method and what binds."""

    name: str
    entries: tuple[SiteSystem, ...]  # ``site``: the entry's label; ``link``: its site's link
    pools: tuple[tuple[str, int], ...]  # (entry label, its model's instances of the service for it)
    links: tuple[tuple[str, float], ...]  # (link, usable bytes/s)
    capacity_rps: float
    capacity_binding: str


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetRun:
    """One configuration of the fleet simulated at the shared total rate."""

    name: str
    system: FleetSystem
    result: Any  # sim.result.TopologySimResult, one "site" per entry
    load: float  # the rate over this configuration's capacity


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSimulateRun:
    scenario: str
    rate_rps: float
    load: float
    systems: dict[str, FleetRun]
    seed: int
    requests: int | None
    duration_s: float | None
    warmup_fraction: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSizedEntry:
    """One model at one PD site in the cheapest fleet: its threshold, split and service instances."""

    model: str
    site: str
    demand_rps: float
    threshold_tokens: float
    p_offload: float
    n_p: int
    n_d: int
    n_prfaas: int
    egress_bytes_per_s: float  # at the demand


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSizedSite:
    site: str
    hardware: str
    gpus_per_instance: int
    instances: int
    link_tier_bytes_per_s: float | None  # None: no link bought (nothing offloaded)
    link_price_per_hour: float


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetSizingResult:
    """`size` on several models: the cheapest fleet and its cost, against each model sized alone
    (its own service and links) and on homogeneous PD, summed over the models."""

    scenario: str
    demand_rps: float
    headroom: float  # the one sized for: the asked one, or less where a TTFT SLO needed it
    asked_headroom: float  # sizing.headroom
    prefill_hardware: str | None
    prefill_gpus_per_instance: int | None
    n_prfaas: int
    entries: tuple[FleetSizedEntry, ...]
    sites: tuple[FleetSizedSite, ...]
    gpus_per_hour: float
    links_per_hour: float
    egress_per_hour: float
    per_hour: float
    per_million_requests: float
    separate_per_hour: float | None
    homogeneous_per_hour: float | None
    # (model, statistic, its analytic TTFT at the demand, its slo.ttft) per model with a TTFT SLO
    ttft: tuple[tuple[str, str, float | None, float], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetDegradeLevel:
    """One link at one level of its bandwidth: the plan held and the fleet re-planned."""

    level: float  # fraction of the nominal bandwidth; 0: down
    usable_bytes_per_s: float
    static_rps: float
    static_binding: str
    replan: FleetPoint | None  # None: nothing serves any load
    ttft: Any = None  # specs.fleet_latency.FleetTiming of the re-planned fleet at the result's rate; None: none


@dataclass(frozen=True, slots=True, kw_only=True)
class FleetDegradeResult:
    scenario: str
    method: str
    nominal: FleetPoint
    links: tuple[tuple[str, tuple[FleetDegradeLevel, ...]], ...]  # per link, its levels (1.0 first)
    rate_rps: float  # the TTFT's total rate: load x the nominal Lambda_max
    load: float
