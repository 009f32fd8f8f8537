"""Analytic TTFT per path and overall (docs/model.md#latency-and-queueing).

TTFT = prefill queueing wait + T_prefill + exposed KV transfer + RTT + decode admission wait.

- Prefill wait: each pool (PrfaaS instances, local PD-P instances) is a G/G/c queue fed by its
  share of the arrivals, service times T_prefill(L) over the routed lengths; mean wait by
  Allen-Cunneen, wait distribution an atom at 0 plus an exponential tail with the same
  probability of waiting (Erlang C) and the same mean (``core.queueing``).
- The link is a processor-sharing server (fair TCP sharing): a transfer of x seconds alone
  takes x / (1 - rho_link) on average (M/G/1-PS), spread over slowdown classes (``sharing``).
  With layer-wise pipelining the KV of a layer is sent while the next computes, so only
  max(x / n_layers, x - T_prefill (n - 1) / n) is exposed.
- Decode admission: N_d x BS_max slots held for L_out x T_decode each, an M/M/c wait (mean).
Percentiles of the sum are exact for these laws: P(TTFT > x) is summed over a quantile grid of
the routed lengths and inverted by bisection.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from prfaas_plan.core import queueing
from prfaas_plan.core.roots import bisect

_NODES = 2000
QUANTILES = (0.5, 0.9, 0.99)
# a stage at or above 1 - this utilisation is unstable: at capacity the waits diverge, and a
# utilisation of 0.99999964 at Lambda_max is round-off of the service-time integration, not headroom
AT_CAPACITY_RTOL = 1e-6


@dataclass(frozen=True, slots=True, kw_only=True)
class Nodes:
    """Equal-weight quantile nodes of L conditioned on a side of the threshold."""

    lengths: NDArray[np.float64]

    @classmethod
    def of(cls, dist, t: float, *, above: bool, n: int = _NODES) -> Nodes:
        f_t = 1.0 - float(dist.tail_prob(t))
        lo, hi = (f_t, 1.0) if above else (0.0, f_t)
        q = lo + (hi - lo) * (np.arange(n) + 0.5) / n
        return cls(lengths=np.asarray(dist.quantile(q), dtype=np.float64))


@dataclass(frozen=True, slots=True, kw_only=True)
class Stage:
    """A stage's utilisation; over a trace's windows (``core.arrivals``) the request-weighted mean,
    with the busiest window's in ``peak_utilization``."""

    name: str
    utilization: float
    peak_utilization: float | None = None

    @property
    def stable(self) -> bool:
        """Utilisation below 1 - ``AT_CAPACITY_RTOL`` (in every window): at capacity, within
        round-off, is unstable."""
        peak = self.utilization if self.peak_utilization is None else self.peak_utilization
        return peak < 1.0 - AT_CAPACITY_RTOL


@dataclass(frozen=True, slots=True, kw_only=True)
class PathLatency:
    """TTFT of one path at one arrival rate; all seconds."""

    name: str
    share: float  # fraction of requests on this path
    rate_rps: float
    wait_mean_s: float
    prefill_mean_s: float
    transfer_mean_s: float  # exposed transfer + RTT
    admission_mean_s: float
    ttft_mean_s: float
    zero_load_ttft_mean_s: float
    stages: tuple[Stage, ...]
    # for the mixture over paths: per length node (rows) and link slowdown class (columns)
    p_wait: float
    tail_mean_s: float
    fixed_s: NDArray[np.float64]
    fixed_weights: NDArray[np.float64]

    @property
    def ttft_quantiles_s(self) -> dict[float, float]:
        """The path's TTFT quantiles (``QUANTILES``), computed when asked: a bound is checked on
        the tail at that bound (``mixture_tail``), with no quantile needed."""
        law = _Law(1.0, self.p_wait, self.tail_mean_s, self.fixed_s, self.fixed_weights)
        return {q: float(mixture_quantile(q, [law])) for q in QUANTILES}


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedPool:
    """A FIFO pool fed by several streams (the prefill service of a topology): every stream sees
    the same wait, that of the merged arrivals with the mixture of their service times."""

    utilization: float
    p_wait: float
    wait_mean_s: float


def shared_pool(rates: list[float], services: list[NDArray[np.float64]], servers: float,
                scv_arrival: float = 1.0) -> SharedPool:
    """The pool's wait for streams of ``rates`` (req/s) with service-time samples ``services``."""
    total = float(sum(rates))
    if total <= 0:
        return SharedPool(utilization=0.0, p_wait=0.0, wait_mean_s=0.0)
    w = [r / total for r in rates]
    mean = sum(wi * float(x.mean()) for wi, x in zip(w, services, strict=True))
    second = sum(wi * float((x**2).mean()) for wi, x in zip(w, services, strict=True))
    scv = max(second / mean**2 - 1.0, 0.0) if mean > 0 else 0.0
    rho = float(queueing.utilisation(total, mean, servers))
    if rho >= 1:
        return SharedPool(utilization=rho, p_wait=0.0, wait_mean_s=0.0)
    return SharedPool(utilization=rho, p_wait=float(queueing.erlang_c(servers, total * mean)),
                      wait_mean_s=float(queueing.ggc_wait(total, mean, scv, scv_arrival, servers)))


def path_latency(name: str, *, share: float, rate_rps: float, servers: int, lengths: NDArray[np.float64],
                 t_prefill: Callable, scv_arrival: float = 1.0, link_bytes_per_s: float | None = None,
                 link_rho: float = 0.0, kv_bytes: Callable | None = None, n_layers: int = 1,
                 pipelining: bool = True, rtt_s: float = 0.0, admission_s: float = 0.0,
                 pool: SharedPool | None = None) -> PathLatency:
    """TTFT law of one path: its pool of ``servers`` prefill instances and, if any, the link.

    ``pool``: the path's requests queue in a pool shared with other streams; its wait replaces
    the one of ``servers`` serving this path alone."""
    service_k = None
    service = np.asarray(t_prefill(lengths), dtype=np.float64)
    mean_s = float(service.mean())
    scv = float(service.var() / mean_s**2) if mean_s > 0 else 0.0
    rho = float(queueing.utilisation(rate_rps, mean_s, servers)) if rate_rps > 0 else 0.0
    if pool is not None:
        rho = pool.utilization
    stages = [Stage(name=f"{name} prefill", utilization=rho)]
    transfer = transfer_alone = np.zeros_like(service)
    weights = np.ones(1)
    if link_bytes_per_s is not None and kv_bytes is not None:
        stages.append(Stage(name="link", utilization=link_rho))

        def exposed(x: NDArray[np.float64]) -> NDArray[np.float64]:
            if pipelining:
                t = service[:, None] if x.ndim == 2 else service
                x = np.maximum(x / n_layers, x - t * (n_layers - 1) / n_layers)
            return x + rtt_s

        alone = np.asarray(kv_bytes(lengths), dtype=np.float64) / link_bytes_per_s
        transfer_alone = exposed(alone)
        if 0 < link_rho < 1:
            share_k, weights = sharing(link_rho)
            transfer = exposed(alone[:, None] * share_k[None, :])
            service_k = service[:, None]
        else:
            transfer = transfer_alone
    fixed = (service_k if transfer.ndim == 2 else service) + transfer + admission_s
    if fixed.ndim == 1:
        fixed, weights = fixed[:, None], np.ones(1)
    if pool is not None:
        p_wait, wait = pool.p_wait, pool.wait_mean_s
    elif rho < 1 and rate_rps > 0:
        p_wait = float(queueing.erlang_c(servers, rate_rps * mean_s))
        wait = float(queueing.ggc_wait(rate_rps, mean_s, scv, scv_arrival, servers))
    else:
        p_wait, wait = 0.0, 0.0
    tail = wait / p_wait if p_wait > 0 else 0.0
    return PathLatency(
        name=name, share=share, rate_rps=rate_rps, wait_mean_s=wait, prefill_mean_s=mean_s,
        transfer_mean_s=float(_mean(transfer, weights)), admission_mean_s=admission_s,
        ttft_mean_s=wait + float(_mean(fixed, weights)),
        zero_load_ttft_mean_s=float((service + transfer_alone).mean()),
        stages=tuple(stages), p_wait=p_wait, tail_mean_s=tail, fixed_s=fixed, fixed_weights=weights,
    )


def _mean(x: NDArray[np.float64], weights: NDArray[np.float64]) -> float:
    return float(x.mean()) if x.ndim == 1 else float(x.mean(axis=0) @ weights)


def sharing(rho: float, *, tail: float = 1e-9, max_classes: int = 400) -> tuple[NDArray[np.float64],
                                                                              NDArray[np.float64]]:
    """Slowdown classes of a transfer on a processor-sharing link at utilisation rho.

    An arriving transfer finds N others, P(N = k) = (1 - rho) rho^k (M/G/1-PS, insensitive to the
    size law), and is taken to share the link N + 1 ways for its whole life. The mean slowdown is
    1 / (1 - rho), the exact M/G/1-PS mean; the spread is what makes the exposed part of a
    pipelined transfer, max(x / n, x - T (n - 1) / n), longer than at the mean slowdown.
    Returns (slowdown per class, probability per class); the tail beyond ``tail`` joins the last.
    """
    k = np.arange(max_classes, dtype=np.float64)
    p = (1 - rho) * rho**k
    keep = max(int(np.searchsorted(np.cumsum(p), 1 - tail)) + 1, 1)
    p = p[:keep].copy()
    p[-1] += 1 - p.sum()
    return k[:keep] + 1, p


class _Law:
    """P(W + F > x) for a wait W (atom 1 - p at 0, exponential tail of mean tau) plus a discrete F.

    F takes the values ``fixed`` (nodes x slowdown classes) with probabilities (1/nodes) x
    ``columns``. Sorted once, so each evaluation is a binary search:
        P(W + F > x) = P(F > x) + p exp(-x / tau) sum_{f <= x} w_f exp(f / tau),
    the sum kept as a running log-sum-exp so that nothing overflows.
    """

    def __init__(self, weight: float, p_wait: float, tau: float, fixed: NDArray[np.float64],
                 columns: NDArray[np.float64]):
        w = np.broadcast_to(columns / fixed.shape[0], fixed.shape).ravel()
        order = np.argsort(fixed.ravel(), kind="stable")
        self.f = fixed.ravel()[order]
        self.w = w[order]
        self.above = np.concatenate([np.cumsum(self.w[::-1])[::-1], [0.0]])  # P(F >= f_k), and 0 past the end
        self.weight, self.p, self.tau = weight, p_wait, tau
        if tau > 0:
            with np.errstate(divide="ignore"):
                self.log_below = np.logaddexp.accumulate(np.log(self.w) + self.f / tau)

    def tail(self, x: float) -> float:
        k = int(np.searchsorted(self.f, x, side="right"))  # f[:k] <= x
        out = float(self.above[k])
        if k and self.tau > 0 and self.p > 0:
            out += self.p * float(np.exp(self.log_below[k - 1] - x / self.tau))
        return self.weight * out

    @property
    def upper(self) -> float:
        return float(self.f[-1]) + (40 * self.tau if self.tau > 0 else 0.0)


def mixture_quantile(q: float, parts) -> float:
    """The q-quantile of a mixture of (weight, p_wait, tail mean, fixed, columns) laws, by bisection."""
    laws = [p if isinstance(p, _Law) else _Law(*p) for p in parts]

    def tail(x: float) -> float:
        return sum(law.tail(x) for law in laws)

    lo, hi = 0.0, max(law.upper for law in laws) + 1e-9
    while tail(hi) > 1 - q:
        hi *= 2
    return bisect(lambda x: tail(x) > 1 - q, lo, hi, iterations=100, rtol=1e-9)[1]


def mixture_tail(x: float, parts) -> float:
    """P(TTFT > x) of a mixture of (weight, p_wait, tail mean, fixed, columns) laws: the weighted
    sum of each law's tail (the function ``mixture_quantile`` inverts); at most the weights' sum."""
    return float(sum((p if isinstance(p, _Law) else _Law(*p)).tail(x) for p in parts))


def mixture_cdf(x: NDArray[np.float64], parts) -> NDArray[np.float64]:
    """P(TTFT <= x) at each of ``x`` (s) of a mixture of (weight, p_wait, tail mean, fixed, columns)
    laws whose weights sum to 1: one minus ``mixture_tail``, each law sorted once for every x."""
    laws = [p if isinstance(p, _Law) else _Law(*p) for p in parts]
    return np.array([1.0 - sum(law.tail(float(v)) for law in laws) for v in np.asarray(x, dtype=np.float64)])


def overall(paths: list[PathLatency]) -> tuple[float, dict[float, float]]:
    """Mean and quantiles of TTFT over all requests (paths weighted by their share)."""
    active = [p for p in paths if p.share > 0]
    mean = sum(p.share * p.ttft_mean_s for p in active)
    laws = [_Law(p.share, p.p_wait, p.tail_mean_s, p.fixed_s, p.fixed_weights) for p in active]  # sorted once
    return mean, {q: mixture_quantile(q, laws) for q in QUANTILES}


def decode_admission(rate_rps: float, slots: int, hold_s: float) -> tuple[float, float]:
    """(mean wait for a decode slot, utilisation): N_d x BS_max slots held L_out x T_decode each."""
    rho = float(queueing.utilisation(rate_rps, hold_s, slots)) if rate_rps > 0 else 0.0
    if rho >= 1 or rate_rps <= 0:
        return 0.0, rho
    return float(queueing.mmc_wait(rate_rps, hold_s, slots)), rho
