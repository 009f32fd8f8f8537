"""The plan of either form as one typed summary (``PlanSummary``: what `sweep` and a study's row
read), and the typed result of `sweep`: that summary at each value of one ranged setting."""

from __future__ import annotations

from dataclasses import dataclass

from prfaas_plan.specs.results import Priced, Ratios, TopologyPoint


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanSummary:
    """A plan under the scenario's own method as a topology's point, whatever the form (one PD
    site: ``specs.results.site_point``), with its cost and its baselines' Lambda_max."""

    point: TopologyPoint
    usable_bytes_per_s: tuple[float, ...]  # each PD site's link, in the point's sites' order
    cost: Priced
    ratios: Ratios  # prfaas_vs_independent: several PD sites only
    homogeneous_lambda_max_rps: float | None
    naive_lambda_max_rps: float | None
    independent_lambda_max_rps: float | None  # several PD sites: the prefill service split by share


@dataclass(frozen=True, slots=True, kw_only=True)
class SweepPoint:
    """One value of the swept setting and the plan there; ``plan`` None: infeasible, ``reason`` says why."""

    value: float
    value_text: str  # as given, with its unit
    plan: PlanSummary | None = None
    reason: str | None = None

    @property
    def feasible(self) -> bool:
        return self.plan is not None


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
        return tuple(p for p in self.points if p.plan is not None)
