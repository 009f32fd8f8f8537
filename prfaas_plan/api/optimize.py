"""Library API of `optimize`: the plan of a scenario under both methods (``api.plan``, through
``api.headline.planned``), and with ``slo.ttft`` the plan under that bound (``api.slo``); the
planner does not call back here."""

from __future__ import annotations

from dataclasses import replace

from prfaas_plan.api import plan_at as plan_at_
from prfaas_plan.api import robust, slo
from prfaas_plan.api.headline import BOTH, planned
from prfaas_plan.api.interval import lambda_interval
from prfaas_plan.api.plan import Plan
from prfaas_plan.specs.scenario import ScenarioSpec


def optimize(sc: ScenarioSpec, *, ttft_slo: bool = True, plan_at: str | None = None) -> Plan:
    """The best plan and its baselines under each method; ``payload`` is the JSON of `optimize`.
    With a link's bandwidth given as a law, its robustness (``api.robust``); ``plan_at`` (pNN,
    bandwidth=pNN, rate=pNN; ``api.plan_at``) plans at that percentile of every link's law instead
    of at the median, and of a trace's windowed rate instead of its windows as they come."""
    at = plan_at_.parse(sc, plan_at)
    level, rate = (None, None) if at is None else (at.bandwidth, at.rate)
    base = sc if rate is None else plan_at_.at_rate(sc, rate)
    target = base if level is None else robust.at_level(base, level[1])
    p = _optimize(target, ttft_slo=ttft_slo)
    if robust.has_law(sc):
        rb = robust.robustness(base, p, level)
        p = replace(p, result=replace(p.result, robustness=rb))
    if rate is not None:
        p = replace(p, result=replace(p.result, planned_rate=rate))
    head = p.result.head
    iv = lambda_interval(target, head.best.lambda_max_rps, head.best.stage, head.cost.cost_per_million_requests,
                         dict(p.result.sources))
    return replace(p, result=replace(p.result, interval=iv))


def _optimize(sc: ScenarioSpec, *, ttft_slo: bool) -> Plan:
    p = planned(sc, BOTH)
    if sc.ttft_slo_s is None or not ttft_slo:
        return p
    return replace(p, result=replace(p.result, ttft_slo=slo.bounded(sc, p)))
