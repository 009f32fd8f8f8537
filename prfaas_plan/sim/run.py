"""Discrete-event simulation of one system (PrfaaS-PD or a baseline) serving a scenario's workload:
the topology engine (``sim.topology``) on one PD site, with its control loops, replayed series
and records where asked.

Model (docs/model.md#latency-and-queueing; docs/model.md#the-prfaas-architecture to #throughput-model):

- Requests: parametric lengths ``sc.workload.lengths.sample`` (uncached) with fixed output
  length, Poisson or Gamma-renewal arrivals at ``rate_rps``; or a trace replayed request by
  request (timestamps scaled so that the replayed window, its first arrival to its last,
  arrives at ``rate_rps`` when given; per-request output lengths).
- Routing (threshold rule): uncached length l > t goes to the PrfaaS pool, else to the local
  PD-P pool. Each pool is N FIFO instances; service T_prefill(l) of the pool's instance type.
- Link: offloaded requests ship ``kv_bytes(l)`` bytes over one processor-sharing link at the
  usable bandwidth (fair TCP sharing). With layer-wise pipelining the first n_layers - 1 layers
  start crossing when the first layer is computed (prefill start + T/n_layers) and the last
  layer's share (1/n_layers of the bytes) is sent once the prefill has ended and the earlier
  layers are across; so the exposed transfer is max(last layer, whole transfer - (n-1)/n T) as in
  the analytic model, with contention from the other transfers included. (Approximation: bytes
  of the early layers may cross before the layer that produces them is computed when the link is
  faster than the prefill; only the last layer is held back.) The RTT is added once. Local
  requests move KV over intra-cluster RDMA, taken as instantaneous.
- Decode: N_d x BS_max continuous-batching slots, FIFO admission once the KV is there; a request
  holds its slot for output_tokens x T_decode. TTFT = arrival to decode admission (the first
  token is produced at admission); TPOT = T_decode, the pinned step at BS_max.
- Prefix caches (traces): one block cache per cluster (512-token blocks, LRU at the scenario's
  ``cache_capacity_gib`` if set), updated when a request is routed; the PD cluster's gets every
  request (its KV ends up there), the PrfaaS cluster's only the offloaded ones. Bandwidth-scarce:
  l = l_total - l_pd_cached decides the route; an offloaded request is computed from what the
  PrfaaS cache lacks (l_total - l_prfaas_cached tokens). Bandwidth-abundant: l = l_total -
  max(l_pd_cached, l_prfaas_cached) is both the route length and what is computed; the cluster
  holding less of the prefix first receives the gap's KV (KV bytes per token x gap; the constant
  linear/SWA state is not reusable across clusters and is not part of it) over the same link,
  whichever the direction (one shared link: conservative for a full-duplex line). In both modes
  an offloaded request then ships S_kv(l_total - l_pd_cached), what the PD side lacks, state
  included. T_prefill is a function of the computed length only, as in the planner.
- Metrics (memory flat in the number of requests unless ``records``): TTFT in fixed log-spaced
  histograms plus exact means; the first ``warmup_fraction`` of requests are not measured. Time
  averages, rates and the throughput are over one window, [arrival of the first measured
  request, last decode admission] (or the last arrival, if no request is admitted after it):
  it holds at least one TTFT (> 0), so it is never 0, even for 2 requests or a trace whose
  arrivals all fall at one instant, and in steady state its drain tail is a TTFT or so of a
  long run. Throughput counts decode admissions (each request completes a fixed decode time
  later, so in steady state this is the completion rate); overloaded, it is the rate the
  bottleneck sustains. A trace's prefix hit rate is the PD cluster's cache hits over every
  replayed request (the optimizer's replay, equal to it on the same requests); the tokens the
  measured requests did not prefill, from either cluster's cache, are ``recompute_avoided_rate``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from prfaas_plan.sim.replay import timeline
from prfaas_plan.sim.result import SimResult
from prfaas_plan.sim.topology import play
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import ControlConfig, SystemConfig
from prfaas_plan.specs.topology import SiteSystem, TopologySystem

__all__ = ["one_site", "simulate"]


def one_site(sc: ScenarioSpec, system: SystemConfig) -> TopologySystem:
    """``system`` as the topology of one PD site (the two-cluster form's names)."""
    return TopologySystem(name=system.name, n_prfaas=system.n_prfaas, capacity_rps=system.capacity_rps,
                          capacity_binding=system.capacity_binding,
                          sites=(SiteSystem(site="local", link="prfaas->local", demand_share=1.0, config=system,
                                            workload=sc.workload),))


def simulate(sc: ScenarioSpec, system: SystemConfig, *, rate_rps: float | None, n_requests: int | None = None,
             duration_s: float | None = None, rng: np.random.Generator, records: bool = False,
             warmup_fraction: float = 0.1, control: ControlConfig | None = None,
             progress: Callable[[int], None] | None = None, drain: bool = True,
             replay: dict[str, Any] | None = None, fast: bool = True) -> SimResult:
    """Simulate ``system`` serving the scenario's workload at ``rate_rps`` (req/s).

    ``n_requests`` or ``duration_s`` (seconds of arrivals) bound the run; neither: 20,000
    requests, or the whole trace. A trace is replayed at its own pace unless ``rate_rps`` is
    given. ``drain`` False stops soon after the last arrival (saturation runs) instead of serving
    every request. ``progress(arrived)`` is called every few thousand events. ``replay``: a
    bandwidth series and a router policy (``sim.replay``: keys series, policy, lookup, window_s,
    rate_window_s); the result then has a ``timeline``. ``fast`` False plays a run that the fast
    path (``sim.fast``) would take through the engine and the entities instead: the same result,
    bit for bit, more slowly (the reference the tests hold it against).
    """
    run, out = play(sc, one_site(sc, system), rate_rps=rate_rps, n_requests=n_requests, duration_s=duration_s,
                    rng=rng, warmup_fraction=warmup_fraction, progress=progress, drain=drain, records=records,
                    control=control, replay=replay, fast=fast)
    site = run.sites[0]
    res = replace(out.sites["local"], system=system.name)
    if replay is not None:
        src = site.src
        seen = np.array(site.seen, dtype=np.float64).reshape(-1, 4)
        res = replace(res, timeline=timeline(
            seen[:, 0], seen[:, 1], seen[:, 2] > 0, seen[:, 3], replay["window_s"], src.horizon_s,
            bound_s=sc.ttft_slo_s, series=replay["series"],
            window_bytes=site.link.window_bytes(max(math.ceil(src.horizon_s / replay["window_s"]), 1)),
            fixed_bytes_per_s=system.link_bytes_per_s))
    return res
