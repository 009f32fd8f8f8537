"""`latency` of a scenario of several models: the analytic TTFT of each configuration `simulate`
runs (the plan, and separate services) per entry and over every request, at one total rate.

Each entry (a model at a PD site) is a site of ``api.latency.paths_of`` at its share of the rate:
its own pool of the service (the instances holding its model for it: an M/G/c of its offloaded
stream alone), its local pool and decode admission. What entries share is their site's link, a
processor-sharing server: every transfer on it is slowed by the link's utilisation by ALL its
traffic (the sum of its entries' ``link_load``), which ``paths_of`` takes as ``link_rho``
(docs/model.md#several-models).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import replace

from prfaas_plan.api.fleet_sim import fleet_systems
from prfaas_plan.api.latency import PRFAAS_STAGE, SitePaths, link_load, paths_of, resolve_rate, timing_of
from prfaas_plan.core import latency as lat
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.fleet import FleetSpec, FleetSystem
from prfaas_plan.specs.fleet_latency import FleetLatencyResult, FleetTiming
from prfaas_plan.specs.latency import SystemTiming
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.topology import SiteSystem


def system_latency(system: FleetSystem, scs: list[ScenarioSpec], rate_rps: float, *, nodes: int = 2000
                   ) -> FleetTiming:
    """The fleet at total rate ``rate_rps``; ``scs``: each entry's scenario (``fleet_systems``)."""
    per_scenario = [replace(sc, workload=e.workload) for sc, e in zip(scs, system.entries, strict=True)]
    links: dict[str, float] = defaultdict(float)
    for sc, e in zip(per_scenario, system.entries, strict=True):
        links[e.link] += link_load(sc, e.config, rate_rps * e.demand_share, nodes=nodes)
    entries, laws = {}, []
    for sc, e in zip(per_scenario, system.entries, strict=True):
        rate = rate_rps * e.demand_share
        sp = paths_of(sc, e.config, rate, nodes=nodes, link_rho=links[e.link])
        entries[e.site] = _timing(system.capacity_binding, e, rate, sp)
        laws += [(e.demand_share * path.share, path.p_wait, path.tail_mean_s, path.fixed_s, path.fixed_weights)
                 for path in sp.paths if path.share > 0]
    stable = all(t.stable for t in entries.values())
    mean = sum(e.demand_share * (entries[e.site].ttft_mean_s or 0.0) for e in system.entries) if stable else None
    q = {q: lat.mixture_quantile(q, laws) if stable and laws else None for q in lat.QUANTILES}
    instances = dict(system.pools)
    return FleetTiming(
        capacity_rps=system.capacity_rps, capacity_binding=system.capacity_binding, rate_rps=rate_rps,
        entries=entries, models={e.site: sc.model.name for sc, e in zip(scs, system.entries, strict=True)},
        demand_shares={e.site: e.demand_share for e in system.entries},
        links_of={e.site: e.link for e in system.entries},
        pools={label: (n, entries[label].utilization.get(PRFAAS_STAGE, 0.0)) for label, n in instances.items()},
        links=dict(links), ttft_mean_s=mean, ttft_p50_s=q[0.5], ttft_p90_s=q[0.9], ttft_p99_s=q[0.99])


def _timing(binding: str, e: SiteSystem, rate_rps: float, sp: SitePaths) -> SystemTiming:
    """``timing_of`` the entry, which names the fleet's binding stage as unstable at or above the
    fleet's capacity (round-off of the nodes' utilisations) only where that stage is the entry's own
    or its link: above it, an entry whose own stages keep up is still served at its share (its
    pools are its own), and its TTFT is given."""
    kind, _, where = binding.partition(" ")
    if where == (e.link if kind == "link" else e.site):
        return timing_of(e.config, rate_rps, sp)
    return replace(timing_of(replace(e.config, capacity_rps=math.inf), rate_rps, sp),
                   capacity_rps=e.config.capacity_rps)


def latency(fs: FleetSpec, *, rate_rps: float | None = None, load: float | None = None) -> FleetLatencyResult:
    """Both configurations at the same total rate: ``rate_rps``, or ``load`` x the smaller capacity."""
    if any(m.scenario.workload.trace is not None for m in fs.models):
        raise SpecError("a scenario of several models is analysed on parametric workloads; a model's trace "
                        "is not replayed here", field="models")
    systems = fleet_systems(fs)
    rate, load_f = resolve_rate({n: s for n, (s, _) in systems.items()}, rate_rps, load)  # type: ignore[misc]
    return FleetLatencyResult(scenario=fs.name, rate_rps=rate, load=load_f,
                              systems={n: system_latency(s, scs, rate) for n, (s, scs) in systems.items()})
