"""The plan of a scenario as one typed summary (``specs.sweep.PlanSummary``): what `sweep` puts at
each value and a study's `optimize` row reads."""

from __future__ import annotations

from prfaas_plan.api.context import known
from prfaas_plan.api.plan import Plan, plan
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.sweep import PlanSummary

BOTH = ("paper", "exact")  # what `optimize` plans


def planned(sc: ScenarioSpec, methods: tuple[str, ...] | None = None) -> Plan:
    """The plan under ``methods`` (default: the scenario's own, or both where this command planned
    both already), searched once per command (``api.context``)."""
    if methods is None:
        done = known("plan", (sc,), (BOTH,))
        if done is not None:
            return done
        methods = (sc.search.method,)
    return plan(sc, methods=methods)


def headline(sc: ScenarioSpec) -> PlanSummary:
    """The plan under the scenario's own method (planned once per command: ``api.context``)."""
    r = planned(sc).result
    m = r.head
    return PlanSummary(point=m.best, usable_bytes_per_s=tuple(s.link_usable_bytes_per_s for s in r.sites),
                       cost=m.cost, ratios=m.ratios,
                       homogeneous_lambda_max_rps=None if m.homogeneous is None else m.homogeneous.lambda_max_rps,
                       naive_lambda_max_rps=None if m.naive is None else m.naive.lambda_max_rps,
                       independent_lambda_max_rps=None if m.independent is None else m.independent.lambda_max_rps)
