"""The three systems of a topology, configured, and their analytic TTFT per site.

PrfaaS-PD runs at the joint plan's t_i and splits with the shared N_prfaas; homogeneous PD is
each site on its own homogeneous cluster at its best split; naive heterogeneous offloads every
request of every site. Each carries Lambda_max of the exact method at its configuration (the
total rate), what a simulation saturates at. Latency: one FIFO prefill pool shared by every
site's offloaded stream (``core.latency.shared_pool``), and per site its link, local prefill
pool and decode admission (``api.latency.paths_of``).
"""

from __future__ import annotations

from typing import Any

from prfaas_plan.api.latency import as_dict, offload_share, paths_of
from prfaas_plan.api.plan import homogeneous_splits
from prfaas_plan.api.systems import HOMOGENEOUS, NAIVE, PRFAAS
from prfaas_plan.api.topology import plan as topology_plan
from prfaas_plan.api.topology import site_models, site_scenario
from prfaas_plan.core import joint
from prfaas_plan.core import latency as lat
from prfaas_plan.core.roots import bisect
from prfaas_plan.core.stages import offload_all_threshold
from prfaas_plan.core.throughput import Method
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import SystemConfig
from prfaas_plan.specs.topology import SiteSystem, TopologySystem, homogeneous_cluster


def _config(sc: ScenarioSpec, i: int, timing: Any, *, name: str, threshold: float | None, n_prfaas: int, n_p: int,
            n_d: int, capacity: float, binding: str, t_local: Any = None) -> SystemConfig:
    si = site_scenario(sc, i)
    d = timing.decode_detail
    return SystemConfig(name=name, threshold_tokens=threshold, n_prfaas=n_prfaas, n_p=n_p, n_d=n_d,
                        t_prfaas=timing.curves.t_prfaas if n_prfaas > 0 else None,
                        t_local=t_local if t_local is not None else timing.curves.t_local,
                        kv_bytes=timing.curves.s_kv, link_bytes_per_s=si.link.usable_bytes_per_s, rtt_s=si.link.rtt_s,
                        n_layers=sc.model.num_hidden_layers, pipelining=sc.layerwise_pipelining,
                        bs_max=int(d["bs_max"]), t_decode_s=float(d["t_decode_s"]),
                        output_tokens=si.workload.output_tokens, capacity_rps=capacity, capacity_binding=binding)


def _system(sc: ScenarioSpec, name: str, n_prfaas: int, configs: list[SystemConfig], capacity: float,
            binding: str) -> TopologySystem:
    topo = sc.topology
    assert topo is not None
    sites = tuple(SiteSystem(site=s.name, link=lk.name, demand_share=s.demand_share, config=c, workload=s.workload)
                  for s, lk, c in zip(topo.sites, topo.links, configs, strict=True) if s.workload is not None)
    return TopologySystem(name=name, n_prfaas=n_prfaas, sites=sites, capacity_rps=capacity, capacity_binding=binding)


def topology_systems(sc: ScenarioSpec, *, which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE)
                     ) -> dict[str, TopologySystem]:
    topo = sc.topology
    assert topo is not None
    models, timings = site_models(sc)
    out: dict[str, TopologySystem] = {}
    if PRFAAS in which:
        best = topology_plan(sc, methods=(sc.search.method,)).searches[sc.search.method].best
        n = round(best.n_prfaas)
        cap = joint.point(models, [joint.at(m, sp.threshold_tokens, sp.n_p, Method.EXACT)
                                   for m, sp in zip(models, best.sites, strict=True)], [0] * len(models), n)
        configs = [_config(sc, i, timings[i], name=PRFAAS, threshold=sp.threshold_tokens, n_prfaas=n, n_p=sp.n_p,
                           n_d=sp.n_d, capacity=cap.lambda_max_rps * sp.share, binding=cap.binding)
                   for i, sp in enumerate(best.sites)]
        out[PRFAAS] = _system(sc, PRFAAS, n, configs, cap.lambda_max_rps, cap.binding)
    if HOMOGENEOUS in which:
        configs, caps = [], []
        for i, s in enumerate(topo.sites):
            th, splits = homogeneous_splits(site_scenario(sc, i), homogeneous_cluster(s, topo), Method.EXACT)
            op = max(splits, key=lambda o: o.lambda_max_rps)
            configs.append(_config(sc, i, th, name=HOMOGENEOUS, threshold=None, n_prfaas=0, n_p=op.n_p, n_d=op.n_d,
                                   capacity=op.lambda_max_rps, binding=f"{op.binding} {s.name}",
                                   t_local=th.curves.t_local))
            caps.append(op.lambda_max_rps / s.demand_share)
        k = min(range(len(caps)), key=caps.__getitem__)
        out[HOMOGENEOUS] = _system(sc, HOMOGENEOUS, 0, configs, caps[k], configs[k].capacity_binding)
    if NAIVE in which:
        n = topo.prefill.cluster.instances
        cap = joint.point(models, [joint.at(m, offload_all_threshold(m.lengths), 0, Method.EXACT)
                                   for m in models], [0] * len(models), n)
        configs = [_config(sc, i, timings[i], name=NAIVE, threshold=0.0, n_prfaas=n, n_p=0, n_d=s.cluster.instances,
                           capacity=cap.lambda_max_rps * s.demand_share, binding=cap.binding)
                   for i, s in enumerate(topo.sites)]
        out[NAIVE] = _system(sc, NAIVE, n, configs, cap.lambda_max_rps, cap.binding)
    return out


def system_latency(sc: ScenarioSpec, system: TopologySystem, rate_rps: float, *, nodes: int = 2000
                   ) -> dict[str, Any]:
    """Per-site analytic TTFT at the total rate ``rate_rps``, the shared pool's wait included."""
    rates, services = [], []
    for s in system.sites:
        c = s.config
        p = offload_share(s.workload.lengths, c.threshold_tokens)
        if p > 0 and c.t_prfaas is not None:
            grid = lat.Nodes.of(s.workload.lengths, c.threshold_tokens or 0.0, above=True, n=nodes).lengths
            rates.append(rate_rps * s.demand_share * p)
            services.append(c.t_prfaas(grid))
    scv = 1.0 if sc.workload.arrival != "gamma" else sc.workload.arrival_cv**2
    pool = lat.shared_pool(rates, services, system.n_prfaas, scv) if rates else None
    per, laws = {}, []
    for s in system.sites:
        sp = paths_of(site_scenario(sc, _index(sc, s.site)), s.config, rate_rps * s.demand_share, nodes=nodes,
                      pool=pool)
        per[s.site] = as_dict(s.config, rate_rps * s.demand_share, sp) | {"demand_share": s.demand_share}
        laws += [(s.demand_share * path.share, path.p_wait, path.tail_mean_s, path.fixed_s, path.fixed_weights)
                 for path in sp.paths if path.share > 0]
    stable = all(d["stable"] for d in per.values())
    out: dict[str, Any] = {"capacity_rps": system.capacity_rps, "capacity_binding": system.capacity_binding,
                           "rate_rps": rate_rps, "load": rate_rps / system.capacity_rps, "stable": stable,
                           "prfaas_utilization": pool.utilization if pool else 0.0, "n_prfaas": system.n_prfaas,
                           "sites": per}
    if stable:
        out["ttft_mean_s"] = sum(s.demand_share * per[s.site]["ttft_mean_s"] for s in system.sites)
        out |= {f"ttft_p{round(q * 100)}_s": lat.mixture_quantile(q, laws) for q in lat.QUANTILES}
    else:
        out |= {"ttft_mean_s": None, "ttft_p50_s": None, "ttft_p90_s": None, "ttft_p99_s": None}
    return out


def _index(sc: ScenarioSpec, name: str) -> int:
    assert sc.topology is not None
    return next(i for i, s in enumerate(sc.topology.sites) if s.name == name)


def latency(sc: ScenarioSpec, *, rate_rps: float | None = None, load: float | None = None,
            which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE)) -> dict[str, Any]:
    """`latency` of a topology: every system at the same total rate, per site and overall."""
    from prfaas_plan.api.latency import resolve_rate

    systems = topology_systems(sc, which=which)
    rate, load_f = resolve_rate(systems, rate_rps, load)  # type: ignore[arg-type]
    per = {name: system_latency(sc, s, rate) for name, s in systems.items()}
    return {"scenario": sc.name, "model": sc.model.name, "rate_rps": rate, "load": load_f,
            "load_reference": "smallest exact-method Lambda_max among the systems", "systems": per,
            "configs": {name: {"n_prfaas": s.n_prfaas,
                               "sites": {x.site: {"threshold_tokens": x.config.threshold_tokens, "n_p": x.config.n_p,
                                                  "n_d": x.config.n_d} for x in s.sites}}
                        for name, s in systems.items()}}


BISECTIONS = 20


def _meets(sc: ScenarioSpec, system: TopologySystem, rate: float, bound: float, stat: str) -> bool:
    r = system_latency(sc, system, rate, nodes=400)
    key = "ttft_mean_s" if stat == "mean" else f"ttft_{stat}_s"
    return r["stable"] and all(d[key] is not None and d[key] <= bound for d in r["sites"].values())


def ttft_slo(sc: ScenarioSpec) -> dict[str, Any]:
    """The largest total rate at which every site of each system meets the TTFT SLO, the systems
    held at their throughput configurations (the search over configurations under the SLO covers
    one PD site: ``api.slo``)."""
    bound, stat = sc.ttft_slo_s, sc.ttft_statistic
    assert bound is not None
    out: dict[str, Any] = {"bound_s": bound, "statistic": stat, "every_site": True,
                           "configuration": "each system's throughput-best, held"}
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
        out[name] = {"lambda_ttft_rps": lo, "capacity_rps": system.capacity_rps, "load": lo / system.capacity_rps,
                     "binding": "ttft" if lo < cap * (1 - 1e-4) else system.capacity_binding,
                     "sites": {k: {q: d[q] for q in ("ttft_mean_s", "ttft_p90_s", "ttft_p99_s")}
                               for k, d in r["sites"].items()}}
    hom, pr = out.get(HOMOGENEOUS), out.get(PRFAAS)
    out["ratios"] = {"prfaas_vs_homogeneous": pr["lambda_ttft_rps"] / hom["lambda_ttft_rps"] if pr and hom else None}
    return out
