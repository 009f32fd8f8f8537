"""Discrete-event simulation of one system (PrfaaS-PD or a baseline) serving a scenario's workload.

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
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from prfaas_plan.errors import SpecError
from prfaas_plan.sim import fast as fast_path
from prfaas_plan.sim.engine import Engine
from prfaas_plan.sim.entities import DecodeSlots, Hist, Pool, Req
from prfaas_plan.sim.path import PREFETCH, KvPath
from prfaas_plan.sim.policies import LinkMonitor, ParamSource, RoleBalancer, TraceSource, make_source
from prfaas_plan.sim.replay import Router, timeline
from prfaas_plan.sim.result import SimResult
from prfaas_plan.sim.stations import SharedLink
from prfaas_plan.specs.run import ENGINE, RunArgs, check
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.system import ControlConfig, SystemConfig

__all__ = ["Saturation", "SimResult", "check_bounds", "simulate"]

_STEP = 20_000  # events between progress reports
SERIES_POINTS = 500  # link utilisation series: about this many windows over the run
TIE_RTOL = 0.001  # saturation: stages within 0.1% of the lowest rate tie; the most upstream one is named


def drive(engine: Engine, progress: Callable[[int], None] | None, arrived: Callable[[], int],
          stop: Callable[[], bool]) -> None:
    """Run ``engine`` in steps of ``_STEP`` events, reporting ``arrived()`` after each, until it
    runs dry or ``stop()`` (an undrained run: soon after the last arrival)."""
    while True:
        n = engine.run(max_events=_STEP)
        if progress is not None:
            progress(arrived())
        if n < _STEP or stop():
            break


class _Run(KvPath):
    """One run's state and event callbacks (bound methods: the engine calls them with a Req); the
    prefill-to-decode life cycle is ``KvPath``'s."""

    def __init__(self, sc: ScenarioSpec, system: SystemConfig, src: ParamSource | TraceSource, *, records: bool,
                 control: ControlConfig | None, replay: dict[str, Any] | None = None) -> None:
        self.sc, self.system, self.src = sc, system, src
        self.engine = engine = Engine()
        thr = system.threshold_tokens
        self.pool_p = Pool(engine, "prfaas", system.n_prfaas, self._prefill_done_p, self._prefill_start_p) \
            if system.n_prfaas > 0 and system.t_prfaas is not None else None
        self.pool_l = Pool(engine, "local", system.n_p, self._prefill_done_l) \
            if system.n_p > 0 and system.t_local is not None else None
        if self.pool_p is None and self.pool_l is None:
            raise SpecError(f"system {system.name} has no prefill instance")
        # routing: l > thr offloads; a missing pool sends everything to the other one
        self.thr = math.inf if thr is None or self.pool_p is None else float(thr)
        if self.pool_l is None:
            self.thr = -math.inf
        self.decode = DecodeSlots(engine, system.n_d * system.bs_max, self._admit)
        self.link = SharedLink(engine, system.link_bytes_per_s, self._link_done,
                               window_s=replay["window_s"] if replay else max(1.0, src.horizon_s / SERIES_POINTS),
                               records=False)
        self.n_layers = system.n_layers if system.pipelining and system.n_layers > 1 else 1
        self.monitor = None
        if control is not None and control.max_link_utilization is not None and 0 < self.thr < math.inf:
            self.monitor = LinkMonitor(self.link, control.window_s)
            self.u_max = control.max_link_utilization
            self.thr_hi = self.thr * (1 + control.margin)
        self.balancer = None
        if control is not None and control.period_s is not None and self.pool_l is not None:
            self.balancer = RoleBalancer(self.pool_l, self.decode, n_d=system.n_d, bs_max=system.bs_max,
                                         queue_per_instance=control.queue_per_instance)
            self.period_s = control.period_s
        self.hist = Hist()
        self.hist_path = {"prfaas": Hist(), "local": Hist()}
        self.records: list[tuple] | None = [] if records else None
        self.arrived = 0
        self.kept_local = 0
        self.routed = {"prfaas": 0, "local": 0}
        self.link_done = 0
        self.done_arriving = False
        self.snaps: list[dict[str, float]] = []
        self.n_measured = 0
        self.end: dict[str, float] | None = None  # snapshot at the last admission after the last arrival
        # a replayed bandwidth series and the router's policy (sim.replay), and what each request saw
        self.router = None if replay is None else Router(self, replay["series"], replay["policy"],
                                                         replay.get("lookup"), replay.get("rate_window_s", 60.0))
        self.seen: list[tuple[float, float, bool, float]] = []
        self.thr_at: dict[int, float] = {}
        self._thr_now = self.thr
        self._arrive = self.arrive
        # the routing rule: with no router and no monitor it is l > t alone (``_route``'s first test)
        self._route_fn = self._route if self.router is not None or self.monitor is not None else self.thr.__lt__

    # ------------------------------------------------------------------ arrivals and routing
    def arrive(self) -> None:
        src = self.src
        engine = self.engine
        now = engine.now
        i = self.arrived
        measured = src.measured(i, now)
        if measured:
            if not self.snaps:
                self.snaps.append(self.snapshot())
            self.n_measured += 1
        off, l, service, kv, hold, prefetch = src.request(i, self._route_fn, measured)
        r = Req(i, now, l, off, service, kv, hold, measured)
        if self.router is not None:
            self.thr_at[i] = self._thr_now
        self.arrived = i + 1
        if off:
            self.routed["prfaas"] += 1
            pool = self.pool_p
        else:
            self.routed["local"] += 1
            pool = self.pool_l
        if prefetch > 0:
            r.part = PREFETCH
            self.link.submit(r, prefetch)
        else:
            pool.submit(r)  # type: ignore[union-attr]
        nxt = src.next_time(i + 1)
        if nxt is None:
            self.done_arriving = True
            self.snaps.append(self.snapshot())
        else:
            engine.schedule_at(nxt, self._arrive)

    def _route(self, l: float) -> bool:
        thr = self.thr
        if self.router is not None and self.pool_p is not None and self.pool_l is not None:
            thr = self._thr_now = self.router.threshold(self.engine.now, self.thr)
        if l <= thr:
            return False
        if self.monitor is not None and l <= self.thr_hi and self.monitor.utilisation() > self.u_max:
            self.kept_local += 1
            return False
        return True

    # ------------------------------------------------------------------ decode admission
    def _admit(self, r: Req, now: float) -> None:
        r.decode_started_at = now
        ttft = now - r.arrived_at
        if self.done_arriving:  # the window ends at the last admission: keep the latest state
            self.end = self.snapshot()
        if self.router is not None:
            self.seen.append((r.arrived_at, ttft, r.offload, self.thr_at.pop(r.i, math.inf)))
        if r.measured:
            k = Hist.bin_of(ttft)
            for h in (self.hist, self.hist_path["prfaas" if r.offload else "local"]):
                h.add(ttft, k)
        if self.records is not None:
            self.records.append((r.i, r.arrived_at, "prfaas" if r.offload else "local", r.l, r.prefill_started_at,
                                 r.prefill_completed_at, r.kv_transfer_completed_at, now, now + r.hold, ttft,
                                 r.measured))

    def _tick(self) -> None:
        assert self.balancer is not None
        self.balancer.step()
        if not self.done_arriving:
            self.engine.schedule(self.period_s, self._tick)

    # ------------------------------------------------------------------ measurement
    def snapshot(self) -> dict[str, float]:
        now = self.engine.now
        s: dict[str, float] = {"t": now, "admitted": self.decode.admitted, "hold": self.decode.busy_area(),
                               "link_bytes": self.link.bytes_carried, "link_done": self.link_done,
                               "routed_prfaas": self.routed["prfaas"], "routed_local": self.routed["local"]}
        self.decode.advance(now)
        s["decode_wait"], s["decode_slots"] = self.decode.area_waiting, self.decode.area_slots
        for pool in (self.pool_p, self.pool_l):
            if pool is not None:
                pool.advance(now)
                s[f"{pool.name}_done"] = pool.completed
                s[f"{pool.name}_busy"] = pool.area_busy
                s[f"{pool.name}_queue"] = pool.area_queue
                s[f"{pool.name}_servers"] = pool.area_servers
        return s

    def run(self, progress: Callable[[int], None] | None, drain: bool, fast: bool = True) -> None:
        if fast and fast_path.plain(self):
            fast_path.implementation().run_plain(self, progress, drain, _STEP)
            return
        first = self.src.next_time(0)
        assert first is not None
        self.engine.schedule_at(first, self.arrive)
        if self.balancer is not None:
            self.engine.schedule_at(first + self.period_s, self._tick)
        drive(self.engine, progress, lambda: self.arrived, lambda: not drain and self.done_arriving)

    def result(self, rate_rps: float, wall_s: float, cpu_s: float) -> SimResult:
        a, b = self.snaps[0], self.snaps[-1]
        if self.end is not None and self.end["t"] > b["t"]:
            b = self.end
        span = b["t"] - a["t"]
        src = self.src

        def rate(key: str) -> float | None:
            return (b[key] - a[key]) / span if span > 0 else None

        routed = b["routed_prfaas"] - a["routed_prfaas"] + b["routed_local"] - a["routed_local"]
        stage = {"decode": rate("admitted"), "link": rate("link_done") if self.pool_p is not None else None}
        util: dict[str, float | None] = {}
        queue: dict[str, float | None] = {"decode": rate("decode_wait")}
        share: dict[str, float | None] = {}
        for pool in (self.pool_p, self.pool_l):
            if pool is None:
                continue
            name = pool.name
            stage[name] = rate(f"{name}_done")
            servers = b[f"{name}_servers"] - a[f"{name}_servers"]
            util[name] = (b[f"{name}_busy"] - a[f"{name}_busy"]) / servers if servers > 0 else None
            queue[name] = rate(f"{name}_queue")
            share[name] = (b[f"routed_{name}"] - a[f"routed_{name}"]) / routed if routed else None
        slot_time = b["decode_slots"] - a["decode_slots"]
        util["decode"] = (b["hold"] - a["hold"]) / slot_time if slot_time > 0 else None
        link_rate = rate("link_bytes") if self.pool_p is not None else None
        link_u = None if link_rate is None else link_rate / self.link.bandwidth
        records = None
        if self.records is not None:
            keys = ("i", "arrived_at", "path", "uncached_tokens", "prefill_started_at", "prefill_completed_at",
                    "kv_transfer_completed_at", "decode_started_at", "completed_at", "ttft_s", "measured")
            records = [dict(zip(keys, rec, strict=True)) for rec in sorted(self.records)]
        paths = {name: h for name, h in self.hist_path.items()
                 if (self.pool_p if name == "prfaas" else self.pool_l) is not None}
        return SimResult(
            system=self.system.name, rate_rps=rate_rps, requests=self.arrived, measured=self.n_measured,
            completed=self.hist.n, span_s=span, throughput_rps=rate("admitted"), ttft=self.hist,
            ttft_paths=paths,
            tpot_s=self.system.t_decode_s, stage_rps=stage, routed_share=share, utilization=util, mean_queue=queue,
            link_utilization=link_u, link_bytes_per_s=link_rate, link_series=self.link.utilisation_series(),
            prefix_hit_rate=src.pd_hit / src.pd_in if src.traced and src.pd_in else None,
            recompute_avoided_rate=src.tokens_hit / src.tokens_in if src.traced and src.tokens_in else None,
            kept_local=self.kept_local, role_changes=self.balancer.changes if self.balancer else 0,
            final_split={"n_prfaas": self.system.n_prfaas, "n_p": self.pool_l.n if self.pool_l else 0,
                         "n_d": self.balancer.n_d if self.balancer else self.system.n_d},
            events=self.engine.events_processed, wall_s=wall_s, cpu_s=cpu_s, records=records)


def check_bounds(rate_rps: float | None, n_requests: int | None, duration_s: float | None,
                 warmup_fraction: float) -> None:
    """Refuse a bad rate, run length or warm-up, naming the option (shared with ``sim.topology``).

    The rate and the length are ``specs.run.check``'s, in the words this entry point always used
    (``ENGINE``); the warm-up is the simulator's own."""
    check(RunArgs(rate_rps=rate_rps, n_requests=n_requests, duration_s=duration_s), ENGINE)
    if not 0 <= warmup_fraction < 1:
        raise SpecError(f"must be in [0, 1), got {warmup_fraction!r}", field="warmup_fraction")


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
    check_bounds(rate_rps, n_requests, duration_s, warmup_fraction)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    src = make_source(sc, system, rng, rate_rps=rate_rps, n_requests=n_requests, duration_s=duration_s,
                              warmup_fraction=warmup_fraction)
    if src.next_time(0) is None:
        raise SpecError(f"no request arrives within {duration_s:g} s", field="--duration")
    run = _Run(sc, system, src, records=records, control=control, replay=replay)
    run.run(progress, drain, fast)
    res = run.result(src.rate_rps, time.perf_counter() - wall0, time.process_time() - cpu0)
    if replay is not None:
        seen = np.array(run.seen, dtype=np.float64).reshape(-1, 4)
        res = replace(res, timeline=timeline(
            seen[:, 0], seen[:, 1], seen[:, 2] > 0, seen[:, 3], replay["window_s"], src.horizon_s,
            bound_s=sc.ttft_slo_s, series=replay["series"],
            window_bytes=run.link.window_bytes(max(math.ceil(src.horizon_s / replay["window_s"]), 1)),
            fixed_bytes_per_s=system.link_bytes_per_s))
    return res


@dataclass(frozen=True, slots=True, kw_only=True)
class Saturation:
    """Sustained throughput of a system fed above capacity (req/s).

    ``throughput_rps`` estimates Lambda_max: each stage's completion rate divided by the share
    of requests that pass through it, minimised over stages (the bottleneck's rate scaled to the
    whole request mix, which is what Lambda_max means). ``completion_rps`` is the raw rate at
    which requests reached decode; it exceeds Lambda_max when two overloaded pools each finish
    their own share at full speed.
    """

    rate_rps: float
    throughput_rps: float
    completion_rps: float
    bottleneck: str
    stage_rps: dict[str, float]
    share: dict[str, float]
