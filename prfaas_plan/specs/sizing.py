"""Frozen specs and results of `size`: what may be bought, and the cheapest fleet that serves a demand.

``SizingSpec`` is the scenario's ``sizing:`` section in SI units: the demand D (req/s, total over
the PD sites), the headroom h (every stage planned at utilisation <= h, i.e. sized for D / h),
the instance kinds each role may buy with their prices, the link tiers and the egress price.
"""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.hardware import InstanceSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class Option:
    """One instance kind a role may buy, and its price per GPU-hour (catalog or scenario)."""

    instance: InstanceSpec
    price_per_gpu_hour: float

    @property
    def price_per_instance_hour(self) -> float:
        return self.price_per_gpu_hour * self.instance.gpus

    @property
    def name(self) -> str:
        return self.instance.name


@dataclass(frozen=True, slots=True, kw_only=True)
class RoleOptions:
    options: tuple[Option, ...]
    max_instances: int  # per site of the role


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkTier:
    bandwidth_bytes_per_s: float
    price_per_hour: float
    usable_fraction: float | None = None  # None: the scenario link's own


@dataclass(frozen=True, slots=True, kw_only=True)
class SizingSpec:
    demand_rps: float
    headroom: float
    prfaas: RoleOptions
    local: RoleOptions
    tiers: tuple[LinkTier, ...]
    egress_price_per_byte: float = 0.0
    demand_factors: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 4.0)
    ttft_bounds: tuple[float, ...] | None = None  # the cost-versus-TTFT frontier's; None: around the SLO
    # where demand_rps came from, when not sizing.demand or --demand (a trace given by --trace: its rate)
    demand_source: str | None = None

    @property
    def target_rps(self) -> float:
        """Lambda = D / h: the rate every stage is sized for."""
        return self.demand_rps / self.headroom


@dataclass(frozen=True, slots=True, kw_only=True)
class Cost:
    """Dollars per hour of a plan and what its demand costs per million requests and output tokens."""

    gpus_per_hour: float
    links_per_hour: float
    egress_per_hour: float
    per_hour: float
    per_million_requests: float
    per_million_output_tokens: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SizedSite:
    """A PD site of the plan: its instances, routing, link tier and each stage's utilisation at D."""

    site: str
    link: str
    demand_share: float
    demand_rps: float
    hardware: str
    gpus_per_instance: int
    price_per_gpu_hour: float
    threshold_tokens: float
    p_offload: float
    n_p: int
    n_d: int
    decode_source: str  # pinned (the scenario's) or derived
    link_tier: int | None  # index into the tiers; None: nothing offloaded, no link bought
    link_bandwidth_bytes_per_s: float | None
    link_usable_bytes_per_s: float | None
    link_price_per_hour: float
    egress_bytes_per_s: float
    egress_price_per_hour: float
    gpu_price_per_hour: float
    utilization: dict[str, float]  # pd-prefill, decode, link: load at D over capacity

    @property
    def gpus(self) -> int:
        return (self.n_p + self.n_d) * self.gpus_per_instance


@dataclass(frozen=True, slots=True, kw_only=True)
class SizedPlan:
    """The cheapest fleet of one kind of plan (PrfaaS-PD, homogeneous PD on one GPU, naive)."""

    kind: str  # prfaas | homogeneous | naive
    demand_rps: float
    headroom: float
    prefill_hardware: str | None  # None: no prefill service bought
    prefill_gpus_per_instance: int | None
    prefill_price_per_gpu_hour: float | None
    n_prfaas: int
    prfaas_utilization: float
    sites: tuple[SizedSite, ...]
    cost: Cost
    tightest: str  # the stage at the highest utilisation (what the headroom binds first)

    @property
    def gpus(self) -> int:
        return self.n_prfaas * (self.prefill_gpus_per_instance or 0) + sum(s.gpus for s in self.sites)

    @property
    def offloads(self) -> bool:
        return self.n_prfaas > 0


@dataclass(frozen=True, slots=True, kw_only=True)
class TierPlan:
    """The cheapest plan when every link is bought at one tier (or not at all)."""

    tier: int
    bandwidth_bytes_per_s: float
    price_per_hour: float
    plan: SizedPlan | None  # None: no plan at this tier
    why: str | None  # why none


@dataclass(frozen=True, slots=True, kw_only=True)
class DemandPoint:
    factor: float
    demand_rps: float
    prfaas: SizedPlan | None
    homogeneous: SizedPlan | None  # the cheapest over the candidate GPUs
    why: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class TtftPoint:
    bound_s: float
    plan: SizedPlan | None
    ttft_s: float | None
    why: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SizeInterval:
    """The cheapest fleet's $/h (and $ per 1M requests) for the demand when every modelled time is at
    the serving stack's P10 or P90 factor (``api.interval``); None where no fleet serves it there."""

    per_hour_p10: float | None
    per_hour_p90: float | None
    per_million_p10: float | None
    per_million_p90: float | None
    prefill_band: tuple[float, float] | None
    decode_band: tuple[float, float] | None
    stack: str = ""  # the serving-stack profile(s) of the candidates' modelled times


@dataclass(frozen=True, slots=True, kw_only=True)
class SizingResult:
    scenario: str
    model: str
    method: str
    demand_rps: float
    headroom: float
    best: SizedPlan
    ttft_statistic: str | None
    ttft_bound_s: float | None
    ttft_s: float | None  # the plan's TTFT statistic at D (with a TTFT SLO)
    homogeneous: tuple[tuple[str, SizedPlan | None, str | None], ...]  # per candidate GPU: plan or why not
    naive: SizedPlan | None
    tiers: tuple[TierPlan, ...]
    demand_curve: tuple[DemandPoint, ...]
    ttft_frontier: tuple[TtftPoint, ...]
    candidates: int  # (kind, t) candidates weighed, over every prefill kind and site
    search_s: float
    interval: SizeInterval | None = None  # the cheapest fleet's cost at the stack's P10-P90 times
    demand_source: str | None = None  # SizingSpec.demand_source

    @property
    def best_homogeneous(self) -> SizedPlan | None:
        plans = [p for _, p, _ in self.homogeneous if p is not None]
        return min(plans, key=lambda p: p.cost.per_hour) if plans else None
