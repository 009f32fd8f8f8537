"""The three systems a scenario compares, built as topologies (``specs.topology.TopologySystem``).

PrfaaS-PD runs at the throughput plan's t_i and splits with the shared N_prfaas (the one-site
search for one PD site, the joint search for several); homogeneous PD is each site on its own
homogeneous cluster at its best split (the scenario's baseline cluster for one PD site);
naive heterogeneous offloads every request of every site. Each carries Lambda_max of the exact
method at its configuration (the stage-bounds kernel, ``core.joint.point``), which is what a
simulation saturates at. ``systems`` gives a one-site scenario's systems as the site's
``SystemConfig``, what the one-site latency model and simulator take.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from prfaas_plan.api.grid import homogeneous_splits
from prfaas_plan.api.headline import headline
from prfaas_plan.api.topology import site_models, site_scenario
from prfaas_plan.core import joint
from prfaas_plan.core.stages import offload_all_threshold
from prfaas_plan.core.throughput import Method
from prfaas_plan.specs.results import stage_name
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import SystemConfig
from prfaas_plan.specs.topology import SiteSystem, TopologySystem, homogeneous_cluster

PRFAAS, HOMOGENEOUS, NAIVE = "prfaas", "homogeneous", "naive_heterogeneous"


def systems(sc: ScenarioSpec, *, which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE)) -> dict[str, SystemConfig]:
    """The configurations of the systems a one-site scenario compares (those it defines)."""
    assert not sc.multi_site, "a topology of several sites: topology_systems"
    return {name: ts.sites[0].config for name, ts in topology_systems(sc, which=which).items()}


def site_config(sc: ScenarioSpec, i: int, timing: Any, *, name: str, threshold: float | None, n_prfaas: int, n_p: int,
            n_d: int, capacity: float, binding: str, t_local: Any = None) -> SystemConfig:
    si = site_scenario(sc, i)
    d = timing.decode_shape
    return SystemConfig(name=name, threshold_tokens=threshold, n_prfaas=n_prfaas, n_p=n_p, n_d=n_d,
                        t_prfaas=timing.curves.t_prfaas if n_prfaas > 0 else None,
                        t_local=t_local if t_local is not None else timing.curves.t_local,
                        kv_bytes=timing.curves.s_kv, link_bytes_per_s=si.link.usable_bytes_per_s, rtt_s=si.link.rtt_s,
                        handoff_s=si.link.handoff_s,
                        n_layers=sc.model.num_hidden_layers, pipelining=sc.layerwise_pipelining,
                        bs_max=int(d.bs_max), t_decode_s=float(d.t_decode_s),
                        output_tokens=si.workload.output_tokens, capacity_rps=capacity, capacity_binding=binding)


def topology_system(sc: ScenarioSpec, name: str, n_prfaas: int, configs: list[SystemConfig], capacity: float,
            binding: str) -> TopologySystem:
    topo = sc.topology
    sites = tuple(SiteSystem(site=s.name, link=lk.name, demand_share=s.demand_share, config=c, workload=s.workload)
                  for s, lk, c in zip(topo.sites, topo.links, configs, strict=True) if s.workload is not None)
    return TopologySystem(name=name, n_prfaas=n_prfaas, sites=sites, capacity_rps=capacity, capacity_binding=binding)


def topology_systems(sc: ScenarioSpec, *, which: tuple[str, ...] = (PRFAAS, HOMOGENEOUS, NAIVE)
                     ) -> dict[str, TopologySystem]:
    topo = sc.topology
    models, timings = site_models(sc)
    out: dict[str, TopologySystem] = {}
    if PRFAAS in which:
        plan = headline(sc).point
        n = round(plan.n_prfaas)
        cap = joint.point(models, [joint.at(m, sp.threshold_tokens, sp.n_p, Method.EXACT)
                                   for m, sp in zip(models, plan.sites, strict=True)], [0] * len(models), n)
        configs = [site_config(sc, i, timings[i], name=PRFAAS, threshold=sp.threshold_tokens, n_prfaas=n, n_p=sp.n_p,
                           n_d=sp.n_d, capacity=cap.lambda_max_rps * sp.demand_share, binding=cap.stage)
                   for i, sp in enumerate(cap.sites)]
        out[PRFAAS] = topology_system(sc, PRFAAS, n, configs, cap.lambda_max_rps, cap.stage)
    clusters = homogeneous_clusters(sc)
    if HOMOGENEOUS in which and clusters is not None:
        configs, caps = [], []
        for i, (s, cluster) in enumerate(zip(topo.sites, clusters, strict=True)):
            th, splits = homogeneous_splits(site_scenario(sc, i), cluster, Method.EXACT)
            op = max(splits, key=lambda o: o.lambda_max_rps)
            configs.append(site_config(sc, i, th, name=HOMOGENEOUS, threshold=None, n_prfaas=0, n_p=op.n_p, n_d=op.n_d,
                                   capacity=op.lambda_max_rps,
                                   binding=stage_name(f"{op.binding} {s.name}", len(topo.sites)),
                                   t_local=th.curves.t_local))
            caps.append(op.lambda_max_rps / s.demand_share)
        k = min(range(len(caps)), key=caps.__getitem__)
        out[HOMOGENEOUS] = topology_system(sc, HOMOGENEOUS, 0, configs, caps[k], configs[k].capacity_binding)
    if NAIVE in which and (sc.naive_heterogeneous or topo.multi_site):
        n = topo.prefill.cluster.instances
        cap = joint.point(models, [joint.at(m, offload_all_threshold(m.lengths), 0, Method.EXACT)
                                   for m in models], [0] * len(models), n)
        configs = [replace(site_config(sc, i, timings[i], name=NAIVE, threshold=0.0, n_prfaas=n, n_p=0,
                                   n_d=s.cluster.instances, capacity=cap.lambda_max_rps * s.demand_share,
                                   binding=cap.stage), t_local=None)  # nothing prefills locally
                   for i, s in enumerate(topo.sites)]
        out[NAIVE] = topology_system(sc, NAIVE, n, configs, cap.lambda_max_rps, cap.stage)
    return out


def homogeneous_clusters(sc: ScenarioSpec) -> list[Any] | None:
    """Homogeneous PD per site: the scenario's baseline cluster for one PD site (none if it has
    none), each site's own instances plus its share of the prefill GPUs for several."""
    topo = sc.topology
    if not topo.multi_site:
        return None if sc.homogeneous is None else [sc.homogeneous]
    return [homogeneous_cluster(s, topo) for s in topo.sites]
