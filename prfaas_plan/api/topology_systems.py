"""The TTFT SLO of a topology's systems held at their throughput configurations: the largest total
rate at which every site meets it (``api.latency.system_latency``; one PD site's search over
configurations under the SLO is ``api.slo``'s)."""

from __future__ import annotations

from prfaas_plan.api.latency import system_latency
from prfaas_plan.api.systems import HOMOGENEOUS, PRFAAS, topology_systems
from prfaas_plan.core.roots import bisect
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.slo import SiteTtft, TopologySloPlan, TopologySloSystem
from prfaas_plan.specs.topology import TopologySystem

BISECTIONS = 20


def _meets(sc: ScenarioSpec, system: TopologySystem, rate: float, bound: float, stat: str) -> bool:
    r = system_latency(sc, system, rate, nodes=400)
    return r.stable and all((v := t.statistic(stat)) is not None and v <= bound for t in r.sites.values())


def ttft_slo(sc: ScenarioSpec) -> TopologySloPlan:
    """The largest total rate at which every site of each system meets the TTFT SLO, the systems
    held at their throughput configurations (the search over configurations under the SLO covers
    one PD site: ``api.slo``)."""
    bound, stat = sc.ttft_slo_s, sc.ttft_statistic
    assert bound is not None
    out: dict[str, TopologySloSystem | None] = {}
    for name, system in topology_systems(sc).items():
        cap = system.capacity_rps * (1 - 1e-6)
        lo, hi = cap * 1e-6, cap
        if not _meets(sc, system, lo, bound, stat):
            out[name] = None
            continue
        if _meets(sc, system, hi, bound, stat):
            lo = hi
        lo, hi = bisect(lambda x, s=system: _meets(sc, s, x, bound, stat), lo, hi, iterations=BISECTIONS, rtol=1e-4)
        r = system_latency(sc, system, lo)
        out[name] = TopologySloSystem(
            lambda_ttft_rps=lo, capacity_rps=system.capacity_rps, load=lo / system.capacity_rps,
            binding="ttft" if lo < cap * (1 - 1e-4) else system.capacity_binding,
            sites={k: SiteTtft(ttft_mean_s=t.ttft_mean_s, ttft_p90_s=t.ttft_p90_s, ttft_p99_s=t.ttft_p99_s)
                   for k, t in r.sites.items()})
    hom, pr = out.get(HOMOGENEOUS), out.get(PRFAAS)
    return TopologySloPlan(bound_s=bound, statistic=stat, systems=tuple(out.items()),
                           prfaas_vs_homogeneous=pr.lambda_ttft_rps / hom.lambda_ttft_rps if pr and hom else None)
