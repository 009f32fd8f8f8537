"""Frozen scenario specs: the fleet, the link, the workload, the SLOs and the search."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.model import ModelSpec
from prfaas_plan.specs.system import ControlConfig

if TYPE_CHECKING:
    from prfaas_plan.specs.topology import TopologySpec


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
    """The cross-datacenter link; B_out = bandwidth x usable fraction (multi-connection TCP)."""

    bandwidth_bytes_per_s: float
    usable_fraction: float = 1.0
    rtt_s: float = 0.0

    @property
    def usable_bytes_per_s(self) -> float:
        return self.bandwidth_bytes_per_s * self.usable_fraction


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSpec:
    """Uncached input length distribution (a core.lengths distribution), output length, arrivals."""

    lengths: Any  # core.lengths.LengthDistribution
    output_tokens: float
    input_total_mean: float  # mean input length before prefix-cache hits
    prefix_hit_rate: float | None = None  # token-weighted, for traces; None for parametric
    trace: Any = None  # core.trace.Trace when the workload is a trace
    trace_cached_tokens: Any = None  # per-request cached prefix from the replay
    arrival: str = "poisson"
    arrival_cv: float = 1.0
    rate_rps: float | None = None
    description: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodeSpec:
    """Pinned (the paper's case study: BS_max and T_decode given) or derived from the decode model."""

    bs_max: int | None = None
    t_decode_s: float | None = None
    memory_fraction: float = 0.9

    @property
    def pinned(self) -> bool:
        return self.bs_max is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchSpec:
    threshold_min: float
    threshold_max: float
    threshold_step: float
    method: str = "paper"
    size_prfaas: bool = False
    max_prfaas_instances: int | None = None
    top: int = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioSpec:
    name: str
    source: str
    model: ModelSpec
    prfaas: ClusterSpec
    local: ClusterSpec
    link: LinkSpec
    workload: WorkloadSpec
    decode_tokens_per_s: float
    ttft_slo_s: float | None
    ttft_statistic: str = "p90"
    decode: DecodeSpec
    search: SearchSpec
    homogeneous: ClusterSpec | None
    naive_heterogeneous: bool = True
    layerwise_pipelining: bool = True
    cache_mode: str = "bandwidth-scarce"
    control: ControlConfig | None = None  # None: no control loops
    path: str | None = None
    # the sites and links; prfaas / local / link / workload above are its prefill site, its first
    # PD site, that site's link and the scenario's workload. None: the two clusters above.
    topology: TopologySpec | None = None

    @property
    def multi_site(self) -> bool:
        return self.topology is not None and self.topology.multi_site

    @property
    def tpot_slo_s(self) -> float:
        return 1.0 / self.decode_tokens_per_s
