"""Typed results of `degrade`: each link of a topology at fractions of its nominal bandwidth.

Per level of a link: the nominal plan's configuration held (``static``) and the plan made anew
(``replanned``), TTFT of the re-planned configuration at one total rate per site, and with a TTFT
SLO the fraction of each site's requests meeting it. Per link: what its failure costs
(``Failure``). Built by ``api.degrade``, written out by ``report.views_degrade``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["Capacity", "DegradeResult", "Failure", "LevelResult", "LinkDegrade", "Replanned", "SiteConfig",
           "SiteTtft"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Capacity:
    """Lambda_max (req/s, total over the sites) and the stage binding it."""

    lambda_max_rps: float
    binding: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteConfig:
    """A PD site's routing and split: requests longer than ``threshold_tokens`` are offloaded
    (None: none are, the site prefills everything locally)."""

    threshold_tokens: float | None
    n_p: int
    n_d: int
    p_offload: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Replanned:
    """The plan at one level: its capacity, each site's configuration, the shared N_prfaas."""

    lambda_max_rps: float
    binding: str
    sites: Mapping[str, SiteConfig]
    n_prfaas: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteTtft:
    """Analytic TTFT of one site at the rate (seconds); above capacity the numbers are None and
    ``unstable`` names the stages that diverge."""

    ttft_mean_s: float | None
    ttft_p50_s: float | None
    ttft_p90_s: float | None
    ttft_p99_s: float | None
    unstable: str | None
    utilization: float  # the site's busiest stage


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelResult:
    """One link at ``level`` x its nominal bandwidth (0: down)."""

    level: float
    bandwidth_bytes_per_s: float
    static: Capacity
    replanned: Replanned
    ttft: Mapping[str, SiteTtft]
    slo_attainment: Mapping[str, float] | None  # P(TTFT <= bound) per site, with slo.ttft


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure:
    """The link down: its site prefills locally. ``capacity_down_rps``: the site's best local-only
    split (req/s of its own traffic); ``survivable_load``: the fleet's capacity then, as a fraction
    of the nominal Lambda_max; ``extra_instances``: what the site must add so that its best
    local-only split serves its share of the rate (None: more than the search's bound)."""

    site: str
    instances: int
    capacity_down_rps: float
    binding_down: str
    n_p_down: int  # the best local-only split
    n_d_down: int
    lambda_down_rps: float  # the fleet's total at the failure (the other sites re-planned)
    survivable_load: float
    rate_rps: float  # the site's share of the rate
    extra_instances: int | None
    instances_needed: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkDegrade:
    link: str
    site: str
    nominal_bandwidth_bytes_per_s: float
    levels: tuple[LevelResult, ...]
    failure: Failure


@dataclass(frozen=True, slots=True, kw_only=True)
class DegradeResult:
    scenario: str
    model: str
    method: str
    rate_rps: float
    load: float  # rate / nominal Lambda_max
    nominal_lambda_max_rps: float
    slo_bound_s: float | None
    slo_statistic: str | None
    sites: tuple[str, ...]
    links: Mapping[str, LinkDegrade]
