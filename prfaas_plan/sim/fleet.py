"""Discrete-event simulation of several models sharing one prefill service (docs/model.md#several-models).

Each entry (a model at a PD site) is a ``sim.site.Site``: its own stream at w x Lambda from its
own workload, its own PD-P pool and decode slots. Its offloaded requests go to its own pool of
the service (a FIFO of the a_e instances holding its model for it, as the plan assigns them; an
instance holds one model), and their KV
crosses its site's one link, which every model at the site shares (processor sharing of all their
transfers). Everything else is ``sim.topology``'s run: one engine, one window for every entry.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from prfaas_plan.sim.driver import SERIES_POINTS, Saturation, check_bounds
from prfaas_plan.sim.entities import Pool
from prfaas_plan.sim.policies import make_source
from prfaas_plan.sim.result import TopologySimResult
from prfaas_plan.sim.site import Site, Snap, pool_snap, pool_window
from prfaas_plan.sim.stations import SharedLink
from prfaas_plan.sim.topology import Stages, TopologyEngineRun, link_rps, run_length, saturation_of
from prfaas_plan.specs.fleet import FleetSystem
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.topology import TopologySystem

__all__ = ["saturation_fleet", "simulate_fleet"]


class _FleetRun(TopologyEngineRun):
    """A topology run whose PrfaaS pools are per model and whose links are per physical site."""

    kernel_ready = False  # the fast path's stations are one pool and a link per site

    def __init__(self, system: FleetSystem, sources: list, **kw) -> None:
        self.fleet = system
        self.pools: dict[str, Pool] = {}
        self.links: dict[str, SharedLink] = {}
        self.bandwidth = dict(system.links)
        self.instances = dict(system.pools)
        as_topology = TopologySystem(name=system.name, n_prfaas=0, sites=system.entries,
                                     capacity_rps=system.capacity_rps, capacity_binding=system.capacity_binding)
        super().__init__(as_topology, sources, **kw)
        self.n_prfaas = sum(self.instances.values())

    def prefill_pool(self, site: Site) -> Pool | None:
        n = self.instances.get(site.name, 0)
        if n <= 0:
            return None
        pool = self.pools[site.name] = Pool(self.engine, f"prfaas:{site.name}", n, self._prefill_done_p,
                                            self._prefill_start_p)
        return pool

    def site_link(self, site: Site, window_s: float) -> SharedLink:
        name = site.spec.link
        if name not in self.links:
            self.links[name] = SharedLink(self.engine, self.bandwidth[name], lambda r: r.site._link_done(r),
                                          window_s=window_s, records=False)
        return self.links[name]

    def snapshot(self) -> Snap:
        now = self.engine.now
        s: Snap = {"t": now, "admitted": sum(site.decode.admitted for site in self.sites)}
        for pool in self.pools.values():
            pool_snap(pool, now, s)
        for name, link in self.links.items():
            s[f"link {name}"] = link.bytes_carried
        s["sites"] = [site.snapshot(now) for site in self.sites]
        return s

    def result(self, rate_rps: float, wall_s: float, cpu_s: float, drain: bool) -> TopologySimResult:
        a, b = self.snaps[0], self.snaps[-1]
        if drain and self.end is not None and self.end["t"] > b["t"]:
            b = self.end
        span = b["t"] - a["t"]
        windows = {m: pool_window(a, b, p.name, span) for m, p in self.pools.items()}
        stats = {"events": self.engine.events_processed, "wall_s": wall_s, "cpu_s": cpu_s}
        sites = {s.name: s.result(a["sites"][k], b["sites"][k], span,
                                  windows.get(s.name, (None, None, None)), stats)
                 for k, s in enumerate(self.sites)}
        stage, share, busy = self._stages(a, b, windows, sites)
        busy_all = [(w[1], self.instances[m]) for m, w in windows.items() if w[1] is not None]
        util = sum(u * n for u, n in busy_all) / sum(n for _, n in busy_all) if busy_all else None
        paths = {k: h for k, h in self.hist_path.items() if h.n}
        return TopologySimResult(
            system=self.name, rate_rps=rate_rps, requests=self.arrived, measured=self.n_measured,
            completed=self.hist.n, span_s=span,
            throughput_rps=(b["admitted"] - a["admitted"]) / span if span > 0 else None, ttft=self.hist,
            ttft_paths=paths, prfaas_utilization=util, prfaas_mean_queue=None, stage_rps=stage,
            stage_share=share, stage_utilization=busy, sites=sites, **stats)

    def _stages(self, a: Snap, b: Snap, windows: dict, sites: dict) -> Stages:  # type: ignore[override]
        """Each stage's completions/s, share of all arrivals through it and busy fraction: every
        model's pool, every link (bytes/s over the bytes an arrival brings), every entry's local
        prefill and decode."""
        n = len(self.sites)
        off = [b["sites"][k]["routed_prfaas"] - a["sites"][k]["routed_prfaas"] for k in range(n)]
        loc = [b["sites"][k]["routed_local"] - a["sites"][k]["routed_local"] for k in range(n)]
        kv_in = [b["sites"][k]["kv_in"] - a["sites"][k]["kv_in"] for k in range(n)]
        total = sum(off) + sum(loc) or 1
        span = b["t"] - a["t"]
        rows: list[tuple[str, float | None, float, float | None]] = []
        for k, s in enumerate(self.sites):
            if s.name in windows:
                w = windows[s.name]
                rows.append((f"prfaas:{s.name}", w[0], off[k] / total, w[1]))
        for name, link in self.links.items():
            ks = [k for k, s in enumerate(self.sites) if s.link is link]
            carried = (b[f"link {name}"] - a[f"link {name}"]) / span if span > 0 else 0.0
            o, kv = sum(off[k] for k in ks), sum(kv_in[k] for k in ks)
            rows.append((f"link {name}", link_rps(carried, o, kv), o / total, carried / link.bandwidth))
        res = [sites[s.name] for s in self.sites]
        rows += [(f"{s.name}:local", r.stage_rps["local"], loc[k] / total, r.utilization["local"])
                 for k, (s, r) in enumerate(zip(self.sites, res, strict=True)) if s.pool_l is not None]
        rows += [(f"{s.name}:decode", r.stage_rps["decode"], (off[k] + loc[k]) / total, r.utilization["decode"])
                 for k, (s, r) in enumerate(zip(self.sites, res, strict=True))]
        return ({k: v for k, v, _, _ in rows}, {k: v for k, _, v, _ in rows}, {k: v for k, _, _, v in rows})


def simulate_fleet(scs: list[ScenarioSpec], system: FleetSystem, *, rate_rps: float, n_requests: int | None = None,
                   duration_s: float | None = None, rng: np.random.Generator, warmup_fraction: float = 0.1,
                   drain: bool = True) -> TopologySimResult:
    """Simulate the fleet at total arrival rate ``rate_rps``; ``scs``: each entry's scenario (its
    model's, at its site's workload)."""
    check_bounds(rate_rps, n_requests, duration_s, warmup_fraction)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    per = [replace(sc, workload=e.workload) for sc, e in zip(scs, system.entries, strict=True)]
    n_total = run_length(per, n_requests, duration_s)
    sources = []
    for e, sc in zip(system.entries, per, strict=True):
        trace = sc.workload.trace
        n_i = None if n_total is None else min(n_total, len(trace)) if trace is not None else n_total
        sources.append(make_source(sc, e.config, rng, rate_rps=e.demand_share * rate_rps, n_requests=n_i,
                                   duration_s=duration_s, warmup_fraction=warmup_fraction))
    horizon = duration_s if duration_s is not None else (n_total or 0) / rate_rps
    warm_n = None if n_total is None else min(int(warmup_fraction * n_total), n_total - 1)
    run = _FleetRun(system, sources, n_total=n_total, warm_n=warm_n, warm_t=warmup_fraction * (duration_s or 0.0),
                    window_s=max(1.0, horizon / SERIES_POINTS))
    run.run(None, drain)
    return run.result(rate_rps, time.perf_counter() - wall0, time.process_time() - cpu0, drain)


def saturation_fleet(scs: list[ScenarioSpec], system: FleetSystem, rng: np.random.Generator,
                     n_requests: int = 20_000, *, overload: float = 1.5) -> Saturation:
    """The fleet fed at ``overload`` x its capacity: the sustained total Lambda, as
    ``sim.topology.saturation_topology`` estimates it (each saturated stage's rate over its share)."""
    rate = overload * system.capacity_rps
    return saturation_of(simulate_fleet(scs, system, rate_rps=rate, n_requests=n_requests, rng=rng, drain=False))
