"""The typed result of `sweep`: the plan at each value of one ranged setting."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.results import TopologyPoint


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepPoint:
    """One value of the swept setting and the plan there, a topology's point whatever the form
    (one PD site: ``specs.results.site_point``); ``point`` None: infeasible, ``reason`` says why."""

    value: float
    value_text: str  # as given, with its unit
    point: TopologyPoint | None = None
    reason: str | None = None
    usable_bytes_per_s: tuple[float, ...] = ()  # each PD site's link, in the point's sites' order
    homogeneous_lambda_max_rps: float | None = None
    prfaas_vs_homogeneous: float | None = None
    independent_lambda_max_rps: float | None = None  # several PD sites: the prefill service split by share
    prfaas_vs_independent: float | None = None

    @property
    def feasible(self) -> bool:
        return self.point is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepResult:
    key: str  # the --set key swept, e.g. link.bandwidth
    scale: str  # linear or log
    method: str | None  # as asked (None: each point's scenario's)
    prefill_site: str
    sites: tuple[str, ...]  # the PD sites' names
    points: tuple[SweepPoint, ...]

    @property
    def feasible(self) -> tuple[SweepPoint, ...]:
        return tuple(p for p in self.points if p.point is not None)
