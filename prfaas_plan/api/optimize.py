"""Library API of `optimize`: the plan of a scenario, one PD site (``api.plan``) or a topology
(``api.topology``), and with ``slo.ttft`` the plan under that bound (``api.slo``,
``api.topology_systems.ttft_slo``). The one caller of both; neither calls back here."""

from __future__ import annotations

from dataclasses import replace

from prfaas_plan.api import plan_at as plan_at_
from prfaas_plan.api import robust, slo, topology, topology_systems
from prfaas_plan.api.interval import lambda_interval
from prfaas_plan.api.plan import Plan, plan
from prfaas_plan.specs.scenario import ScenarioSpec


def optimize(sc: ScenarioSpec, *, ttft_slo: bool = True, plan_at: str | None = None) -> Plan | topology.TopologyPlan:
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
    iv = lambda_interval(target, head.best.lambda_max_rps, str(head.best.binding), head.cost.cost_per_million_requests,
                         dict(p.result.sources))
    return replace(p, result=replace(p.result, interval=iv))


def _optimize(sc: ScenarioSpec, *, ttft_slo: bool) -> Plan | topology.TopologyPlan:
    if sc.multi_site:
        tp = topology.plan(sc)
        if sc.ttft_slo_s is not None and ttft_slo:
            tp = replace(tp, result=replace(tp.result, ttft_slo=topology_systems.ttft_slo(sc)))
        return tp
    p = plan(sc)
    if sc.ttft_slo_s is not None and ttft_slo:
        p = replace(p, result=replace(p.result, ttft_slo=slo.bounded(sc, p.timing, p.searches[sc.search.method])))
    return p
