"""The plan of a scenario of either form as one typed summary (``specs.sweep.PlanSummary``):
what `sweep` puts at each value and a study's `optimize` row reads, one path for one PD site and
for a topology."""

from __future__ import annotations

from prfaas_plan.api import topology
from prfaas_plan.api.context import known
from prfaas_plan.api.plan import Plan, plan
from prfaas_plan.specs.results import TopologyRatios, site_point
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.sweep import PlanSummary

BOTH = ("paper", "exact")  # what `optimize` plans


def planned(sc: ScenarioSpec, methods: tuple[str, ...] | None = None) -> Plan | topology.TopologyPlan:
    """The plan of either form under ``methods`` (default: the scenario's own, or both where this
    command planned both already), searched once per command (``api.context``): the one place that
    picks the one-site or the topology planner."""
    kind, planner = ("topology plan", topology.plan) if sc.multi_site else ("plan", plan)
    if methods is None:
        done = known(kind, (sc,), (BOTH,))
        if done is not None:
            return done
        methods = (sc.search.method,)
    return planner(sc, methods=methods)


def headline(sc: ScenarioSpec) -> PlanSummary:
    """The plan under the scenario's own method (planned once per command: ``api.context``)."""
    p = planned(sc)
    if isinstance(p, topology.TopologyPlan):
        t = p.result
        m = t.head
        return PlanSummary(point=m.best, usable_bytes_per_s=tuple(s.link_usable_bytes_per_s for s in t.sites),
                           cost=m.cost, ratios=m.ratios, homogeneous_lambda_max_rps=m.homogeneous.lambda_max_rps,
                           naive_lambda_max_rps=m.naive.lambda_max_rps,
                           independent_lambda_max_rps=m.independent.lambda_max_rps)
    r = p.result
    h = r.head
    return PlanSummary(point=site_point(r, h.best), usable_bytes_per_s=(r.link_usable_bytes_per_s,), cost=h.cost,
                       ratios=TopologyRatios(prfaas_vs_homogeneous=h.ratios.prfaas_vs_homogeneous,
                                             prfaas_vs_independent=None,
                                             naive_vs_homogeneous=h.ratios.naive_vs_homogeneous,
                                             prfaas_vs_homogeneous_equal_cost=h.ratios.prfaas_vs_homogeneous_equal_cost),
                       homogeneous_lambda_max_rps=h.homogeneous.point.lambda_max_rps if h.homogeneous else None,
                       naive_lambda_max_rps=h.naive.point.lambda_max_rps if h.naive else None,
                       independent_lambda_max_rps=None)
