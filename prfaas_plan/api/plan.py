"""Library API of `optimize`'s search: a scenario of any topology in, per method the best PrfaaS-PD
plan and its baselines out, as one typed result (``specs.results.PlanResult``; its JSON is written
at the edge, ``report.plan_json``).

The two-cluster form is a topology of one PD site. One PD site is searched by the exhaustive grid
(``api.grid``: every candidate's Eqs. 3-6, Eq. 7's refinement, the runners-up and Figure 5's
grid); several by the joint search (``api.topology``), whose one-site case equals the grid's
within 1e-12 (tests/test_topology.py). Every site's decode rate is staged at its own t (``api.staging``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from prfaas_plan.api.context import remembered
from prfaas_plan.api.grid import grid_method
from prfaas_plan.api.laws import Timing, search_space
from prfaas_plan.api.topology import joint_method, site_info, site_models
from prfaas_plan.core.stages import SiteModel
from prfaas_plan.core.throughput import Method
from prfaas_plan.specs.results import MethodPlan, PlanResult, Pool
from prfaas_plan.specs.scenario import ScenarioSpec


@dataclass(frozen=True)
class Plan:
    """The typed result with the searches and service laws behind it: per method the search
    (``core.optimize.Search`` for one PD site, ``core.joint.JointSearch`` for several), each
    site's model with its decode rate staged at the headline plan's t_i, and each site's unstaged
    timing."""

    result: PlanResult
    searches: Mapping[str, Any]
    models: Sequence[SiteModel]
    timings: Sequence[Timing]
    scenario: ScenarioSpec

    def staged(self, i: int = 0) -> Timing:
        """Site i's timing with its decode rate staged at the headline plan's t_i."""
        return replace(self.timings[i], decode_rps_per_instance=self.models[i].decode_rps_per_instance)


def plan(sc: ScenarioSpec, *, methods: tuple[str, ...] = ("paper", "exact")) -> Plan:
    """Search t (each site's t_i) and the splits under each method; the scenario's method is the
    headline (the plan under a TTFT SLO is ``api.optimize.optimize``'s). Searched once per
    command (``api.context``)."""
    return remembered("plan", (sc,), (tuple(methods),), lambda: _plan(sc, methods))


def _plan(sc: ScenarioSpec, methods: tuple[str, ...]) -> Plan:
    topo = sc.topology
    models, timings = site_models(sc)
    space = search_space(sc)
    chosen = Method(sc.search.method)
    order = [chosen] + [Method(m) for m in methods if Method(m) != chosen]
    per: dict[str, MethodPlan] = {}
    searches: dict[str, Any] = {}
    staged: dict[str, list[SiteModel]] = {}
    one = len(topo.sites) == 1
    for m in order:
        if one:
            per[str(m)], searches[str(m)], t = grid_method(sc, timings[0], space, m)
            staged[str(m)] = [replace(models[0], decode_rps_per_instance=t.decode_rps_per_instance)]
        else:
            per[str(m)], searches[str(m)], staged[str(m)] = joint_method(sc, models, timings, m)
    head = per[str(chosen)]
    pre = topo.prefill.cluster
    sources = dict(timings[0].sources) if one else {
        f"{s.name}: {k}": v for s, t in zip(topo.sites, timings, strict=True) for k, v in t.sources.items()}
    result = PlanResult(
        scenario=sc.name, model=sc.model.name, method=str(chosen), methods=per, prefill_site=topo.prefill.name,
        prefill=Pool(hardware=pre.instance.gpu.name, gpus_per_instance=pre.instance.gpus, instances=pre.instances),
        sites=tuple(site_info(sc, i, head.decode[s.name]) for i, s in enumerate(topo.sites)), sources=sources,
        thresholds=len(space.thresholds), n_prfaas_options=len(space.n_prfaas),
        max_prfaas_instances=int(space.n_prfaas.max()), splits=len(space.n_p) if one else None,
        evaluations=space.size if one else None)
    return Plan(result=result, searches=searches, models=staged[str(chosen)], timings=timings, scenario=sc)
