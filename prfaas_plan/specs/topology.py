"""The topology: sites (pools of instances with a role) and the links between them (docs/model.md#several-pd-sites).

One prefill service (a ``prfaas`` site) serves the long requests of one or more PD sites, each
over its own link. Lambda is the total arrival rate; PD site i receives demand_share_i x Lambda,
routes requests with uncached length > t_i over its link and prefills the rest on N_p,i of its
instances. The paper's two-cluster scenario is the topology with one PD site (``local``) and one
link (``prfaas->local``).

The fleet's building blocks (``ClusterSpec``: a pool of instances; ``LinkSpec``; ``WorkloadSpec``)
live here too; ``specs.scenario`` builds on them.

``TopologySystem`` is one topology at a configuration (per site t_i, N_p,i, N_d,i; the shared
N_prfaas) with its service laws: what latency analysis and simulation of several sites run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from prfaas_plan.specs.bandwidth import BandwidthLaw
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.system import SystemConfig

__all__ = [
    "PD",
    "PRFAAS",
    "ClusterSpec",
    "LinkSpec",
    "SiteSpec",
    "SiteSystem",
    "TopologyLink",
    "TopologySpec",
    "TopologySystem",
    "WorkloadSpec",
    "homogeneous_cluster",
]

PRFAAS, PD = "prfaas", "pd"


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterSpec:
    instance: InstanceSpec
    instances: int
    price_per_gpu_hour: float | None = None

    @property
    def gpus(self) -> int:
        return self.instances * self.instance.gpus

    @property
    def price_per_hour(self) -> float | None:
        return self.price_for(self.instances)

    def price_for(self, instances: int) -> float | None:
        """Dollars per hour of ``instances`` instances of this cluster's kind."""
        p = self.price_per_gpu_hour if self.price_per_gpu_hour is not None else self.instance.gpu.price_per_hour
        return None if p is None else p * instances * self.instance.gpus


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkSpec:
    """A cross-datacenter link. B_out, the KV goodput (``usable_bytes_per_s``), is the line's
    bandwidth x usable fraction x share cap (the most of a shared line KV may use), and at most
    ``connections`` TCP streams x one stream's goodput where one is limited (``stream_bytes_per_s``:
    a per-stream cap, or window / RTT). ``handoff_s``: a fixed cost per transfer (decode-side
    handover), paid after the bytes land, not on the line. The defaults are a plain pipe."""

    bandwidth_bytes_per_s: float
    usable_fraction: float = 1.0
    rtt_s: float = 0.0
    handoff_s: float = 0.0
    connections: int | None = None  # None: 1 where a stream is limited, else not limited
    max_window_bytes: float | None = None
    stream_bytes_per_s_cap: float | None = None
    share_cap: float = 1.0
    bandwidth_law: BandwidthLaw | None = None  # the bandwidth over time; bandwidth_bytes_per_s is its median

    @property
    def stream_bytes_per_s(self) -> float | None:
        """One stream's goodput limit: its cap, else window / RTT; None: not limited."""
        if self.stream_bytes_per_s_cap is not None:
            return self.stream_bytes_per_s_cap
        if self.max_window_bytes is not None and self.rtt_s > 0:
            return self.max_window_bytes / self.rtt_s
        return None

    @property
    def line_bytes_per_s(self) -> float:
        return self.bandwidth_bytes_per_s * self.usable_fraction * self.share_cap

    @property
    def usable_bytes_per_s(self) -> float:
        stream = self.stream_bytes_per_s
        if stream is None:
            return self.line_bytes_per_s
        return min(self.line_bytes_per_s, (self.connections or 1) * stream)

    @property
    def limited_by(self) -> str:
        """What sets B_out: the line (bandwidth x fraction x cap) or the streams."""
        return "streams" if self.usable_bytes_per_s < self.line_bytes_per_s else "line"


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSpec:
    """Uncached input length distribution (a core.lengths distribution), output length, arrivals."""

    lengths: Any  # core.lengths.LengthDistribution
    output_tokens: float
    input_total_mean: float  # mean input length before prefix-cache hits
    prefix_hit_rate: float | None = None  # token-weighted, for traces; None for parametric or unknown
    # where prefix_hit_rate comes from: "measured" (a cache replay of the trace's hashes), "assumed"
    # (workload.input.assumed_hit_rate on a trace without hashes), "unknown" (no hashes, none
    # assumed: the raw input lengths); None for a parametric workload
    hit_rate_source: str | None = None
    trace: Any = None  # core.trace.Trace when the workload is a trace
    trace_cached_tokens: Any = None  # per-request cached prefix from the replay (or the assumed hit rate)
    # a trace's arrival rate over time (core.arrivals.RateProfile): the analytic TTFT is piecewise-stationary
    rate_profile: Any = None
    arrival: str = "poisson"
    arrival_cv: float = 1.0
    rate_rps: float | None = None
    description: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteSpec:
    """A pool of instances with a role; a PD site also has its demand share and workload."""

    name: str
    role: str  # PRFAAS or PD
    cluster: ClusterSpec
    demand_share: float = 1.0  # of the total arrival rate (PD sites; they sum to 1)
    workload: WorkloadSpec | None = None  # PD sites: the scenario's unless the site overrides it


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologyLink:
    """A link from a prefill site to a PD site; it carries only that site's KV."""

    source: str
    target: str
    link: LinkSpec
    key: str = "link"  # where the scenario gives it: "link" (two clusters) or "links[i]" (sites and links)

    @property
    def name(self) -> str:
        return f"{self.source}->{self.target}"

    def setting(self, field: str = "bandwidth") -> str:
        """The ``--set`` key of one of its fields, as the scenario's form spells it: ``link.bandwidth``
        or ``links[i].bandwidth`` (one PD site under ``sites:`` has ``links[0]``, not ``link``)."""
        return f"{self.key}.{field}"


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySpec:
    """One prefill service, its PD sites and one link to each (``links[i]`` serves ``sites[i]``)."""

    prefill: SiteSpec
    sites: tuple[SiteSpec, ...]
    links: tuple[TopologyLink, ...]

    def __post_init__(self) -> None:
        assert len(self.sites) == len(self.links) and all(
            lk.target == s.name and lk.source == self.prefill.name for s, lk in zip(self.sites, self.links,
                                                                                    strict=True))

    @property
    def shares(self) -> tuple[float, ...]:
        return tuple(s.demand_share for s in self.sites)

    @property
    def multi_site(self) -> bool:
        return len(self.sites) > 1

    def site(self, i: int) -> TopologySpec:
        """PD site i alone with the prefill service and its link, as that site sees the topology."""
        return TopologySpec(prefill=self.prefill, sites=(self.sites[i],), links=(self.links[i],))


def homogeneous_cluster(site: SiteSpec, topology: TopologySpec) -> ClusterSpec:
    """Homogeneous PD for a PD site: its own instances plus its demand share of the prefill
    service's GPUs in instances of its own kind (rounded to the nearest instance), the paper's
    equal-GPU-count baseline (96 H20 = 64 + 32)."""
    c = site.cluster
    extra = round(site.demand_share * topology.prefill.cluster.gpus / c.instance.gpus)
    return ClusterSpec(instance=c.instance, instances=c.instances + extra, price_per_gpu_hour=c.price_per_gpu_hour)


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteSystem:
    """One PD site of a configured topology: its share, its path (``config``: t_i, N_p,i, N_d,i,
    its link and decode shape; ``config.n_prfaas`` is the shared pool) and its workload."""

    site: str
    link: str
    demand_share: float
    config: SystemConfig
    workload: WorkloadSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class TopologySystem:
    """A topology at one configuration: the shared prefill pool of ``n_prfaas`` instances (FIFO,
    fed by every site's offloaded requests) and each site's pools and link; Lambda_max of the
    exact method and what binds it."""

    name: str
    n_prfaas: int
    sites: tuple[SiteSystem, ...]
    capacity_rps: float
    capacity_binding: str
