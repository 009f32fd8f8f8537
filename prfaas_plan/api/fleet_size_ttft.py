"""`size` of several models under their TTFT SLOs: the throughput-sized fleet checked against each
model's analytic TTFT at the demand (``api.fleet_latency``), and sized again with less headroom
until every model meets its SLO.

The fleet bought at headroom h is put into each model's scenario (the service's kind and
instances, each site's kind and instances, each link at its tier), planned for throughput
(``api.fleet``) and timed at the demand D; a model misses when its TTFT statistic is above its
``slo.ttft``. The headroom then falls by ``STEP`` (the stages sized for D / h with a smaller h:
more instances, less queueing) until every model meets its bound or ``STEPS`` tries pass. This
is the cheapest fleet at the largest headroom that meets the SLOs, not the cheapest fleet over
every configuration that would: a tighter search is the one-model `size`'s (``api.size_ttft``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from prfaas_plan.specs.fleet import FleetSpec
from prfaas_plan.specs.scenario import DecodeSpec, ScenarioSpec
from prfaas_plan.specs.topology import ClusterSpec, TopologySpec

STEP = 0.9  # the headroom's factor per try
STEPS = 20  # 0.8 x 0.9^20 = 0.1: at most ten times the throughput sizing's target rate
NO_LINK_BYTES_PER_S = 1.0  # a site that buys no link: nothing crosses (a plan cannot lean on it)


def _cluster(option: Any, instances: int) -> ClusterSpec:
    return ClusterSpec(instance=option.instance, instances=instances, price_per_gpu_hour=option.price_per_gpu_hour)


def bought(sc: ScenarioSpec, pre: Any, n_prfaas: int, sites: dict[str, Any], counts: dict[str, int],
           tiers: tuple) -> ScenarioSpec:
    """``sc`` on the fleet bought: the service (``pre`` x ``n_prfaas``), each site's pick (its local
    kind and ``counts`` instances) and each link at its tier."""
    topo = sc.topology
    pre_c = _cluster(pre, max(n_prfaas, 1)) if pre is not None else topo.prefill.cluster
    new_sites, new_links = [], []
    for s, lk in zip(topo.sites, topo.links, strict=True):
        pick = sites[s.name]
        new_sites.append(replace(s, cluster=_cluster(pick.local, counts[s.name])))
        tier = tiers[pick.tier] if pick.tier is not None else None
        link = replace(lk.link, bandwidth_bytes_per_s=tier.bandwidth_bytes_per_s if tier else NO_LINK_BYTES_PER_S,
                       usable_fraction=tier.usable_fraction if tier and tier.usable_fraction is not None
                       else lk.link.usable_fraction)
        new_links.append(replace(lk, link=link))
    topo2 = TopologySpec(prefill=replace(topo.prefill, cluster=pre_c), sites=tuple(new_sites), links=tuple(new_links))
    own = sc.local.instance
    decode = sc.decode
    if decode.pinned and any(c.cluster.instance != own for c in new_sites):  # a pin measures its own kind only
        decode = DecodeSpec(memory_fraction=decode.memory_fraction)
    return replace(sc, topology=topo2, decode=decode)


def misses(fs: FleetSpec, demand: float) -> list[tuple[str, str, float | None, float]]:
    """(model, statistic, its TTFT at the demand, its bound) of every model with a TTFT SLO, under
    the throughput plan of the fleet ``fs`` holds; a TTFT of None: unstable at the demand."""
    from prfaas_plan.api.context import planning
    from prfaas_plan.api.fleet_latency import system_latency
    from prfaas_plan.api.fleet_sim import SHARED, fleet_systems

    with planning(fresh=True):
        system, scs = fleet_systems(fs)[SHARED]
        t = system_latency(system, scs, demand)
    out = []
    by_name = {m.name: m.scenario for m in fs.models}
    for label, et in t.entries.items():
        sc = by_name[t.models[label]]
        if sc.ttft_slo_s is not None:
            out.append((label, sc.ttft_statistic, et.statistic(sc.ttft_statistic) if et.stable else None,
                        sc.ttft_slo_s))
    return out
