"""The simulator's policies: the request stream, the prefix caches, and the dual-timescale scheduler.

Request stream: ``make_source`` gives a parametric source (arrivals and lengths drawn in
vectorised batches) or a trace source (replayed request by request through one prefix cache per
cluster, bandwidth-scarce or bandwidth-abundant mode; see :mod:`prfaas_plan.sim.run`).

Scheduler (docs/model.md#the-prfaas-architecture), as simple rules. Short term: when the cross-datacenter link has
been busy more than ``max_link_utilization`` of the last ``window_s`` seconds, requests just
above the threshold (t < l <= t (1 + margin)) stay local, so the link drains. Long term: every
``period_s`` seconds, if the local prefill (PD-P) queue is long while a decode instance's worth
of slots sits idle, one decode instance becomes a prefill instance; if decode admission has a
long queue while a PD-P instance is idle, one prefill instance becomes a decode instance
(N_p, N_d >= 1 always). Both are off unless asked for.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any

import numpy as np

from prfaas_plan.core.trace import BlockCache
from prfaas_plan.errors import SpecError
from prfaas_plan.sim.entities import DecodeSlots, Pool
from prfaas_plan.sim.stations import SharedLink, gamma_arrivals, poisson_arrivals


class LinkMonitor:
    """Busy fraction of a link over roughly the last ``window_s`` seconds.

    Samples (time, cumulative busy time) at each query and keeps the oldest sample no later than
    now - window_s, so the window is between window_s and window_s + one query gap long (queries
    come with arrivals, a fraction of a second apart at the rates that matter).
    """

    __slots__ = ("_samples", "link", "window_s")

    def __init__(self, link: SharedLink, window_s: float) -> None:
        self.link = link
        self.window_s = window_s
        self._samples: deque[tuple[float, float]] = deque()

    def utilisation(self) -> float:
        link = self.link
        now = link.engine.now
        busy = link.busy_s  # advances the link's clock
        samples = self._samples
        samples.append((now, busy))
        edge = now - self.window_s
        while len(samples) > 1 and samples[1][0] <= edge:
            samples.popleft()
        t0, b0 = samples[0]
        return (busy - b0) / (now - t0) if now > t0 else 0.0


class RoleBalancer:
    """The long-term rule: move one local instance between the PD-P pool and the decode slots."""

    __slots__ = ("bs_max", "changes", "decode", "n_d", "prefill", "queue_per_instance")

    def __init__(self, prefill: Pool, decode: DecodeSlots, *, n_d: int, bs_max: int,
                 queue_per_instance: float) -> None:
        self.prefill = prefill
        self.decode = decode
        self.n_d = n_d
        self.bs_max = bs_max
        self.queue_per_instance = queue_per_instance
        self.changes = 0

    @property
    def n_p(self) -> int:
        return self.prefill.n

    def step(self) -> None:
        pool, dec = self.prefill, self.decode
        long = self.queue_per_instance
        if len(pool.queue) >= long * pool.n and self.n_d > 1 and dec.idle() >= self.bs_max:
            # the idle slots are treated as one instance's worth (slots are fungible across instances)
            dec.remove(self.bs_max)
            self.n_d -= 1
            pool.add_server()
            self.changes += 1
        elif len(dec.waiting) >= long * self.n_d and not pool.queue and pool.remove_idle_server():
            dec.add(self.bs_max)
            self.n_d += 1
            self.changes += 1



# ----------------------------------------------------------------------------- workload sources

CHUNK = 16_384  # requests drawn per vectorised batch
Route = Callable[[float], bool]
Drawn = tuple[bool, int, float, float, float, float]  # offload, l, service s, KV bytes, decode hold s, prefetch B


class ParamSource:
    """A parametric workload: arrivals and uncached lengths drawn in batches of ``CHUNK``.

    Each batch samples gaps and lengths and evaluates T_prfaas, T_local and S_kv in one numpy
    call each (then Python floats, which the event heap compares fastest). Only the current
    batch is alive, so memory does not grow with the number of requests.
    """

    traced = False

    def __init__(self, sc: Any, system: Any, rng: np.random.Generator, *, rate_rps: float,
                 n_requests: int | None, duration_s: float | None, warmup_fraction: float) -> None:
        self.sc, self.system, self.rng = sc, system, rng
        self.rate_rps = rate_rps
        cv = sc.workload.arrival_cv if sc.workload.arrival == "gamma" else 1.0
        self._gaps = (lambda n, start: poisson_arrivals(rng, rate_rps, n, start)) if cv == 1.0 else \
            (lambda n, start: gamma_arrivals(rng, rate_rps, cv, n, start))
        self.n = n_requests
        self.duration = duration_s
        self.horizon_s = duration_s if duration_s is not None else (n_requests or 0) / rate_rps
        self.warm_i = int(warmup_fraction * n_requests) if n_requests is not None else None
        if self.warm_i is not None and n_requests is not None:
            self.warm_i = min(self.warm_i, n_requests - 1)
        self.warm_t = warmup_fraction * duration_s if duration_s is not None else 0.0
        self.hold = float(sc.workload.output_tokens) * system.t_decode_s
        self.tokens_in = self.tokens_hit = 0
        self._base = 0
        self._last_time = 0.0
        self._exhausted = False
        self._times: list[float] = []
        self._draw()

    def _draw(self) -> None:
        base = self._base + len(self._times)
        size = CHUNK if self.n is None else min(CHUNK, self.n - base)
        self._times, self._base = [], base
        self._l = self._svc_p = self._svc_l = self._kv = []  # free the spent batch before drawing
        if size <= 0 or self._exhausted:
            return
        times = self._gaps(size, self._last_time)
        lengths = self.sc.workload.lengths.sample(self.rng, size)
        if self.duration is not None and times[-1] >= self.duration:
            keep = int(np.searchsorted(times, self.duration, side="left"))
            times, lengths = times[:keep], lengths[:keep]
            self._exhausted = True
        s = self.system
        x = np.asarray(lengths, dtype=np.float64)
        self._l = np.asarray(lengths).tolist()
        self._svc_p = np.asarray(s.t_prfaas(x), dtype=np.float64).tolist() if s.t_prfaas else self._l
        self._svc_l = np.asarray(s.t_local(x), dtype=np.float64).tolist() if s.t_local else self._l
        self._kv = np.asarray(s.kv_bytes(x), dtype=np.float64).tolist()
        self._times = times.tolist()
        self._base = base
        if self._times:
            self._last_time = self._times[-1]

    def next_time(self, i: int) -> float | None:
        """Arrival time of request ``i`` (asked in order), None past the last one."""
        pos = i - self._base
        if pos >= len(self._times):
            if not self._times:
                return None
            self._draw()
            pos = i - self._base
            if pos >= len(self._times):
                return None
        return self._times[pos]

    def batch(self) -> tuple[list[float], list[Any], list[float], list[float], list[float], int]:
        """The current batch, read in place by the fast path (``sim.kernel``): arrival times, lengths,
        T_prfaas, T_local, S_kv (from index ``base`` on), and ``base``."""
        return self._times, self._l, self._svc_p, self._svc_l, self._kv, self._base

    def measured(self, i: int, now: float) -> bool:
        return i >= self.warm_i if self.warm_i is not None else now >= self.warm_t

    def request(self, i: int, route: Route, measured: bool) -> Drawn:
        pos = i - self._base
        l = self._l[pos]
        if route(l):
            return True, l, self._svc_p[pos], self._kv[pos], self.hold, 0.0
        return False, l, self._svc_l[pos], 0.0, self.hold, 0.0


class TraceSource:
    """A trace replayed request by request, with one prefix cache per cluster (see ``sim.run``).

    T_prfaas, T_local and S_kv are tabulated once over 0..max input length (one numpy call
    each), since the uncached length of a request depends on the caches when it arrives.
    """

    traced = True

    def __init__(self, sc: Any, system: Any, *, rate_rps: float | None, n_requests: int | None,
                 duration_s: float | None, warmup_fraction: float) -> None:
        trace = sc.workload.trace
        order = np.argsort(trace.arrival_s, kind="stable")
        t = trace.arrival_s[order] - trace.arrival_s[order[0]]
        native = (len(t) - 1) / t[-1] if len(t) > 1 and t[-1] > 0 else None
        if native is None:  # api.sim refuses this first, naming the option the user gave
            file = sc.workload.description.get("file")
            raise SpecError(f"all {len(t):,} requests arrive at one instant: no time span to replay"
                            + ("" if rate_rps is None else f" at {rate_rps:g} req/s"),
                            source=str(file) if file else None, field="timestamp")
        keep = _window(t, rate_rps, n_requests, duration_s)
        span = float(t[keep - 1])
        if keep > 1 and not span > 0:
            raise SpecError(f"the first {keep:,} requests of the trace all arrive at one instant: no time span to "
                            "replay; replay more of them (--requests, --duration)", field="--requests")
        # the replayed window's own rate, (n - 1) / span: the rate the run says is the records' rate
        window_rate = (keep - 1) / span if keep > 1 else native
        if rate_rps is not None and keep > 1:
            t = t * (window_rate / rate_rps)
        self.rate_rps = float(rate_rps if rate_rps is not None else window_rate)  # type: ignore[arg-type]
        self._order = order[:keep].tolist()
        self._times = t[:keep].tolist()
        self.horizon_s = float(t[keep - 1]) if keep > 1 else 1.0
        self.warm_i = min(int(warmup_fraction * keep), keep - 1)
        self._inputs = trace.input_tokens.tolist()
        self._outputs = trace.decode_tokens.tolist()  # 0 output tokens count as 1 (core.trace)
        self._flat = trace.hash_ids.tolist()
        self._off = trace.hash_offsets.tolist()
        self.bt = int(trace.block_tokens)
        # a trace without hashes and an assumed hit rate: every request's cached prefix is the
        # assumption's (core.trace.assumed_prefix_cache), at either cluster, as the analytic model
        # takes it; without an assumption its empty hashes hit nothing
        assumed = sc.workload.hit_rate_source == "assumed"
        self._assumed = sc.workload.trace_cached_tokens.tolist() if assumed else None
        # ``traced`` says the run reports a prefix hit rate: not for an unknown one (its 0 hits are
        # no measurement), so the result's rates are None, as optimize's prefix_hit_rate is
        self.traced = sc.workload.hit_rate_source != "unknown"
        self.step = float(system.t_decode_s)
        self.abundant = sc.cache_mode == "bandwidth-abundant"
        cap = _cache_blocks(sc, self.bt)
        self.pd_cache, self.pf_cache = BlockCache(cap), BlockCache(cap)
        grid = np.arange(int(trace.input_tokens.max()) + 1, dtype=np.float64)
        self._tp = np.asarray(system.t_prfaas(grid), dtype=np.float64) if system.t_prfaas else None
        self._tl = np.asarray(system.t_local(grid), dtype=np.float64) if system.t_local else None
        self._kv = np.asarray(system.kv_bytes(grid), dtype=np.float64)
        self.tokens_in = self.tokens_hit = 0  # measured requests: input tokens, tokens not prefilled
        self.pd_in = self.pd_hit = 0  # every request: input tokens, PD cluster's cache hits (the replay's)

    def next_time(self, i: int) -> float | None:
        return self._times[i] if i < len(self._times) else None

    def measured(self, i: int, now: float) -> bool:
        return i >= self.warm_i

    def request(self, i: int, route: Route, measured: bool) -> Drawn:
        j = self._order[i]
        blocks = self._flat[self._off[j]:self._off[j + 1]]
        total = self._inputs[j]
        bt = self.bt
        if self._assumed is not None:
            c_pd = c_pf = self._assumed[j]
        else:
            c_pd = min(self.pd_cache.hits(blocks) * bt, total - 1)
            c_pf = min(self.pf_cache.hits(blocks) * bt, total - 1)
        if self.abundant:
            l = total - max(c_pd, c_pf)
            off = route(l)
            compute = l
            prefetch = (c_pd - c_pf) if off else (c_pf - c_pd)  # the cluster holding less receives the gap
        else:
            l = total - c_pd
            off = route(l)
            compute = total - c_pf if off else l
            prefetch = 0
        self.pd_in += total
        self.pd_hit += c_pd
        self.pd_cache.insert(blocks)  # the PD cluster ends up with every request's KV
        if off:
            self.pf_cache.insert(blocks)
        if measured:
            self.tokens_in += total
            self.tokens_hit += total - compute
        table = self._tp if off else self._tl
        assert table is not None
        kv = float(self._kv[total - c_pd]) if off else 0.0  # PD receives what it lacks, with the state
        extra = float(self._kv[prefetch] - self._kv[0]) if prefetch > 0 else 0.0
        return off, l, float(table[compute]), kv, self._outputs[j] * self.step, extra


def _cache_blocks(sc: Any, block_tokens: int) -> int | None:
    gib = (sc.workload.description or {}).get("cache_capacity_gib")
    if gib is None:
        return None
    from prfaas_plan import units
    from prfaas_plan.core import kv
    from prfaas_plan.core.trace import blocks_for_capacity

    return blocks_for_capacity(gib * units.GIB, kv.footprint(sc.model).kv_bytes_per_token, block_tokens)


def _window(t: np.ndarray, rate_rps: float | None, n_requests: int | None, duration_s: float | None) -> int:
    """How many of the sorted arrivals ``t`` (seconds from the first) a replay plays: the first
    ``n_requests``; or those before ``duration_s``, in the replay's time: at ``rate_rps`` the window
    holding the first n requests spans (n - 1) / rate, so n = ceil(rate x duration); else the whole trace."""
    if duration_s is not None:
        if rate_rps is None:
            keep = int(np.searchsorted(t, duration_s, side="left"))
        else:
            keep = min(len(t), math.ceil(rate_rps * duration_s))
    else:
        if n_requests is not None and n_requests > len(t):
            raise SpecError(f"the trace holds {len(t):,} requests, got {n_requests:,} (--requests N replays "
                            "its first N)", field="--requests")
        keep = len(t) if n_requests is None else int(n_requests)
    return max(keep, 1)


def make_source(sc: Any, system: Any, rng: np.random.Generator, *, rate_rps: float | None,
                n_requests: int | None, duration_s: float | None,
                warmup_fraction: float) -> ParamSource | TraceSource:
    """The request stream of a scenario: its trace if it has one, else its length distribution."""
    if sc.workload.trace is not None:
        return TraceSource(sc, system, rate_rps=rate_rps, n_requests=n_requests, duration_s=duration_s,
                           warmup_fraction=warmup_fraction)
    rate = rate_rps if rate_rps is not None else sc.workload.rate_rps
    if rate is None:
        raise SpecError("give an arrival rate (--rate or --load, or workload.rate_rps)", field="--rate")
    if n_requests is None and duration_s is None:
        n_requests = 20_000
    return ParamSource(sc, system, rng, rate_rps=float(rate), n_requests=n_requests, duration_s=duration_s,
                       warmup_fraction=warmup_fraction)
