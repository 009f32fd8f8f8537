"""Analytic TTFT per site of a topology's systems (``api.systems.topology_systems``).

One FIFO prefill pool shared by every site's offloaded stream (``core.latency.shared_pool``),
and per site its link, local prefill pool and decode admission (``api.latency.paths_of``).
"""

from __future__ import annotations

from prfaas_plan.api.latency import offload_share, paths_of, timing_of
from prfaas_plan.api.systems import HOMOGENEOUS, NAIVE, PRFAAS, topology_systems
from prfaas_plan.api.topology import site_scenario
from prfaas_plan.core import latency as lat
from prfaas_plan.core.roots import bisect
from prfaas_plan.specs.latency import TopologyLatencyResult, TopologyTiming
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.slo import SiteTtft, TopologySloPlan, TopologySloSystem
from prfaas_plan.specs.topology import TopologySystem


def prefill_pool(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, *, nodes: int = 2000
                 ) -> lat.SharedPool | None:
    """The prefill service's one FIFO pool at the total rate: every site's offloaded stream, its
    service times on the quantile nodes of that site's offloaded lengths (None: nothing offloaded)."""
    rates, services = [], []
    for s in system.sites:
        c = s.config
        p = offload_share(s.workload.lengths, c.threshold_tokens)
        if p > 0 and c.t_prfaas is not None:
            grid = lat.Nodes.of(s.workload.lengths, c.threshold_tokens or 0.0, above=True, n=nodes).lengths
            rates.append(rate_rps * s.demand_share * p)
            services.append(c.t_prfaas(grid))
    scv = 1.0 if sc.workload.arrival != "gamma" else sc.workload.arrival_cv**2
    return lat.shared_pool(rates, services, system.n_prfaas, scv) if rates else None


def system_latency(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, *, nodes: int = 2000
                   ) -> TopologyTiming:
    """Per-site analytic TTFT at the total rate ``rate_rps``, the shared pool's wait included."""
    pool = prefill_pool(sc, system, rate_rps, nodes=nodes)
    per, laws = {}, []
    for s in system.sites:
        sp = paths_of(site_scenario(sc, site_index(sc, s.site)), s.config, rate_rps * s.demand_share, nodes=nodes,
                      pool=pool)
        per[s.site] = timing_of(s.config, rate_rps * s.demand_share, sp)
        laws += [(s.demand_share * path.share, path.p_wait, path.tail_mean_s, path.fixed_s, path.fixed_weights)
                 for path in sp.paths if path.share > 0]
    stable = all(t.stable for t in per.values())
    mean = sum(s.demand_share * (per[s.site].ttft_mean_s or 0.0) for s in system.sites) if stable else None
    q = {q: lat.mixture_quantile(q, laws) if stable else None for q in lat.QUANTILES}
    return TopologyTiming(capacity_rps=system.capacity_rps, capacity_binding=system.capacity_binding,
                          rate_rps=rate_rps, prfaas_utilization=pool.utilization if pool else 0.0,
                          n_prfaas=system.n_prfaas, sites=per, shares={s.site: s.demand_share for s in system.sites},
                          ttft_mean_s=mean, ttft_p50_s=q[0.5], ttft_p90_s=q[0.9], ttft_p99_s=q[0.99])


def site_index(sc: ScenarioSpec, name: str) -> int:
    return next(i for i, s in enumerate(sc.topology.sites) if s.name == name)


def latency(sc: ScenarioSpec, *, rate_rps: float | None = None, load: float | None = None,
            which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE)) -> TopologyLatencyResult:
    """`latency` of a topology: every system at the same total rate, per site and overall."""
    from prfaas_plan.api.latency import resolve_rate

    systems = topology_systems(sc, which=which)
    rate, load_f = resolve_rate(systems, rate_rps, load)  # type: ignore[arg-type]
    return TopologyLatencyResult(scenario=sc.name, model=sc.model.name, rate_rps=rate, load=load_f,
                                 systems={name: system_latency(sc, s, rate) for name, s in systems.items()})


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
