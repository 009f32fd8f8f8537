"""Frozen scenario specs: the fleet, the link, the workload, the SLOs and the search."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.hardware import GpuSpec
from prfaas_plan.specs.model import ModelSpec
from prfaas_plan.specs.sizing import SizingSpec
from prfaas_plan.specs.system import ControlConfig
from prfaas_plan.specs.topology import ClusterSpec, LinkSpec, TopologySpec, WorkloadSpec

__all__ = ["ClusterSpec", "DecodeSpec", "LinkSpec", "ScenarioSpec", "SearchSpec", "WorkloadSpec"]


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
    # the sites and links (the two-cluster form: one PD site, named prfaas and local); ``workload``
    # above is the scenario's, which a PD site takes unless it gives its own
    topology: TopologySpec
    sizing: SizingSpec | None = None  # the `sizing:` section (`size`)
    # modelled prefill times and decode steps times these factors (the P10-P90 ends of
    # ``api.interval``); measured profiles and a pinned decode are never scaled
    time_scale: tuple[float, float] = (1.0, 1.0)
    # the GPUs the model's measured profiles were taken on, read from the scenario's own catalog:
    # transferring a profile to another instance never reads a different catalog (core.timers)
    profile_gpus: tuple[GpuSpec, ...] = ()

    @property
    def multi_site(self) -> bool:
        return self.topology.multi_site

    @property
    def prfaas(self) -> ClusterSpec:
        """The prefill service's cluster (the two-cluster form's ``clusters.prfaas``)."""
        return self.topology.prefill.cluster

    @property
    def local(self) -> ClusterSpec:
        """The first PD site's cluster: a site's own in the scenario of one site
        (``api.topology.site_scenario``), the two-cluster form's ``clusters.local``."""
        return self.topology.sites[0].cluster

    @property
    def link(self) -> LinkSpec:
        """The first PD site's link (a site's own in the scenario of one site)."""
        return self.topology.links[0].link

    @property
    def tpot_slo_s(self) -> float:
        return 1.0 / self.decode_tokens_per_s
