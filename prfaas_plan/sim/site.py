"""One PD site of a simulated topology (``sim.topology``): its stream, PD-P pool, link, decode slots,
and where asked its control loops (``ControlConfig``: the link rule and the role balancer), its
replayed bandwidth series and router (``sim.replay``) and its per-request records.

The site's path is ``KvPath``'s; its ``pool_p`` is the topology's shared PrfaaS pool, whose
callbacks hand each request back to its site (``SiteReq.site``). Snapshots are plain dicts of
counters and time integrals; a window's statistics are differences of two of them.
"""

from __future__ import annotations

import math
from typing import Any

from prfaas_plan.errors import SpecError
from prfaas_plan.sim.engine import EventHandle
from prfaas_plan.sim.entities import DecodeSlots, Hist, Pool, Req
from prfaas_plan.sim.path import PREFETCH, KvPath
from prfaas_plan.sim.policies import LinkMonitor, ParamSource, RoleBalancer, TraceSource
from prfaas_plan.sim.replay import Router
from prfaas_plan.sim.result import SimResult
from prfaas_plan.specs.system import ControlConfig
from prfaas_plan.specs.topology import SiteSystem

__all__ = ["Site", "SiteReq", "Snap", "Window", "pool_snap", "pool_window"]

Snap = dict[str, Any]
Window = tuple[float | None, float | None, float | None]  # a pool's completions/s, utilisation, mean queue


class SiteReq(Req):
    """A request that knows its PD site, so the shared pool's callbacks hand it back to it."""

    __slots__ = ("site",)


def pool_snap(pool: Pool, now: float, s: Snap) -> None:
    pool.advance(now)
    name = pool.name
    s[f"{name}_done"], s[f"{name}_busy"] = pool.completed, pool.area_busy
    s[f"{name}_queue"], s[f"{name}_servers"] = pool.area_queue, pool.area_servers


def pool_window(a: Snap, b: Snap, name: str, span: float) -> Window:
    servers = b[f"{name}_servers"] - a[f"{name}_servers"]
    util = (b[f"{name}_busy"] - a[f"{name}_busy"]) / servers if servers > 0 else None
    if span <= 0:
        return None, util, None
    return (b[f"{name}_done"] - a[f"{name}_done"]) / span, util, (b[f"{name}_queue"] - a[f"{name}_queue"]) / span


class Site(KvPath):
    """One PD site: its request stream, PD-P pool, link and decode slots (``pool_p`` is shared)."""

    def __init__(self, run: Any, spec: SiteSystem, src: ParamSource | TraceSource, window_s: float, *,
                 records: bool = False, control: ControlConfig | None = None,
                 replay: dict[str, Any] | None = None) -> None:
        self.run, self.spec, self.src = run, spec, src
        self.name = spec.site
        self.system = system = spec.config
        self.engine = engine = run.engine
        self.pool_p = run.prefill_pool(self) if system.t_prfaas is not None else None
        self.pool_l = Pool(engine, "local", system.n_p, self._prefill_done_l) \
            if system.n_p > 0 and system.t_local is not None else None
        if self.pool_p is None and self.pool_l is None:
            raise SpecError(f"site {self.name} has no prefill instance", field=f"sites.{self.name}")
        # routing: l > t_i offloads; a missing pool sends everything to the other one
        thr = system.threshold_tokens
        self.thr = math.inf if thr is None or self.pool_p is None else float(thr)
        if self.pool_l is None:
            self.thr = -math.inf
        self.decode = DecodeSlots(engine, system.n_d * system.bs_max, self._admit)
        self.link = run.site_link(self, replay["window_s"] if replay else window_s)
        self.n_layers = system.n_layers if system.pipelining and system.n_layers > 1 else 1
        self.hist = Hist()
        self.hist_path = {"prfaas": Hist(), "local": Hist()}
        self.arrived = self.n_measured = self.link_done = self.prfaas_done = self.kept_local = 0
        self.kv_in = 0.0  # bytes the arrivals put on the link (KV and prefetches)
        self.routed = {"prfaas": 0, "local": 0}
        self.pending: EventHandle | None = None  # the next arrival, cancelled when the run is full
        self.records: list[tuple] | None = [] if records else None
        self._control(control)
        # a replayed bandwidth series and the router's policy (sim.replay), and what each request saw
        self.router = None if replay is None else Router(self, replay["series"], replay["policy"],
                                                         replay.get("lookup"), replay.get("rate_window_s", 60.0))
        self.seen: list[tuple[float, float, bool, float]] = []
        self.thr_at: dict[int, float] = {}
        self._thr_now = self.thr
        # the routing rule: with no router and no monitor it is l > t alone (``_route``'s first test)
        self._route_fn = self._route if self.router is not None or self.monitor is not None else self.thr.__lt__

    def _control(self, control: ControlConfig | None) -> None:
        """The short-term link rule (keep a request local while the link runs hot) and the long-term
        role balancer (move an instance between PD-P and decode), where ``control`` asks for them."""
        self.monitor, self.balancer = None, None
        if control is not None and control.max_link_utilization is not None and 0 < self.thr < math.inf:
            self.monitor = LinkMonitor(self.link, control.window_s)
            self.u_max = control.max_link_utilization
            self.thr_hi = self.thr * (1 + control.margin)
        if control is not None and control.period_s is not None and self.pool_l is not None:
            self.balancer = RoleBalancer(self.pool_l, self.decode, n_d=self.system.n_d, bs_max=self.system.bs_max,
                                         queue_per_instance=control.queue_per_instance)
            self.period_s = control.period_s

    @property
    def done_arriving(self) -> bool:
        return bool(self.run.done_arriving)

    def start(self) -> bool:
        """Schedule the first arrival (and the balancer's first step); False: the stream is empty."""
        first = self.src.next_time(0)
        if first is None:
            return False
        self.pending = self.engine.schedule_at(first, self.arrive)
        if self.balancer is not None:
            self.engine.schedule_at(first + self.period_s, self._tick)
        return True

    def arrive(self) -> None:
        run, src = self.run, self.src
        now = self.engine.now
        self.pending = None
        measured = run.measured(now)
        if measured:
            if not run.snaps:
                run.snaps.append(run.snapshot())
            run.n_measured += 1
            self.n_measured += 1
        i = self.arrived
        off, l, service, kv, hold, prefetch = src.request(i, self._route_fn, measured)
        r = SiteReq(i, now, l, off, service, kv, hold, measured)
        r.site = self
        if self.router is not None:
            self.thr_at[i] = self._thr_now
        self.arrived = i + 1
        run.arrived += 1
        self.routed["prfaas" if off else "local"] += 1
        self.kv_in += kv + prefetch
        if prefetch > 0:
            r.part = PREFETCH
            self.link.submit(r, prefetch)
        else:
            (self.pool_p if off else self.pool_l).submit(r)  # type: ignore[union-attr]
        nxt = None if run.full() else src.next_time(i + 1)
        if nxt is None:
            run.site_done()
        else:
            self.pending = self.engine.schedule_at(nxt, self.arrive)

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

    def _tick(self) -> None:
        assert self.balancer is not None
        self.balancer.step()
        if not self.run.done_arriving:
            self.engine.schedule(self.period_s, self._tick)

    def _admit(self, r: Req, now: float) -> None:
        r.decode_started_at = now
        run = self.run
        ttft = now - r.arrived_at
        if run.done_arriving:  # the window ends at the last admission: keep the latest state
            run.end = run.snapshot()
        if self.router is not None:
            self.seen.append((r.arrived_at, ttft, r.offload, self.thr_at.pop(r.i, math.inf)))
        if r.measured:
            k = Hist.bin_of(ttft)
            path = "prfaas" if r.offload else "local"
            for h in (self.hist, self.hist_path[path], run.hist, run.hist_path[path]):
                h.add(ttft, k)
        if self.records is not None:
            self.records.append((r.i, r.arrived_at, "prfaas" if r.offload else "local", r.l, r.prefill_started_at,
                                 r.prefill_completed_at, r.kv_transfer_completed_at, now, now + r.hold, ttft,
                                 r.measured))

    def snapshot(self, now: float) -> Snap:
        s: Snap = {"admitted": self.decode.admitted, "hold": self.decode.busy_area(),
                   "link_bytes": self.link.bytes_carried, "link_done": self.link_done,
                   "own_prfaas_done": self.prfaas_done, "kv_in": self.kv_in,
                   "routed_prfaas": self.routed["prfaas"], "routed_local": self.routed["local"]}
        self.decode.advance(now)
        s["decode_wait"], s["decode_slots"] = self.decode.area_waiting, self.decode.area_slots
        if self.pool_l is not None:
            pool_snap(self.pool_l, now, s)
        return s

    def result(self, a: Snap, b: Snap, span: float, shared: Window, run_stats: dict[str, Any]) -> SimResult:
        """This site's statistics over the topology's window (``shared``: the shared pool's)."""
        def rate(key: str) -> float | None:
            return (b[key] - a[key]) / span if span > 0 else None

        routed = {k: b[f"routed_{k}"] - a[f"routed_{k}"] for k in ("prfaas", "local")}
        n = sum(routed.values())
        stage = {"decode": rate("admitted"), "link": rate("link_done") if self.pool_p is not None else None}
        util: dict[str, float | None] = {}
        queue: dict[str, float | None] = {"decode": rate("decode_wait")}
        share: dict[str, float | None] = {}
        if self.pool_p is not None:
            stage["prfaas"], util["prfaas"], queue["prfaas"] = rate("own_prfaas_done"), shared[1], shared[2]
            share["prfaas"] = routed["prfaas"] / n if n else None
        if self.pool_l is not None:
            stage["local"], util["local"], queue["local"] = pool_window(a, b, "local", span)
            share["local"] = routed["local"] / n if n else None
        slot_time = b["decode_slots"] - a["decode_slots"]
        util["decode"] = (b["hold"] - a["hold"]) / slot_time if slot_time > 0 else None
        link_rate = rate("link_bytes") if self.pool_p is not None else None
        src, system = self.src, self.system
        paths = {k: h for k, h in self.hist_path.items()
                 if (self.pool_p if k == "prfaas" else self.pool_l) is not None}
        return SimResult(
            system=self.name, rate_rps=src.rate_rps, requests=self.arrived, measured=self.n_measured,
            completed=self.hist.n, span_s=span, throughput_rps=rate("admitted"), ttft=self.hist, ttft_paths=paths,
            tpot_s=system.t_decode_s, stage_rps=stage, routed_share=share, utilization=util, mean_queue=queue,
            link_utilization=None if link_rate is None else link_rate / self.link.bandwidth,
            link_bytes_per_s=link_rate, link_series=self.link.utilisation_series(),
            prefix_hit_rate=src.pd_hit / src.pd_in if src.traced and src.pd_in else None,
            recompute_avoided_rate=src.tokens_hit / src.tokens_in if src.traced and src.tokens_in else None,
            kept_local=self.kept_local, role_changes=self.balancer.changes if self.balancer else 0,
            final_split={"n_prfaas": self.run.n_prfaas, "n_p": self.pool_l.n if self.pool_l else 0,
                         "n_d": self.balancer.n_d if self.balancer else system.n_d},
            records=self._records(), **run_stats)

    def _records(self) -> list[dict[str, Any]] | None:
        if self.records is None:
            return None
        keys = ("i", "arrived_at", "path", "uncached_tokens", "prefill_started_at", "prefill_completed_at",
                "kv_transfer_completed_at", "decode_started_at", "completed_at", "ttft_s", "measured")
        return [dict(zip(keys, rec, strict=True)) for rec in sorted(self.records)]
