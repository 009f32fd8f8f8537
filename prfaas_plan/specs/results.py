"""Typed results between the layers: what the planner found, before anything is rendered.

``OperatingPoint``: one configuration evaluated with Eqs. 3-6 (``core.throughput``). ``PlanResult``:
`optimize` on one PD site, per method the best point, the runners-up and the baselines with
their ratios. ``TopologyPoint`` / ``TopologyPlanResult``: the same for a topology of several PD
sites (``core.joint``, ``api.topology``). The JSON of `optimize` is written from these at the
edge (``report.plan_json``, ``report.topology_json``); views read the fields, never JSON keys.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from prfaas_plan.specs.decode import DecodeDetail
from prfaas_plan.specs.robust import RateLevel, Robustness
from prfaas_plan.specs.slo import SloPlan


class Binding(StrEnum):
    PRFAAS_COMPUTE = "prfaas-compute"
    LINK = "link"
    PD_PREFILL = "pd-prefill"
    DECODE = "decode"


@dataclass(frozen=True, slots=True, kw_only=True)
class OperatingPoint:
    """One configuration evaluated with Eqs. 3-6, all in SI (tokens, req/s, bytes/s)."""

    threshold_tokens: float | None
    n_prfaas: int
    n_p: int
    n_d: int
    p_offload: float
    l_long_tokens: float | None
    l_short_tokens: float | None
    theta_prfaas_rps: float | None
    theta_prfaas_compute_rps: float | None
    theta_prfaas_link_rps: float | None
    theta_pd_p_rps: float | None
    theta_pd_d_rps: float
    lambda_max_rps: float
    binding: Binding
    tight: tuple[Binding, ...]  # every constraint within TIGHT of Lambda_max (the optimum balances them)
    egress_bytes_per_s: float
    link_utilization: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Priced:
    """A configuration's price and what a million requests cost at its Lambda_max (None: no price)."""

    price_per_hour: float | None
    cost_per_million_requests: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class HomogeneousBaseline:
    """Homogeneous PD at its best split: every request prefilled locally at its full length."""

    hardware: str
    gpus: int
    instances: int
    point: OperatingPoint
    cost: Priced


@dataclass(frozen=True, slots=True, kw_only=True)
class NaiveBaseline:
    """Naive heterogeneous PD: every request prefilled on the PrfaaS cluster, N_p = 0."""

    point: OperatingPoint
    cost: Priced


@dataclass(frozen=True, slots=True, kw_only=True)
class Pool:
    hardware: str
    gpus_per_instance: int
    instances: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LambdaInterval:
    """Lambda_max (and the fleet's $ per 1M requests, whose P90 is at Lambda's P10) at the serving
    stack's P10-P90 ends: every modelled time at its profile's band (measured profiles and a
    pinned decode are not), the plan searched again at each end. ``dominant`` names the input whose band the binding
    stages at the ends rest on (``prefill time``, ``decode step``, or ``none``: nothing modelled)."""

    lambda_p10_rps: float
    lambda_p90_rps: float
    cost_per_million_p10: float | None
    cost_per_million_p90: float | None
    prefill_band: tuple[float, float] | None  # None: every prefill time is measured
    decode_band: tuple[float, float] | None  # None: decode pinned
    dominant: str
    binding_p10: str
    binding_p90: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SitePoint:
    """One site at the chosen configuration; rates in req/s of the site's own traffic."""

    site: str
    link: str
    demand_share: float
    threshold_tokens: float
    n_p: int
    n_d: int
    p_offload: float
    lambda_rps: float  # s_i x Lambda
    theta_pd_p_rps: float | None  # N_p / T_local(short) / (1 - p), None when nothing is local
    theta_link_rps: float | None  # B_out / S_kv(long) / p, None when nothing is offloaded
    theta_pd_d_rps: float
    egress_bytes_per_s: float
    link_utilization: float | None  # None: a link with no usable bandwidth given
    prfaas_seconds_per_s: float  # the shared pool's instance-seconds this site's offload takes per second


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologyPoint:
    """A topology's configuration: Lambda_max, per site and the shared pool, what binds."""

    n_prfaas: float  # instances (an int) in a plan; independent planning's share s_i x N_prfaas of the pool
    lambda_max_rps: float
    sites: tuple[SitePoint, ...]
    prfaas_utilization: float
    binding: str  # e.g. "link prefill-east->region-b", "prfaas-compute", "decode region-a"
    tight: tuple[str, ...]

    @property
    def stage(self) -> str:
        """The binding as the outputs name it (``stage_name``)."""
        return stage_name(self.binding, len(self.sites))


def stage_name(binding: str, sites: int) -> str:
    """A binding stage as the outputs name it: with several PD sites with its site or link
    ("link prefill-east->region-b"), with one as Eq. 6 does, without ("link")."""
    return binding if sites > 1 else binding.split(" ")[0]


def site_point(op: OperatingPoint, site: str, link: str) -> TopologyPoint:
    """A one-PD-site configuration (Eqs. 3-6) as a topology's point, its site and link by name, so
    that whatever reads a plan reads one site's as several sites'. The pool's utilization is
    Lambda p / Theta_prfaas-compute (Eq. 3's compute half)."""
    busy = op.lambda_max_rps * op.p_offload / op.theta_prfaas_compute_rps if op.theta_prfaas_compute_rps else 0.0
    lk = op.theta_prfaas_link_rps
    assert op.threshold_tokens is not None
    sp = SitePoint(site=site, link=link, demand_share=1.0, threshold_tokens=op.threshold_tokens, n_p=op.n_p,
                   n_d=op.n_d, p_offload=op.p_offload, lambda_rps=op.lambda_max_rps, theta_pd_p_rps=op.theta_pd_p_rps,
                   theta_link_rps=None if lk is None or not op.p_offload else lk / op.p_offload,
                   theta_pd_d_rps=op.theta_pd_d_rps, egress_bytes_per_s=op.egress_bytes_per_s,
                   link_utilization=op.link_utilization, prfaas_seconds_per_s=busy * op.n_prfaas)
    return TopologyPoint(n_prfaas=op.n_prfaas, lambda_max_rps=op.lambda_max_rps, sites=(sp,), prfaas_utilization=busy,
                         binding=str(op.binding), tight=tuple(str(b) for b in op.tight))


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteHomogeneous:
    site: str
    demand_share: float
    baseline: HomogeneousBaseline


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologyHomogeneous:
    """Each PD site alone as homogeneous PD; the total is min_i Lambda_i / s_i."""

    lambda_max_rps: float
    sites: tuple[SiteHomogeneous, ...]
    cost: Priced


@dataclass(frozen=True, slots=True, kw_only=True)
class Independent:
    """Independent planning: site i alone with s_i x N_prfaas of the prefill service."""

    lambda_max_rps: float
    cost: Priced
    n_prfaas_per_site: Mapping[str, float]
    alone: tuple[TopologyPoint, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Ratios:
    """PrfaaS-PD's Lambda_max over each baseline's (None: the baseline or a price is missing;
    independent planning: several PD sites only)."""

    prfaas_vs_homogeneous: float | None = None
    prfaas_vs_independent: float | None = None
    naive_vs_homogeneous: float | None = None
    prfaas_vs_homogeneous_equal_cost: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GridPlan:
    """One PD site's exhaustive search in Eqs. 3-6 terms (``core.optimize``): its best point with
    every bound (Theta_prfaas's two halves, l_long, l_short), the runners-up and the baselines'
    points; a topology of several sites is searched jointly (``core.joint``) and has none."""

    best: OperatingPoint
    top: tuple[OperatingPoint, ...]
    homogeneous: HomogeneousBaseline | None
    naive: NaiveBaseline | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MethodPlan:
    """The plan under one method (paper or exact): the best configuration, its price and the
    baselines (None: the scenario has no such baseline); ``decode``: each site's decode rate and
    staging at the plan (``api.staging.detail``)."""

    method: str
    best: TopologyPoint
    cost: Priced
    homogeneous: TopologyHomogeneous | None
    independent: Independent | None  # several PD sites only
    naive: TopologyPoint | None
    naive_cost: Priced | None
    ratios: Ratios
    refined_threshold: bool
    evaluations: int
    search_s: float
    decode: Mapping[str, DecodeDetail] = field(default_factory=dict)
    grid: GridPlan | None = None  # one PD site


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteInfo:
    """A PD site as planned: its pool, demand, workload summary, decode shape and link."""

    name: str
    pool: Pool
    demand_share: float
    mean_input_tokens: float
    mean_uncached_tokens: float
    output_tokens: float
    distribution: Mapping[str, Any]
    prefix_hit_rate: float | None = None
    hit_rate_source: str | None = None  # a trace's: measured, assumed or unknown (specs.topology.WorkloadSpec)
    requests: int | None = None  # a trace's
    decode: DecodeDetail
    link: str
    link_bandwidth_bytes_per_s: float
    link_usable_fraction: float
    link_usable_bytes_per_s: float
    link_rtt_s: float


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanResult:
    """`optimize` on any topology (the two-cluster form: one PD site named local behind a prefill
    service named prfaas): the headline method first in ``methods``. ``grid``: the one-site
    search's size (thresholds x splits x PrfaaS sizes), None for a joint search."""

    scenario: str
    model: str
    method: str
    methods: Mapping[str, MethodPlan]
    prefill_site: str
    prefill: Pool
    sites: tuple[SiteInfo, ...]
    sources: Mapping[str, str]
    thresholds: int
    n_prfaas_options: int
    max_prfaas_instances: int
    splits: int | None = None
    evaluations: int | None = None
    ttft_slo: SloPlan | None = field(default=None)
    robustness: Robustness | None = None  # a link's bandwidth as a law (api.robust)
    interval: LambdaInterval | None = None  # Lambda_max at the stack's P10-P90 (api.interval)
    planned_rate: RateLevel | None = None  # --plan-at rate=pNN: the trace's window planned for

    @property
    def head(self) -> MethodPlan:
        return self.methods[self.method]

    @property
    def site(self) -> SiteInfo:
        """The first PD site (the two-cluster form's local)."""
        return self.sites[0]
