"""The router's threshold table (`prfaas-plan thresholds`, built by ``api.thresholds``).

For a fixed fleet, on a grid of link bandwidth x load, per PD site: the routing threshold t the
short-term loop should use and whether to offload at all. SI units inside (bytes/s, seconds,
req/s); ``report.views_thresholds`` writes the JSON, CSV and tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["LinkGrid", "ThresholdEntry", "ThresholdTable"]

ABSOLUTE, RELATIVE = "absolute", "relative"  # the bandwidth grid: link bandwidths, or multiples of each link's


@dataclass(frozen=True, slots=True, kw_only=True)
class ThresholdEntry:
    """One PD site at one (bandwidth, load) of the grid.

    ``threshold_tokens`` None: offload nothing. ``ttft_s`` is the site's TTFT statistic at the
    chosen thresholds, ``ttft_star_s`` with every site at the throughput optimum t*; both None
    at load >= 1, where the entry is t* itself."""

    site: str
    bandwidth_bytes_per_s: float  # the site's link at this grid point (before its usable fraction)
    scale: float  # that bandwidth over the link's nominal one (the scenario's, after --set)
    load: float
    rate_rps: float  # total arrival rate: load x lambda_max_rps
    site_rate_rps: float  # the site's demand share of it
    threshold_tokens: float | None
    offload: bool
    p_offload: float
    ttft_s: float | None
    ttft_weighted_s: float | None  # the demand-weighted mean of every site's statistic (the objective)
    threshold_star_tokens: float
    ttft_star_s: float | None
    ttft_weighted_star_s: float | None  # the objective with every site at t*
    lambda_max_rps: float  # exact-method capacity of optimize's configuration at this bandwidth
    lambda_max_plan_rps: float  # optimize's own Lambda_max, under the scenario's method
    n_p: int
    n_d: int
    n_prfaas: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkGrid:
    """A PD site's link over the bandwidth grid."""

    site: str
    link: str
    nominal_bytes_per_s: float
    bandwidths_bytes_per_s: tuple[float, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class ThresholdTable:
    """The table: per PD site, one entry per (bandwidth, load), bandwidth-major."""

    scenario: str
    model: str
    statistic: str  # mean, p50, p90 or p99 (the scenario's slo.ttft_statistic)
    method: str  # optimize's method (paper or exact)
    grid: str  # ABSOLUTE or RELATIVE
    bandwidth_texts: tuple[str, ...]  # the grid as written: "1.931Gbps", "50%"
    scales: tuple[float, ...]
    loads: tuple[float, ...]
    links: tuple[LinkGrid, ...]
    sites: Mapping[str, tuple[ThresholdEntry, ...]]
    candidates: int  # thresholds on the log grid per site (plus none, offload all, t*)
    passes: int  # coordinate-descent passes over the sites (1: one site, brute force)
    nodes: int  # quantile nodes per path of the analytic TTFT model
