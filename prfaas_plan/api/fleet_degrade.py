"""`degrade` for several models: each link at fractions of its bandwidth and down, the plan held
(its thresholds, splits and assignment kept) and the fleet re-planned (``core.fleet``, every model's
threshold, split and service instances searched again at the link's new budget), with the
re-planned fleet's analytic TTFT per model at ``load`` x the nominal Lambda_max (``api.fleet_latency``)."""

from __future__ import annotations

from dataclasses import replace

from prfaas_plan.api.fleet import FleetPoint, entries, held, laws, plan, point_of, refine, shape
from prfaas_plan.core import fleet as core
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.fleet import FleetDegradeLevel, FleetDegradeResult, FleetSpec
from prfaas_plan.specs.fleet_latency import FleetTiming


def _at(fl: core.Fleet, i: int, level: float) -> core.Fleet:
    bw = tuple(b * level if k == i else b for k, b in enumerate(fl.link_bytes_per_s))
    return replace(fl, link_bytes_per_s=bw)


def _degraded(fs: FleetSpec, link: str, level: float) -> FleetSpec:
    """Every model's scenario with ``link`` at ``level`` of its bandwidth."""
    models = []
    for m in fs.models:
        sc = m.scenario
        topo = sc.topology
        links = tuple(replace(lk, link=replace(lk.link, bandwidth_bytes_per_s=lk.link.bandwidth_bytes_per_s * level))
                      if lk.name == link else lk for lk in topo.links)
        models.append(replace(m, scenario=replace(sc, topology=replace(topo, links=links))))
    return replace(fs, models=tuple(models))


def _ttft(fs: FleetSpec, link: str, level: float, rate: float) -> FleetTiming | None:
    """The re-planned fleet's analytic TTFT at ``rate`` (None: down to no bandwidth, or no plan)."""
    from prfaas_plan.api.context import planning
    from prfaas_plan.api.fleet_latency import system_latency
    from prfaas_plan.api.fleet_sim import SHARED, fleet_systems

    if level <= 0:  # a link at 0 bytes/s: the plan offloads nothing, timed as such below
        level = 1e-12
    with planning(fresh=True):
        try:
            system, scs = fleet_systems(_degraded(fs, link, level))[SHARED]
        except InfeasibleError:
            return None
        return system_latency(system, scs, rate)


def degrade(fs: FleetSpec, levels: tuple[float, ...], load: float = 0.7) -> FleetDegradeResult:
    r = plan(fs)
    m = Method(r.method)
    head = r.methods[r.method].best
    sh = shape(fs)
    ls = laws(fs)
    held_es, choices = held(sh, ls, head, m)
    grid = entries(sh, ls, m)
    out = []
    for i, link in enumerate(sh.fleet.links):
        per = []
        for level in (1.0, *levels):
            fl = _at(sh.fleet, i, level)
            static = core.evaluate(fl, held_es, choices)
            found = core.search(fl, grid)
            replan: FleetPoint | None = None
            if found is not None and found.lambda_max_rps > 0:
                at = replace(sh, fleet=fl)
                es, found = refine(at, ls, m, grid, found)
                replan = point_of(at, es, found)
            per.append(FleetDegradeLevel(level=level, usable_bytes_per_s=fl.link_bytes_per_s[i],
                                         static_rps=static.lambda_max_rps, static_binding=static.binding,
                                         replan=replan, ttft=_ttft(fs, link, level, load * head.lambda_max_rps)))
        out.append((link, tuple(per)))
    return FleetDegradeResult(scenario=fs.name, method=r.method, nominal=head, links=tuple(out),
                              rate_rps=load * head.lambda_max_rps, load=load)
