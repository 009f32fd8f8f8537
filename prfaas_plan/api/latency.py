"""Library API of `latency`: analytic TTFT per path, per PD site and overall for each system at one total rate."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from prfaas_plan.api.systems import HOMOGENEOUS, NAIVE, PRFAAS, topology_systems
from prfaas_plan.api.topology import site_scenario
from prfaas_plan.core import latency as lat
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.specs.latency import LatencyResult, PathTiming, SystemTiming, TopologyTiming
from prfaas_plan.specs.run import RunArgs, check
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import SystemConfig
from prfaas_plan.specs.topology import SiteSystem, TopologySystem


def resolve_rate(configs: dict[str, SystemConfig], rate_rps: float | None, load: float | None,
                 default_load: float | None = None) -> tuple[float, float]:
    """(rate, load): --rate R directly, or --load F x the smallest capacity among the systems.

    Both must be finite and > 0 (inf and NaN are refused like any other bad number; the check is
    ``specs.run.check``'s). A system with no capacity at all (some stage gets traffic but has no
    instance) is infeasible: it is named with its binding stage rather than divided by.
    """
    check(RunArgs(rate_rps=rate_rps, load=load))
    for name, c in configs.items():
        if not c.capacity_rps > 0:
            raise InfeasibleError(f"{name} serves no load: bound by {c.capacity_binding}",
                                  binding=c.capacity_binding)
    smallest = min(c.capacity_rps for c in configs.values())
    if rate_rps is None:
        if load is None:
            if default_load is None:
                raise SpecError("give --rate R (req/s) or --load F (fraction of the smallest capacity)",
                                field="--rate")
            load = default_load
        rate_rps = load * smallest
    return rate_rps, rate_rps / smallest


PRFAAS_STAGE = "prfaas prefill"  # the prefill service's stage, as core.latency names a path's pool
# the stage named in the latency output for each binding constraint of Eq. 6
_STAGE_OF = {"prfaas-compute": PRFAAS_STAGE, "link": "link", "pd-prefill": "local prefill", "decode": "decode"}


@dataclass(frozen=True, slots=True, kw_only=True)
class SitePaths:
    """The TTFT laws of one system's (or one site's) paths at a rate, and its stages' loads."""

    p: float
    paths: list[lat.PathLatency]
    stages: list[lat.Stage]
    link_rho: float


def offload_share(dist: Any, t: float | None) -> float:
    """p = P(L > t): 0 with no threshold (nothing offloaded), 1 at t <= 0."""
    if t is None:
        return 0.0
    return 1.0 if t <= 0 else float(dist.tail_prob(t))


def paths_of(sc: ScenarioSpec, c: SystemConfig, rate_rps: float, *, nodes: int = 2000,
             pool: lat.SharedPool | None = None, link_rho: float | None = None) -> SitePaths:
    """Each path's TTFT law; ``pool``: the PrfaaS path queues in a pool shared with other sites;
    ``link_rho``: the link's utilisation by all its traffic where it carries other streams' KV too
    (a fleet's site link; None: this stream's own, ``link_load``): a processor-sharing link slows
    every transfer on it by the total load, whoever sent the rest.

    A trace's workload whose rate varies over time (``core.arrivals``) is piecewise-stationary:
    each window group at ``rate_rps`` x its factor, its paths weighted by its share of requests;
    a stage's utilisation is the request-weighted mean with the busiest window's as its peak (a
    stage over capacity in any window is unstable). Not with a shared pool (a topology's prefill
    service) or a shared link: its wait is the merged stream's at the mean rate."""
    profile = sc.workload.rate_profile
    if profile is None or pool is not None or link_rho is not None:
        scv = sc.workload.arrival_cv**2 if sc.workload.arrival == "gamma" else 1.0
        return _paths_at(sc, c, rate_rps, nodes=nodes, pool=pool, scv=scv, link_rho=link_rho)
    if profile.stationary:
        return _paths_at(sc, c, rate_rps, nodes=nodes, pool=None, scv=profile.arrival_scv)
    windows = zip(profile.factors, profile.weights, strict=True)
    parts = [(w, _paths_at(sc, c, rate_rps * f, nodes=nodes, pool=None, scv=profile.arrival_scv)) for f, w in windows]
    paths = [replace(path, share=path.share * w) for w, sp in parts for path in sp.paths]
    stages = [lat.Stage(name=st.name, utilization=sum(w * sp.stages[k].utilization for w, sp in parts),
                        peak_utilization=max(sp.stages[k].utilization for _, sp in parts))
              for k, st in enumerate(parts[0][1].stages)]
    return SitePaths(p=parts[0][1].p, paths=paths, stages=stages,
                     link_rho=sum(w * sp.link_rho for w, sp in parts))


def link_load(sc: ScenarioSpec, c: SystemConfig, rate_rps: float, *, nodes: int = 2000) -> float:
    """The link's utilisation by this stream's KV at ``rate_rps``: rate x p x mean S_kv / B_out over
    the quantile nodes of the offloaded lengths (0 when nothing is offloaded)."""
    dist = sc.workload.lengths
    p = offload_share(dist, c.threshold_tokens)
    if not (p > 0 and c.t_prfaas is not None):
        return 0.0
    grid = lat.Nodes.of(dist, c.threshold_tokens or 0.0, above=True, n=nodes).lengths
    return rate_rps * p * float(c.kv_bytes(grid).mean()) / c.link_bytes_per_s


def _paths_at(sc: ScenarioSpec, c: SystemConfig, rate_rps: float, *, nodes: int,
              pool: lat.SharedPool | None, scv: float, link_rho: float | None = None) -> SitePaths:
    """Each path's TTFT law for a stationary stream at ``rate_rps`` whose gaps have SCV ``scv``."""
    dist = sc.workload.lengths
    t = c.threshold_tokens
    p = offload_share(dist, t)
    hold = c.output_tokens * c.t_decode_s
    admission, decode_rho = lat.decode_admission(rate_rps, c.n_d * c.bs_max, hold)
    paths: list[lat.PathLatency] = []
    if p > 0 and c.t_prfaas is not None:
        grid = lat.Nodes.of(dist, t or 0.0, above=True, n=nodes).lengths
        if link_rho is None:
            link_rho = link_load(sc, c, rate_rps, nodes=nodes)
        paths.append(lat.path_latency(
            "prfaas", share=p, rate_rps=rate_rps * p, servers=c.n_prfaas, lengths=grid, t_prefill=c.t_prfaas,
            scv_arrival=scv, link_bytes_per_s=c.link_bytes_per_s, link_rho=link_rho, kv_bytes=c.kv_bytes,
            n_layers=c.n_layers, pipelining=c.pipelining, rtt_s=c.landing_s, admission_s=admission, pool=pool))
    if p < 1 and c.t_local is not None:
        grid = lat.Nodes.of(dist, t if t is not None else dist.hi, above=False, n=nodes).lengths
        paths.append(lat.path_latency(
            "local", share=1 - p, rate_rps=rate_rps * (1 - p), servers=c.n_p, lengths=grid, t_prefill=c.t_local,
            scv_arrival=scv, admission_s=admission))
    stages = [s for path in paths for s in path.stages] + [lat.Stage(name="decode", utilization=decode_rho)]
    return SitePaths(p=p, paths=paths, stages=stages, link_rho=link_rho or 0.0)


def site_latency(sc: ScenarioSpec, c: SystemConfig, rate_rps: float, *, nodes: int = 2000) -> SystemTiming:
    """Analytic TTFT of one site's configuration at ``rate_rps``, its prefill pool its own; names the
    unstable stage above capacity.

    ``nodes``: quantile nodes of each path's length distribution (fewer is faster, coarser).
    """
    return timing_of(c, rate_rps, paths_of(sc, c, rate_rps, nodes=nodes))


def _path(ps: list[lat.PathLatency]) -> PathTiming:
    """One path's timing from its laws (one per window of a trace's rate profile, else one):
    shares and rates summed, means weighted by share, quantiles of the mixture."""
    share = sum(p.share for p in ps)
    q = ps[0].ttft_quantiles_s if len(ps) == 1 else lat.overall([replace(p, share=p.share / share) for p in ps])[1]

    def avg(field: str) -> float:
        return sum(p.share * getattr(p, field) for p in ps) / share if share > 0 else getattr(ps[0], field)
    return PathTiming(name=ps[0].name, share=share, rate_rps=sum(p.rate_rps * p.share for p in ps) / share
                      if share > 0 else ps[0].rate_rps, ttft_mean_s=avg("ttft_mean_s"),
                      ttft_p50_s=q[0.5], ttft_p90_s=q[0.9], ttft_p99_s=q[0.99], wait_mean_s=avg("wait_mean_s"),
                      prefill_mean_s=avg("prefill_mean_s"), transfer_mean_s=avg("transfer_mean_s"),
                      admission_mean_s=avg("admission_mean_s"), zero_load_ttft_mean_s=avg("zero_load_ttft_mean_s"))


def _by_path(paths: list[lat.PathLatency]) -> tuple[PathTiming, ...]:
    names = list(dict.fromkeys(p.name for p in paths))
    return tuple(_path([p for p in paths if p.name == n]) for n in names)


def unstable_of(c: SystemConfig, rate_rps: float, sp: SitePaths) -> list[str]:
    """The stages of a system that diverge at ``rate_rps`` (its path laws ``sp``)."""
    unstable = [s.name for s in sp.stages if not s.stable]
    if not unstable and rate_rps >= c.capacity_rps * (1 - lat.AT_CAPACITY_RTOL):
        # at Lambda_max (within round-off) the binding stage is saturated, whatever its utilisation
        # on the quantile nodes says (their mean service time differs from the grid's by ~1e-7)
        unstable = [_STAGE_OF.get(c.capacity_binding, c.capacity_binding)]
    return unstable


def timing_of(c: SystemConfig, rate_rps: float, sp: SitePaths) -> SystemTiming:
    """The typed timing of a system whose path laws ``sp`` are at ``rate_rps``."""
    unstable = unstable_of(c, rate_rps, sp)
    mean: float | None = None
    quantiles: dict[float, float | None] = {q: None for q in lat.QUANTILES}
    if not unstable:
        mean, quantiles = lat.overall(sp.paths)  # type: ignore[assignment]
    return SystemTiming(
        threshold_tokens=c.threshold_tokens, n_prfaas=c.n_prfaas, n_p=c.n_p, n_d=c.n_d, capacity_rps=c.capacity_rps,
        capacity_binding=c.capacity_binding, rate_rps=rate_rps, utilization={s.name: s.utilization for s in sp.stages},
        unstable_stages=tuple(unstable), tpot_s=c.t_decode_s, p_offload=sp.p,
        zero_load_ttft_mean_s=sum(path.share * path.zero_load_ttft_mean_s for path in sp.paths),
        ttft_mean_s=mean, ttft_p50_s=quantiles[0.5], ttft_p90_s=quantiles[0.9], ttft_p99_s=quantiles[0.99],
        paths=_by_path(sp.paths) if not unstable else (), link_utilization=sp.link_rho)


def prefill_pool(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, *, nodes: int = 2000
                 ) -> lat.SharedPool | None:
    """The prefill service's one FIFO pool at the total rate, shared by every site's offloaded stream,
    its service times on the quantile nodes of that site's offloaded lengths. None where fewer than
    two streams feed it: one stream's pool is its own (``paths_of`` without ``pool``, a trace's rate
    windows included)."""
    rates, services = [], []
    for s in system.sites:
        c = s.config
        p = offload_share(s.workload.lengths, c.threshold_tokens)
        if p > 0 and c.t_prfaas is not None:
            grid = lat.Nodes.of(s.workload.lengths, c.threshold_tokens or 0.0, above=True, n=nodes).lengths
            rates.append(rate_rps * s.demand_share * p)
            services.append(c.t_prfaas(grid))
    scv = 1.0 if sc.workload.arrival != "gamma" else sc.workload.arrival_cv**2
    return lat.shared_pool(rates, services, system.n_prfaas, scv) if len(rates) > 1 else None


def site_index(sc: ScenarioSpec, name: str) -> int:
    return next(i for i, s in enumerate(sc.topology.sites) if s.name == name)


def site_paths(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, *, nodes: int = 2000
               ) -> tuple[lat.SharedPool | None, dict[str, SitePaths]]:
    """The prefill service's shared pool (``prefill_pool``) and each PD site's path laws at its share
    of the total rate ``rate_rps``."""
    pool = prefill_pool(sc, system, rate_rps, nodes=nodes)
    return pool, {s.site: paths_of(site_scenario(sc, site_index(sc, s.site)), s.config, rate_rps * s.demand_share,
                                   nodes=nodes, pool=pool) for s in system.sites}


def mixture(system: TopologySystem, paths: dict[str, SitePaths]) -> list[tuple[Any, ...]]:
    """The TTFT law over every request: each site's paths weighted by its demand share
    (``core.latency.mixture_quantile``'s parts)."""
    return [(s.demand_share * path.share, path.p_wait, path.tail_mean_s, path.fixed_s, path.fixed_weights)
            for s in system.sites for path in paths[s.site].paths if path.share > 0]


def site_within(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, site: SiteSystem,
                pool: lat.SharedPool | None, bound_s: float, statistic: str, *, nodes: int = 2000) -> bool:
    """Whether PD site ``site`` meets ``statistic`` TTFT <= ``bound_s`` at its share of the total
    rate, the prefill service's wait being ``pool`` (``prefill_pool``, the same for every site):
    stable, and its mixture's tail at the bound P(TTFT > bound) <= 1 - q (``mean``: the mean), so
    no quantile is searched for (equal to comparing ``timing_of``'s quantile but within its 1e-9)."""
    share = rate_rps * site.demand_share
    sp = paths_of(site_scenario(sc, site_index(sc, site.site)), site.config, share, nodes=nodes, pool=pool)
    if unstable_of(site.config, share, sp):
        return False
    active = [p for p in sp.paths if p.share > 0]
    if statistic == "mean":
        return sum(p.share * p.ttft_mean_s for p in active) <= bound_s
    parts = [(p.share, p.p_wait, p.tail_mean_s, p.fixed_s, p.fixed_weights) for p in active]
    return lat.mixture_tail(bound_s, parts) <= 1 - float(statistic[1:]) / 100


def per_site(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, *, nodes: int = 2000
             ) -> tuple[lat.SharedPool | None, dict[str, SitePaths], dict[str, SystemTiming]]:
    """Each PD site's analytic TTFT at its share of the total rate ``rate_rps`` (the prefill
    service's wait shared with the other sites, ``prefill_pool``), with the pool and path laws."""
    pool, paths = site_paths(sc, system, rate_rps, nodes=nodes)
    return pool, paths, {s.site: timing_of(s.config, rate_rps * s.demand_share, paths[s.site]) for s in system.sites}


def system_latency(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, *, nodes: int = 2000
                   ) -> TopologyTiming:
    """A system's analytic TTFT at the total rate ``rate_rps``: per PD site (``per_site``) and over
    every request."""
    pool, paths, per = per_site(sc, system, rate_rps, nodes=nodes)
    laws = mixture(system, paths)
    stable = all(t.stable for t in per.values())
    mean = sum(s.demand_share * (per[s.site].ttft_mean_s or 0.0) for s in system.sites) if stable else None
    q = {q: lat.mixture_quantile(q, laws) if stable else None for q in lat.QUANTILES}
    util = pool.utilization if pool else sum(t.utilization.get(PRFAAS_STAGE, 0.0) for t in per.values())
    return TopologyTiming(capacity_rps=system.capacity_rps, capacity_binding=system.capacity_binding,
                          rate_rps=rate_rps, prfaas_utilization=util,
                          n_prfaas=system.n_prfaas, sites=per,
                          demand_shares={s.site: s.demand_share for s in system.sites},
                          ttft_mean_s=mean, ttft_p50_s=q[0.5], ttft_p90_s=q[0.9], ttft_p99_s=q[0.99])


def latency(sc: ScenarioSpec, *, rate_rps: float | None = None, load: float | None = None,
            which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE)) -> LatencyResult:
    """`latency`: every system at the same total rate (``rate_rps``, or ``load`` x the smallest
    exact-method capacity), per PD site and overall."""
    systems = topology_systems(sc, which=which)
    rate, load_f = resolve_rate(systems, rate_rps, load)  # type: ignore[arg-type]
    per = {name: system_latency(sc, s, rate) for name, s in systems.items()}
    return LatencyResult(scenario=sc.name, model=sc.model.name, rate_rps=rate, load=load_f,
                         head=PRFAAS if PRFAAS in per else next(iter(per)), systems=per)
