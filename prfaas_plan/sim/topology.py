"""Discrete-event simulation of a topology: several PD sites sharing one PrfaaS prefill pool.

Model (docs/model.md#several-pd-sites; each site's path is ``sim.run``'s, through the same ``KvPath``):

- Arrivals: PD site i has its own stream at demand_share_i x Lambda (``rate_rps`` is the total
  Lambda) from its own workload, by ``make_source``: parametric, or its own trace (time-scaled to
  its rate) replayed through its own prefix caches. The streams merge in one engine; a run takes
  the first ``n_requests`` arrivals of the merged stream (default 20,000, or every site's whole
  trace when every site replays one), or those before ``duration_s``. The first
  ``warmup_fraction`` of them (of the duration) are not measured.
- Routing: site i sends uncached length l > t_i to the shared PrfaaS pool (N_prfaas FIFO
  instances, one queue for every site's offloaded requests; service T_prfaas,i(l) of the
  request's own site), the rest to its own PD-P pool (N_p,i). An offloaded request's KV (S_kv,i)
  crosses its own site's link (processor sharing, layer-wise pipelining, RTT), then waits for one
  of the site's N_d,i x BS_max decode slots.
- Metrics: one window for every site, [first measured arrival, last decode admission at any site
  after the last arrival] (undrained runs: the last arrival); per site what a ``SimResult``
  holds, for the topology its TTFT over every site, the shared pool's utilisation and each
  stage's rate, share and busy fraction. One system of the two-cluster form is one site of share
  1 (``sim.run.simulate``).
- Control loops (``ControlConfig``), a replayed bandwidth series with its router (``sim.replay``)
  and per-request records are each site's own (``sim.site``); ``api.sim`` asks for them on one PD
  site. A plain run of one PD site (none of them) is played by the fast path (``sim.fast``,
  ``sim.kernel``), compiled where it was built, the same run bit for bit.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from prfaas_plan.errors import SpecError
from prfaas_plan.sim import fast as fast_path
from prfaas_plan.sim.driver import SERIES_POINTS, STEP, TIE_RTOL, Saturation, check_bounds, drive
from prfaas_plan.sim.engine import Engine
from prfaas_plan.sim.entities import Hist, Pool
from prfaas_plan.sim.policies import ParamSource, TraceSource, make_source
from prfaas_plan.sim.result import SimResult, TopologySimResult
from prfaas_plan.sim.site import Site, SiteReq, Snap, Window, pool_snap, pool_window
from prfaas_plan.sim.stations import SharedLink
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import ControlConfig, SystemConfig
from prfaas_plan.specs.topology import SiteSystem, TopologySystem

__all__ = ["TopologySimResult", "play", "saturation_throughput", "saturation_topology", "simulate_topology"]

_DEFAULT_REQUESTS = 20_000
SATURATED = 0.98  # saturation: a stage busy at least this much limits; the others pass what they get
Stages = tuple[dict[str, float | None], dict[str, float], dict[str, float | None]]


class TopologyEngineRun:
    """One run: the engine, the shared PrfaaS pool, the sites, and the window's snapshots.
    ``kernel_ready``: its stations are the fast path's (one prefill pool, a link per site)."""

    kernel_ready = True

    def __init__(self, system: TopologySystem, sources: list[ParamSource | TraceSource], *,
                 n_total: int | None, warm_n: int | None, warm_t: float, window_s: float,
                 records: bool = False, control: ControlConfig | None = None,
                 replay: dict[str, Any] | None = None) -> None:
        self.engine = Engine()
        self.name = system.name
        self.n_prfaas = system.n_prfaas
        any_t = any(s.config.t_prfaas is not None for s in system.sites)
        self.pool_p = Pool(self.engine, "prfaas", system.n_prfaas, self._prefill_done_p, self._prefill_start_p) \
            if system.n_prfaas > 0 and any_t else None
        self.n_total, self.warm_n, self.warm_t = n_total, warm_n, warm_t
        self.sites = [Site(self, spec, src, window_s, records=records, control=control, replay=replay)
                      for spec, src in zip(system.sites, sources, strict=True)]
        self.hist = Hist()
        self.hist_path = {"prfaas": Hist(), "local": Hist()}
        self.arrived = self.n_measured = 0
        self.open = 0  # sites still arriving
        self.done_arriving = False
        self.snaps: list[Snap] = []
        self.end: Snap | None = None  # snapshot at the last admission after the last arrival

    def prefill_pool(self, site: Site) -> Pool | None:
        """The PrfaaS pool a site offloads to: the one shared pool."""
        return self.pool_p

    def site_link(self, site: Site, window_s: float) -> SharedLink:
        """A site's link: its own."""
        return SharedLink(self.engine, site.system.link_bytes_per_s, site._link_done, window_s=window_s, records=False)

    @staticmethod
    def _prefill_start_p(r: SiteReq) -> None:
        r.site._prefill_start_p(r)

    @staticmethod
    def _prefill_done_p(r: SiteReq) -> None:
        site = r.site
        site.prfaas_done += 1
        site._prefill_done_p(r)

    def measured(self, now: float) -> bool:
        """The merged stream's warm-up: its first warm_n arrivals (or those before warm_t)."""
        return self.arrived >= self.warm_n if self.warm_n is not None else now >= self.warm_t

    def full(self) -> bool:
        return self.n_total is not None and self.arrived >= self.n_total

    def site_done(self) -> None:
        """A site has no more arrivals; a full run stops every site's stream."""
        self.open -= 1
        if self.full():
            for site in self.sites:
                if site.pending is not None:
                    Engine.cancel(site.pending)
                    site.pending = None
            self.open = 0
        if self.open == 0:
            self.done_arriving = True
            self.snaps.append(self.snapshot())

    def snapshot(self) -> Snap:
        now = self.engine.now
        s: Snap = {"t": now, "admitted": sum(site.decode.admitted for site in self.sites)}
        if self.pool_p is not None:
            pool_snap(self.pool_p, now, s)
        s["sites"] = [site.snapshot(now) for site in self.sites]
        return s

    def run(self, progress: Callable[[int], None] | None, drain: bool, fast: bool = True) -> None:
        """Play the run: a plain one-site run on the fast path (``sim.fast``), else on the engine."""
        if fast and fast_path.plain(self):
            fast_path.implementation().run_plain(self, progress, drain, STEP)
            return
        for site in self.sites:
            self.open += site.start()
        drive(self.engine, progress, lambda: self.arrived, lambda: not drain and self.done_arriving)

    def result(self, rate_rps: float, wall_s: float, cpu_s: float, drain: bool) -> TopologySimResult:
        """The window's statistics; undrained (saturation), the window ends at the last arrival, so
        a stage that keeps up is measured at its feed and not over the drain after it."""
        a, b = self.snaps[0], self.snaps[-1]
        if drain and self.end is not None and self.end["t"] > b["t"]:
            b = self.end
        span = b["t"] - a["t"]
        shared = pool_window(a, b, "prfaas", span) if self.pool_p is not None else (None, None, None)
        stats = {"events": self.engine.events_processed, "wall_s": wall_s, "cpu_s": cpu_s}
        sites = {s.name: s.result(a["sites"][k], b["sites"][k], span, shared, stats)
                 for k, s in enumerate(self.sites)}
        stage, share, busy = self._stages(a, b, shared, sites)
        has = {"prfaas": any(s.pool_p is not None for s in self.sites),
               "local": any(s.pool_l is not None for s in self.sites)}
        paths = {k: h for k, h in self.hist_path.items() if has[k]}
        return TopologySimResult(
            system=self.name, rate_rps=rate_rps, requests=self.arrived, measured=self.n_measured,
            completed=self.hist.n, span_s=span,
            throughput_rps=(b["admitted"] - a["admitted"]) / span if span > 0 else None, ttft=self.hist,
            ttft_paths=paths, prfaas_utilization=shared[1], prfaas_mean_queue=shared[2], stage_rps=stage,
            stage_share=share, stage_utilization=busy, sites=sites, **stats)

    def _stages(self, a: Snap, b: Snap, shared: Window, sites: dict[str, SimResult]) -> Stages:
        """Each stage's completions/s, the fraction of all arrivals in the window through it, and
        its busy fraction; upstream first (prfaas, every SITE:local, SITE:link, SITE:decode)."""
        n = len(self.sites)
        off = [b["sites"][k]["routed_prfaas"] - a["sites"][k]["routed_prfaas"] for k in range(n)]
        loc = [b["sites"][k]["routed_local"] - a["sites"][k]["routed_local"] for k in range(n)]
        total = sum(off) + sum(loc) or 1
        rows: list[tuple[str, float | None, float, float | None]] = []  # stage, rate, share, busy
        if self.pool_p is not None:
            rows.append(("prfaas", shared[0], sum(off) / total, shared[1]))
        res = [sites[s.name] for s in self.sites]
        rows += [(f"{s.name}:local", r.stage_rps["local"], loc[k] / total, r.utilization["local"])
                 for k, (s, r) in enumerate(zip(self.sites, res, strict=True)) if s.pool_l is not None]
        kv_in = [b["sites"][k]["kv_in"] - a["sites"][k]["kv_in"] for k in range(n)]
        rows += [(f"{s.name}:link", _link_rps(r, off[k], kv_in[k]), off[k] / total, r.link_utilization)
                 for k, (s, r) in enumerate(zip(self.sites, res, strict=True)) if s.pool_p is not None]
        rows += [(f"{s.name}:decode", r.stage_rps["decode"], (off[k] + loc[k]) / total, r.utilization["decode"])
                 for k, (s, r) in enumerate(zip(self.sites, res, strict=True))]
        return ({k: v for k, v, _, _ in rows}, {k: v for k, _, v, _ in rows}, {k: v for k, _, _, v in rows})


def _link_rps(r: SimResult, offloaded: int, kv_in: float) -> float | None:
    """A link's requests/s: bytes carried/s over the bytes an arrival brings. An overloaded
    processor-sharing link finishes its small transfers first, so its count of finished ones
    overstates the B_out / S_kv it sustains."""
    if r.link_bytes_per_s is None or not kv_in > 0:
        return r.stage_rps["link"]
    return link_rps(r.link_bytes_per_s, offloaded, kv_in)


def link_rps(bytes_per_s: float, offloaded: int, kv_in: float) -> float | None:
    """Offloaded requests/s a link carries: its bytes/s over the bytes each brought (None: none did)."""
    return bytes_per_s * offloaded / kv_in if kv_in > 0 else None


def _check(system: TopologySystem) -> None:
    if not system.sites:
        raise SpecError("a topology needs at least one PD site", field="sites")
    names = [s.site for s in system.sites]
    if len(set(names)) != len(names):
        raise SpecError(f"site names must differ, got {names}", field="sites")
    for s in system.sites:
        if not (s.demand_share > 0 and math.isfinite(s.demand_share)):
            raise SpecError(f"must be > 0, got {s.demand_share!r}", field=f"sites.{s.site}.demand_share")
        if s.config.n_prfaas != system.n_prfaas:
            raise SpecError(f"the path's N_prfaas {s.config.n_prfaas} is not the shared pool's {system.n_prfaas}",
                            field=f"sites.{s.site}.config.n_prfaas")
    total = sum(s.demand_share for s in system.sites)
    if abs(total - 1) > 1e-6:
        raise SpecError(f"demand shares must sum to 1, got {total:g}", field="sites.demand_share")


def run_length(scs: list[ScenarioSpec], n_requests: int | None, duration_s: float | None) -> int | None:
    """Arrivals of the merged stream to take (None: bounded by ``duration_s``)."""
    if duration_s is not None:
        return None
    held = [len(s.workload.trace) if s.workload.trace is not None else None for s in scs]
    if any(h is None for h in held):
        return n_requests if n_requests is not None else _DEFAULT_REQUESTS
    cap = sum(held)  # type: ignore[arg-type]
    if n_requests is not None and n_requests > cap:
        raise SpecError(f"the sites' traces hold {cap:,} requests, got {n_requests:,} (--requests N replays "
                        "the first N of the merged stream)", field="--requests")
    return cap if n_requests is None else n_requests


def play(sc: ScenarioSpec, system: TopologySystem, *, rate_rps: float | None, n_requests: int | None = None,
         duration_s: float | None = None, rng: np.random.Generator, warmup_fraction: float = 0.1,
         progress: Callable[[int], None] | None = None, drain: bool = True, records: bool = False,
         control: ControlConfig | None = None, replay: dict[str, Any] | None = None,
         fast: bool = True) -> tuple[TopologyEngineRun, TopologySimResult]:
    """``simulate_topology``, with the played run (its sites' sources, links and what the router saw).
    ``rate_rps`` None: every site replays its trace at its own pace."""
    check_bounds(rate_rps, n_requests, duration_s, warmup_fraction)
    _check(system)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    scs = [replace(sc, workload=s.workload) for s in system.sites]
    n_total = run_length(scs, n_requests, duration_s)
    sources = []
    for s, sc_i in zip(system.sites, scs, strict=True):
        trace = sc_i.workload.trace
        n_i = None if n_total is None else min(n_total, len(trace)) if trace is not None else n_total
        rate_i = None if rate_rps is None else s.demand_share * rate_rps
        sources.append(make_source(sc_i, s.config, rng, rate_rps=rate_i, n_requests=n_i, duration_s=duration_s,
                                   warmup_fraction=warmup_fraction))
    if all(src.next_time(0) is None for src in sources):
        raise SpecError(f"no request arrives within {duration_s:g} s", field="--duration")
    warm_n = None if n_total is None else min(int(warmup_fraction * n_total), n_total - 1)
    run = TopologyEngineRun(system, sources, n_total=n_total, warm_n=warm_n,
                            warm_t=warmup_fraction * (duration_s or 0.0),
                            window_s=max(1.0, _horizon(sources, duration_s, n_total, rate_rps) / SERIES_POINTS),
                            records=records, control=control, replay=replay)
    run.run(progress, drain, fast)
    rate = rate_rps if rate_rps is not None else sum(src.rate_rps for src in sources)
    return run, run.result(rate, time.perf_counter() - wall0, time.process_time() - cpu0, drain)


def _horizon(sources: list[ParamSource | TraceSource], duration_s: float | None, n_total: int | None,
             rate_rps: float | None) -> float:
    """Seconds of arrivals: ``duration_s``, the traces' longest span where every site replays one,
    else the run's length at the total rate."""
    if duration_s is not None:
        return duration_s
    if all(isinstance(src, TraceSource) for src in sources) or rate_rps is None:
        return max(src.horizon_s for src in sources)
    return (n_total or 0) / rate_rps


def simulate_topology(sc: ScenarioSpec, system: TopologySystem, *, rate_rps: float | None,
                      n_requests: int | None = None, duration_s: float | None = None, rng: np.random.Generator,
                      warmup_fraction: float = 0.1, progress: Callable[[int], None] | None = None,
                      drain: bool = True, records: bool = False, control: ControlConfig | None = None,
                      fast: bool = True) -> TopologySimResult:
    """Simulate the PD sites of ``system`` sharing its PrfaaS pool at total arrival rate ``rate_rps``.

    Site i's arrivals come at demand_share_i x Lambda from its own workload (``site.workload``,
    its trace time-scaled to that rate). ``n_requests`` (of the merged stream) or ``duration_s``
    bound the run; ``drain`` False stops soon after the last arrival (saturation runs).
    ``progress(arrived)`` is called every few thousand events; ``records`` and ``control`` are
    each site's (``sim.site``); ``fast`` False plays a plain one-site run on the engine.
    """
    return play(sc, system, rate_rps=rate_rps, n_requests=n_requests, duration_s=duration_s, rng=rng,
                warmup_fraction=warmup_fraction, progress=progress, drain=drain, records=records, control=control,
                fast=fast)[1]


def saturation_topology(sc: ScenarioSpec, system: TopologySystem, rng: np.random.Generator,
                        n_requests: int = 20_000, *, overload: float = 1.5) -> Saturation:
    """Simulate at ``overload`` x ``system.capacity_rps`` (total) and estimate the sustained total
    throughput Lambda_max: each stage's completion rate over the share of all arrivals through it
    (prfaas: sum_i share_i p_i; SITE:local share_i (1 - p_i); SITE:link share_i p_i; SITE:decode
    share_i), minimised over the saturated stages (busy >= 98%; all of them if none is) and named
    after the most upstream of a tie. This is ``saturation_throughput``'s estimate with three
    changes, none of which moves a compute- or decode-bound answer beyond noise: the stages behind
    a saturated shared pool (each site's link and decode) only split its output, and the minimum
    over those noisy splits would sit below Lambda_max and name a link; the window ends at the
    last arrival, so a stage that keeps up counts at its feed, not over the drain; a link counts
    bytes (``_link_rps``), not finished transfers."""
    rate = overload * system.capacity_rps
    return saturation_of(simulate_topology(sc, system, rate_rps=rate, n_requests=n_requests, rng=rng, drain=False))


def saturation_of(res: TopologySimResult) -> Saturation:
    """The sustained total Lambda of an overfed run: each stage's rate over its share of the
    arrivals, least over the saturated stages (all of them if none is), named upstream first."""
    share = {k: v for k, v in res.stage_share.items() if v > 0}
    per = {k: v / share[k] for k, v in res.stage_rps.items() if k in share and v is not None}
    busy = {k: v for k, v in per.items() if (res.stage_utilization[k] or 0.0) >= SATURATED}
    per = busy or per  # none saturated (fed too little): every stage, as sim.run does
    low = min(per.values())
    name = next(k for k, v in per.items() if v <= low * (1 + TIE_RTOL))
    return Saturation(rate_rps=res.rate_rps, throughput_rps=per[name], completion_rps=res.throughput_rps or 0.0,
                      bottleneck=name, stage_rps={k: v for k, v in res.stage_rps.items() if v is not None},
                      share=share)


_ONE_SITE = {"prfaas": "prfaas", "local:local": "local", "local:link": "link", "local:decode": "decode"}


def saturation_throughput(sc: ScenarioSpec, system: SystemConfig, rng: np.random.Generator,
                          n_requests: int = 20_000, *, overload: float = 1.5) -> Saturation:
    """One system's sustained throughput (Lambda_max): ``saturation_topology`` on the topology of
    one PD site, stages named as Eq. 6 names them (prfaas, local, link, decode). Counting the
    link's bytes, not its finished transfers, keeps a link-bound system from reading low."""
    one = TopologySystem(name=system.name, n_prfaas=system.n_prfaas, capacity_rps=system.capacity_rps,
                         capacity_binding=system.capacity_binding,
                         sites=(SiteSystem(site="local", link="prfaas->local", demand_share=1.0, config=system,
                                           workload=sc.workload),))
    sat = saturation_topology(sc, one, rng, n_requests, overload=overload)
    return replace(sat, bottleneck=_ONE_SITE[sat.bottleneck],
                   stage_rps={_ONE_SITE.get(k, k): v for k, v in sat.stage_rps.items()},
                   share={_ONE_SITE.get(k, k): v for k, v in sat.share.items()})
