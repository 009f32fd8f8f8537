"""Library API of `degrade`: what happens to the plan when a link of the topology misbehaves.

For each link (the two-cluster form has one, ``prfaas->local``) and each level of its nominal
bandwidth (100% as the reference, then the levels asked for; 0 is the link down):

- ``static``: the nominal plan's configuration (every site's t_i and split, N_prfaas) held and
  evaluated at the degraded bandwidth (``core.joint.point``): only the link's bound falls. With
  the link down the routing rule still sends the site's long requests over it, so the fleet
  serves nothing, unless that site offloaded nothing.
- ``replanned``: `optimize` at that bandwidth, on the spec patched as ``--set link.bandwidth=...``
  (``links[i].bandwidth`` for a topology) builds it, so the numbers are `optimize`'s. With the
  link down the site prefills every request locally (t = its longest length, p = 0) at the best
  split of its own instances (``api.grid.homogeneous_splits`` on its cluster); the other sites keep
  their links and the whole prefill service, jointly optimised among themselves. That site uses
  none of the shared compute, so the joint plan with it forced to p = 0 is exactly
  min(C_down / s_i, the others' joint plan): the two are found apart and evaluated together.
- ``ttft``: the re-planned configuration at one total rate (``--rate``, or ``--load`` x the nominal
  Lambda_max of the scenario's method), per site (``api.latency.system_latency``), and
  with ``slo.ttft`` the fraction of each site's requests within the bound, P(TTFT <= bound) from the
  same analytic laws (``core.latency.mixture_tail``). A path through an unstable stage has waits
  that grow without bound, so none of its requests count as meeting the bound.
- ``failure``: the site's local-only capacity C_down, the highest load the fleet survives the
  link failing at (its total with the link down over the nominal Lambda_max), and how many
  instances the site must add for its best local-only split to serve its share of the rate
  (the smallest N_local, by doubling then bisection: the best split's capacity never falls as
  N_local grows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from prfaas_plan import units
from prfaas_plan.api import topology
from prfaas_plan.api.grid import homogeneous_splits
from prfaas_plan.api.headline import headline
from prfaas_plan.api.latency import site_paths, system_latency
from prfaas_plan.api.laws import search_space, timing
from prfaas_plan.api.systems import PRFAAS, site_config
from prfaas_plan.api.topology import site_models, site_scenario
from prfaas_plan.core import joint
from prfaas_plan.core import latency as lat
from prfaas_plan.core.throughput import Method, OperatingPoint, operating_point, routing
from prfaas_plan.errors import SpecError
from prfaas_plan.io import patch
from prfaas_plan.io.overrides import grid_point
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.specs.degrade import (
    Capacity,
    DegradeResult,
    Failure,
    LevelResult,
    LinkDegrade,
    Replanned,
    SiteConfig,
    SiteTtft,
)
from prfaas_plan.specs.latency import SystemTiming
from prfaas_plan.specs.results import stage_name
from prfaas_plan.specs.run import RunArgs, check
from prfaas_plan.specs.scenario import ClusterSpec, ScenarioSpec
from prfaas_plan.specs.topology import SiteSystem, TopologySystem

DEFAULT_LEVELS = (0.5, 0.1, 0.0)
DEFAULT_LOAD = 0.7
MAX_INSTANCES = 100_000  # the extra-instances search stops here (null past it)
NODES = 2000  # quantile nodes per path for the TTFT laws, as `latency`


def parse_levels(text: str) -> tuple[float, ...]:
    """"50%,10%,0" -> (0.5, 0.1, 0.0): fractions of the nominal bandwidth, each in [0, 1],
    highest first and each once."""
    try:
        items = units.split_items(text, "levels")
    except units.UnitError as exc:
        raise SpecError(str(exc), field="--levels") from None
    out = []
    for item in items:
        try:
            out.append(units.parse_fraction(item))
        except units.UnitError:
            raise SpecError(f"level {item!r} is not a fraction (0.5) or a percentage (50%)", field="--levels") from None
    return check_levels(out)


def check_levels(levels: Sequence[float]) -> tuple[float, ...]:
    for v in levels:
        if not (isinstance(v, int | float) and math.isfinite(v) and 0 <= v <= 1):
            shown = f"{v * 100:g}%" if isinstance(v, int | float) and math.isfinite(v) else repr(v)
            raise SpecError(f"level {shown} is outside [0, 1] (0% to 100% of the link's nominal bandwidth)",
                            field="--levels")
    return tuple(sorted({float(v) for v in levels}, reverse=True))


def _named(sc: ScenarioSpec, binding: str) -> str:
    return stage_name(binding, len(sc.topology.sites))


def replanned(sc: ScenarioSpec) -> Replanned:
    """`optimize`'s best configuration under the scenario's method (the throughput plan)."""
    best = headline(sc).point
    return Replanned(lambda_max_rps=best.lambda_max_rps, binding=best.binding, n_prfaas=round(best.n_prfaas),
                     sites={sp.site: SiteConfig(threshold_tokens=sp.threshold_tokens, n_p=sp.n_p, n_d=sp.n_d,
                                                p_offload=sp.p_offload) for sp in best.sites})


def _candidates(models: list[Any], plan: Replanned, method: Method) -> list[Any]:
    out = []
    for m in models:
        c = plan.sites[m.name]
        t = c.threshold_tokens if c.threshold_tokens is not None else float(m.lengths.hi)
        out.append(joint.at(m, t, c.n_p, method))
    return out


def evaluate(models: list[Any], plan: Replanned, method: Method) -> Any:
    """The configuration ``plan`` under the sites' service laws ``models`` (a TopologyPoint)."""
    return joint.point(models, _candidates(models, plan, method), [0] * len(models), float(plan.n_prfaas))


def local_only(sc: ScenarioSpec, i: int, method: Method, instances: int | None = None) -> OperatingPoint:
    """PD site i prefilling everything itself at the best split of its instances (or ``instances``)."""
    topo = sc.topology
    cluster: ClusterSpec = topo.sites[i].cluster
    if instances is not None:
        cluster = replace(cluster, instances=instances)
    _, splits = homogeneous_splits(site_scenario(sc, i), cluster, method)
    return max(splits, key=lambda op: op.lambda_max_rps)  # the first best, as api.grid.homogeneous


def down(sc: ScenarioSpec, i: int, models: list[Any], method: Method) -> tuple[Replanned, OperatingPoint]:
    """The plan with site i's link down, and the site's best local-only split."""
    topo = sc.topology
    site = topo.sites[i]
    best = local_only(sc, i, method)
    hi = float(models[i].lengths.hi)
    alone = SiteConfig(threshold_tokens=hi if math.isfinite(hi) else None, n_p=best.n_p, n_d=best.n_d,
                       p_offload=0.0)
    others = [m for j, m in enumerate(models) if j != i]
    if not others:  # the site alone: nothing is left to plan
        return Replanned(lambda_max_rps=best.lambda_max_rps, binding=str(best.binding), sites={site.name: alone},
                         n_prfaas=0), best
    space = search_space(sc)
    _, ob, _, _ = topology.joint_plan(others, space.thresholds, space.n_prfaas, method)
    configs = {sp.site: SiteConfig(threshold_tokens=sp.threshold_tokens, n_p=sp.n_p, n_d=sp.n_d,
                                   p_offload=sp.p_offload) for sp in ob.sites} | {site.name: alone}
    plan = Replanned(lambda_max_rps=0.0, binding="", n_prfaas=round(ob.n_prfaas),
                     sites={s.name: configs[s.name] for s in topo.sites})
    pt = evaluate(models, plan, method)
    return replace(plan, lambda_max_rps=pt.lambda_max_rps, binding=pt.binding), best


def _site_capacity(cap: Any, sp: Any) -> tuple[float, str]:
    """A site's own capacity (req/s of its traffic) and the stage binding it: the tightest of
    its local prefill, link and decode and, if it offloads, its share of the shared compute's
    bound. At a total rate above the fleet's capacity only the sites a diverging stage serves
    are unstable (`latency` flags every site of a topology then)."""
    compute = cap.lambda_max_rps / cap.prfaas_utilization if cap.prfaas_utilization > 0 else None
    named = [(joint.PREFILL, sp.theta_pd_p_rps), (joint.LINK, sp.theta_link_rps), (joint.DECODE, sp.theta_pd_d_rps),
             (joint.COMPUTE, compute * sp.demand_share if compute is not None and sp.p_offload > 0 else None)]
    kind, value = min(((k, v) for k, v in named if v is not None), key=lambda kv: kv[1])
    return value, kind


def system(sc: ScenarioSpec, plan: Replanned) -> TopologySystem:
    """``plan`` as the TopologySystem latency analysis runs, as ``api.systems`` builds PrfaaS-PD:
    capacities by the exact method (what a queue saturates at), each site with its own."""
    topo = sc.topology
    models, timings = site_models(sc)
    cap = evaluate(models, plan, Method.EXACT)
    binding = _named(sc, cap.binding)
    sites = []
    for i, (s, lk, sp) in enumerate(zip(topo.sites, topo.links, cap.sites, strict=True)):
        c = plan.sites[s.name]
        own, kind = _site_capacity(cap, sp) if sc.multi_site else (cap.lambda_max_rps, binding)
        config = site_config(sc, i, timings[i], name=PRFAAS, threshold=c.threshold_tokens, n_prfaas=plan.n_prfaas,
                         n_p=c.n_p, n_d=c.n_d, capacity=own, binding=kind)
        assert s.workload is not None
        sites.append(SiteSystem(site=s.name, link=lk.name, demand_share=s.demand_share, config=config,
                                workload=s.workload))
    return TopologySystem(name=PRFAAS, n_prfaas=plan.n_prfaas, sites=tuple(sites), capacity_rps=cap.lambda_max_rps,
                          capacity_binding=binding)


def _ttft(t: SystemTiming) -> SiteTtft:
    return SiteTtft(ttft_mean_s=t.ttft_mean_s, ttft_p50_s=t.ttft_p50_s, ttft_p90_s=t.ttft_p90_s,
                    ttft_p99_s=t.ttft_p99_s, unstable=", ".join(t.unstable_stages) or None,
                    utilization=max(t.utilization.values(), default=0.0))


# which stages each path passes (a stage named by latency or by a binding, by its first word)
_KIND = {"prfaas": "prfaas", "prfaas-compute": "prfaas", "link": "link", "local": "local", "pd-prefill": "local",
         "decode": "decode"}
_PATH_KINDS = {"prfaas": {"prfaas", "link", "decode"}, "local": {"local", "decode"}}


def attainment(sc: ScenarioSpec, ts: TopologySystem, rate_rps: float, timings: dict[str, SystemTiming],
               bound_s: float, *, nodes: int = NODES) -> dict[str, float]:
    """P(TTFT <= bound_s) per site at the total rate: the share of each stable path minus its tail
    at the bound; a path through an unstable stage meets it for no request. The paths are
    ``api.latency.system_latency``'s (``site_paths``)."""
    _, paths = site_paths(sc, ts, rate_rps, nodes=nodes)
    out = {}
    for s in ts.sites:
        sp = paths[s.site]
        bad = {_KIND.get(u.split(" ")[0], "all") for u in timings[s.site].unstable_stages}
        ok = [p for p in sp.paths if p.share > 0 and "all" not in bad and not bad & _PATH_KINDS.get(p.name, bad)]
        tail = lat.mixture_tail(bound_s, [(p.share, p.p_wait, p.tail_mean_s, p.fixed_s, p.fixed_weights) for p in ok])
        out[s.site] = min(max(sum(p.share for p in ok) - tail, 0.0), 1.0)
    return out


def extra_instances(sc: ScenarioSpec, i: int, method: Method, rate_rps: float) -> tuple[int | None, int | None]:
    """(k, N + k): the fewest instances site i must add so that its best local-only split serves
    ``rate_rps`` of its own traffic; (None, None) past ``MAX_INSTANCES``.

    Every request prefilled locally (t = the longest length), N instances serve
    min(N_p a, (N - N_p) b), a and b one instance's prefill and decode rates: the splits of
    ``api.grid.homogeneous_splits``, of which only those next to the crossing N_p = N b / (a + b)
    are weighed (the bound rises in N_p, decode falls). The best is at most N ab / (a + b) and at
    least that less max(a, b), which brackets N; a bisection over the bracket finds the smallest
    (the best split never serves less as N grows)."""
    topo = sc.topology
    si, cluster = site_scenario(sc, i), topo.sites[i].cluster
    n = cluster.instances
    t = timing(si, cluster.instance)
    r = routing(si.workload.lengths, t.curves, [si.workload.lengths.hi], method)
    b = t.decode_rps_per_instance

    def served(count: int, n_p: int) -> float:
        return operating_point(r, 0, n_prfaas=0, n_p=n_p, n_d=count - n_p, link_bytes_per_s=1.0,
                               decode_rps_per_instance=b).lambda_max_rps

    a = operating_point(r, 0, n_prfaas=0, n_p=1, n_d=1, link_bytes_per_s=1.0,
                        decode_rps_per_instance=b).theta_pd_p_rps or 0.0
    if not (a > 0 and b > 0):
        return None, None
    per = a * b / (a + b)

    def serves(count: int) -> bool:
        x = count * b / (a + b)
        splits = range(max(1, math.floor(x) - 2), min(count - 1, math.ceil(x) + 2) + 1)
        return max(served(count, k) for k in splits) >= rate_rps

    if serves(n):
        return 0, n
    if rate_rps / per > MAX_INSTANCES:  # even a split of fractional instances would need more
        return None, None
    lo = max(n, math.ceil(rate_rps / per) - 2)  # serves at most lo x per < rate_rps (or is N itself)
    hi = min(max(math.ceil((rate_rps + max(a, b)) / per) + 1, lo + 1), MAX_INSTANCES)
    while serves(lo) and lo > n:  # round-off at the bracket's end: step down
        lo -= 1
    while not serves(hi):  # the bracket is arithmetic: widen it rather than trust it
        if hi >= MAX_INSTANCES:
            return None, None
        lo, hi = hi, min(2 * hi, MAX_INSTANCES)
    while hi - lo > 1:  # serves(hi), not serves(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if serves(mid) else (mid, hi)
    return hi - n, hi


def _timed(sc: ScenarioSpec, plan: Replanned, rate_rps: float, bound_s: float | None
           ) -> tuple[dict[str, SiteTtft], dict[str, float] | None]:
    """TTFT per site of ``plan`` at the total rate and, with a bound, the SLO attainment."""
    ts = system(sc, plan)
    timing = system_latency(sc, ts, rate_rps, nodes=NODES)
    slo = attainment(sc, ts, rate_rps, dict(timing.sites), bound_s) if bound_s is not None else None
    return {k: _ttft(t) for k, t in timing.sites.items()}, slo


def _bandwidth_text(bytes_per_s: float) -> str:
    return f"{units.bytes_per_s_to_gbps(bytes_per_s):.12g}Gbps"


def _at_bandwidth(base: patch.Loaded | None, run: _Run, key: str, text: str) -> ScenarioSpec:
    """The scenario with ``--set key=text``: the loaded spec patched, or loaded afresh where a
    patch cannot prove it is the loader's (as `sweep`)."""
    sc = patch.point(base, key, text) if base is not None else None
    return sc if sc is not None else load_scenario(run.ref, run.catalog, overrides=run.overrides, method=run.method,
                                                   points=[grid_point(key, text, "--levels")])


def _check_bandwidths(sc: ScenarioSpec, levels: Sequence[float]) -> None:
    """Every level above 0 is a bandwidth the planner reads on every link, refused before any work
    naming ``--levels`` (5e-324 of 100 Gbps is below the smallest normal float in bytes/s)."""
    for lk in sc.topology.links:
        for level in levels:
            text = _bandwidth_text(level * lk.link.bandwidth_bytes_per_s)
            try:
                if level > 0:
                    units.parse_bandwidth(text)
            except units.UnitError:
                raise SpecError(f"level {level:g} of {lk.name}'s {_bandwidth_text(lk.link.bandwidth_bytes_per_s)} "
                                f"is {text}, too small a bandwidth to compute with ({units.SUBNORMAL} in bytes/s); "
                                "0 is the link down", field="--levels") from None


@dataclass(frozen=True, slots=True)
class _Run:
    """What every link's levels share: the scenario as loaded, its plan, the rate, the patch base."""

    sc: ScenarioSpec
    ref: str | None
    catalog: Any
    overrides: list[str]
    method: str | None
    nominal: Replanned
    rate_rps: float
    base: patch.Loaded | None


def _link(run: _Run, i: int, levels: Sequence[float], reference: dict[str, Any]) -> LinkDegrade:
    sc, nominal = run.sc, run.nominal
    topo = sc.topology
    site, lk = topo.sites[i], topo.links[i]
    m = Method(sc.search.method)
    models, _ = site_models(sc)
    key = lk.setting("bandwidth")
    base = run.base
    nominal_text = _bandwidth_text(lk.link.bandwidth_bytes_per_s)
    if base is not None and not patch.agrees(sc, patch.point(base, key, nominal_text)):
        base = None  # the patch would not rebuild the scenario as loaded: reload each level
    plan_down, alone = down(sc, i, models, m)
    rows = []
    for level in sorted({1.0, *levels}, reverse=True):
        bw = level * lk.link.bandwidth_bytes_per_s
        if level == 1.0:
            spec, plan, static = sc, nominal, evaluate(models, nominal, m)
        elif level > 0:
            spec = _at_bandwidth(base, run, key, _bandwidth_text(bw))
            plan, static = replanned(spec), evaluate(site_models(spec)[0], nominal, m)
        else:  # down: the held routing still sends the site's long requests over it
            spec, plan = sc, plan_down
            static = evaluate(models, nominal, m) if nominal.sites[site.name].p_offload <= 0 else None
        held = Capacity(lambda_max_rps=0.0, binding=_named(sc, f"link {lk.name}")) if static is None else \
            Capacity(lambda_max_rps=static.lambda_max_rps, binding=_named(sc, static.binding))
        if level == 1.0:  # the same for every link
            ttft, slo = reference.setdefault("timed", _timed(spec, plan, run.rate_rps, sc.ttft_slo_s))
        else:
            ttft, slo = _timed(spec, plan, run.rate_rps, sc.ttft_slo_s)
        rows.append(LevelResult(level=level, bandwidth_bytes_per_s=bw, static=held,
                                replanned=replace(plan, binding=_named(sc, plan.binding)), ttft=ttft,
                                slo_attainment=slo))
    need = site.demand_share * run.rate_rps
    extra, needed = extra_instances(sc, i, m, need)
    failure = Failure(site=site.name, instances=site.cluster.instances, capacity_down_rps=alone.lambda_max_rps,
                      binding_down=str(alone.binding), n_p_down=alone.n_p, n_d_down=alone.n_d,
                      lambda_down_rps=plan_down.lambda_max_rps,
                      survivable_load=plan_down.lambda_max_rps / nominal.lambda_max_rps, rate_rps=need,
                      extra_instances=extra, instances_needed=needed)
    return LinkDegrade(link=lk.name, site=site.name, nominal_bandwidth_bytes_per_s=lk.link.bandwidth_bytes_per_s,
                       levels=tuple(rows), failure=failure)


def degrade(ref: str | None, catalog: Any, *, overrides: list[str] | None = None, method: str | None = None,
            levels: Sequence[float] = DEFAULT_LEVELS, rate_rps: float | None = None,
            load: float | None = None) -> DegradeResult:
    """Every link of the scenario at each level of its nominal bandwidth (see the module docstring)."""
    levels = check_levels(levels)
    check(RunArgs(rate_rps=rate_rps, load=load))
    overrides = list(overrides or [])
    sc = load_scenario(ref, catalog, overrides=overrides, method=method)
    topo = sc.topology
    _check_bandwidths(sc, levels)
    nominal = replanned(sc)
    if rate_rps is None:
        rate_rps = (DEFAULT_LOAD if load is None else load) * nominal.lambda_max_rps
    run = _Run(sc=sc, ref=ref, catalog=catalog, overrides=overrides, method=method, nominal=nominal,
               rate_rps=rate_rps, base=patch.loaded(sc, ref, catalog, overrides=overrides, method=method))
    reference: dict[str, Any] = {}
    links = {lk.name: _link(run, i, levels, reference) for i, lk in enumerate(topo.links)}
    bound = sc.ttft_slo_s
    return DegradeResult(scenario=sc.name, model=sc.model.name, method=sc.search.method, rate_rps=rate_rps,
                         load=rate_rps / nominal.lambda_max_rps, nominal_lambda_max_rps=nominal.lambda_max_rps,
                         slo_bound_s=bound, slo_statistic=sc.ttft_statistic if bound is not None else None,
                         sites=tuple(s.name for s in topo.sites), links=links)
