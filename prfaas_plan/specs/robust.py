"""What `optimize` reports when a link's bandwidth varies (``api.robust``): each plan's
configuration held and re-evaluated across the bandwidth's law."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["AtBandwidth", "LinkBandwidth", "RateLevel", "RobustPlan", "Robustness", "SiteConfig"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LinkBandwidth:
    """One link's bandwidth at each percentile weighed (bytes/s); ``kind`` None: a fixed bandwidth,
    held at every percentile."""

    link: str
    kind: str | None
    source: str
    samples: int
    percentiles_bytes_per_s: Mapping[str, float]  # "p50", "p10", "p1" (and a --plan-at level)
    usable_bytes_per_s: Mapping[str, float]  # B_out at each (fraction, share cap, streams)
    mean_bytes_per_s: float
    down_fraction: float  # of the time (or samples) at 0


@dataclass(frozen=True, slots=True, kw_only=True)
class SiteConfig:
    site: str
    threshold_tokens: float
    n_p: int
    n_d: int
    p_offload: float


@dataclass(frozen=True, slots=True, kw_only=True)
class AtBandwidth:
    """A held configuration at every link's bandwidth at one percentile."""

    percentile: str
    lambda_max_rps: float
    binding: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RobustPlan:
    """A plan (optimised at ``planned_at``) held fixed while the bandwidth varies."""

    name: str  # "nominal", "safe" or "plan-at"
    planned_at: str  # the percentile it was optimised at: "p50", "p10", ...
    headline: bool  # the plan `optimize` shows above
    n_prfaas: int
    sites: tuple[SiteConfig, ...]
    at: tuple[AtBandwidth, ...]  # highest percentile first
    expected_served_rps: float  # E_B[min(rate, Lambda(B))]
    fits_fraction: float  # P_B(Lambda(B) >= rate)
    rate_rps: float

    @property
    def served_fraction(self) -> float:
        return self.expected_served_rps / self.rate_rps

    def lambda_at(self, percentile: str) -> float:
        return next(a.lambda_max_rps for a in self.at if a.percentile == percentile)


@dataclass(frozen=True, slots=True, kw_only=True)
class Robustness:
    rate_rps: float
    rate_source: str  # "workload.rate_rps" or "0.8 x the nominal plan's Lambda_max"
    percentiles: tuple[str, ...]  # highest first
    links: tuple[LinkBandwidth, ...]
    comonotone: bool  # several links: all at the same percentile of their own laws
    plans: tuple[RobustPlan, ...]
    plan_at: str | None  # --plan-at, None: the headline is the nominal plan
    states: int  # distinct bandwidth states the expectations weigh
    notes: tuple[str, ...] = ()  # e.g. no safe plan: a link is down at P10


@dataclass(frozen=True, slots=True, kw_only=True)
class RateLevel:
    """A trace's windowed rate at a percentile over time (`--plan-at rate=pNN`, ``api.plan_at``):
    ``factor`` x the trace's mean rate ``mean_rps``, its windows ``bin_s`` wide."""

    label: str  # "p90"
    q: float
    factor: float
    mean_rps: float
    windows: int
    bin_s: float

    @property
    def rate_rps(self) -> float:
        return self.factor * self.mean_rps

    def describe(self) -> str:
        """One line: the rate planned for and where it comes from."""
        width = f"{self.bin_s / 60:g}-min" if self.bin_s >= 60 else f"{self.bin_s:g}-s"
        return (f"planned at the trace's {self.label.upper()} windowed rate, {self.rate_rps:.3f} req/s "
                f"({self.factor:.3g}x its mean {self.mean_rps:.3f} req/s over {self.windows} {width} windows; "
                f"--plan-at rate={self.label})")
