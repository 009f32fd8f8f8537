"""The optimizer under a TTFT SLO: the highest arrival rate whose TTFT statistic meets the bound.

Throughput alone (Eq. 6) lets queues grow without limit near Lambda_max. With ``slo.ttft`` set,
a configuration's rate is the largest lambda < Lambda_max with TTFT_stat(lambda) <= bound, from
the analytic latency model (``core.latency``); TTFT grows with lambda, so bisection finds it.
Candidates: every split of the search space at a coarse log grid of thresholds plus each split's
throughput-best t, and the two special cases of the throughput search (every request offloaded
with N_p = 0, none offloaded; ``core.optimize.special_cases``), then a local refinement of t
around the winner. Splits whose throughput
bound cannot beat the best rate found so far are skipped, and so is a candidate whose TTFT at
that rate already misses the bound.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from prfaas_plan.api.grid import homogeneous_splits
from prfaas_plan.api.latency import site_latency
from prfaas_plan.api.laws import Timing
from prfaas_plan.api.systems import HOMOGENEOUS, NAIVE, PRFAAS, systems
from prfaas_plan.core.optimize import Search, special_cases
from prfaas_plan.core.roots import bisect
from prfaas_plan.core.throughput import Method, operating_point, routing
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.specs.latency import SystemTiming
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.slo import SloPlan, SloPoint
from prfaas_plan.specs.system import SystemConfig

SEARCH_NODES = 400  # quantile nodes per path while searching; the answer is re-evaluated with 2000
COARSE_THRESHOLDS = 16
BISECTIONS = 14


def statistic(r: SystemTiming, stat: str) -> float:
    value = r.statistic(stat)
    assert value is not None  # asked only of a stable timing
    return float(value)


def _within(r: SystemTiming, bound: float, stat: str) -> bool:
    return r.stable and statistic(r, stat) <= bound


def _meets(sc: ScenarioSpec, c: SystemConfig, rate: float, bound: float, stat: str) -> bool:
    return _within(site_latency(sc, c, rate, nodes=SEARCH_NODES), bound, stat)


def max_rate(sc: ScenarioSpec, c: SystemConfig, bound: float, stat: str, floor: float = 0.0) -> float | None:
    """Largest rate in (floor, capacity) meeting the bound; None if none above ``floor`` does."""
    cap = c.capacity_rps * (1 - 1e-6)
    lo = max(floor, cap * 1e-6)
    if not _meets(sc, c, lo, bound, stat):
        return None
    if _meets(sc, c, cap, bound, stat):
        return cap
    return bisect(lambda rate: _meets(sc, c, rate, bound, stat), lo, cap, iterations=BISECTIONS)[0]


def _config(base: SystemConfig, sc: ScenarioSpec, t: Timing, threshold: float, n_prfaas: int, n_p: int,
            n_d: int) -> SystemConfig:
    r = routing(sc.workload.lengths, t.curves, [threshold], Method.EXACT)
    op = operating_point(r, 0, n_prfaas=n_prfaas, n_p=n_p, n_d=n_d, link_bytes_per_s=sc.link.usable_bytes_per_s,
                         decode_rps_per_instance=t.decode_rps_per_instance)
    return replace(base, threshold_tokens=threshold, n_prfaas=n_prfaas, n_p=n_p, n_d=n_d,
                   capacity_rps=op.lambda_max_rps, capacity_binding=str(op.binding))


def _result(sc: ScenarioSpec, c: SystemConfig, rate: float, bound: float, stat: str) -> SloPoint:
    """The configuration at its rate, re-evaluated with the full node grid (the search used fewer
    nodes; where that moved the statistic past the bound, the rate is bisected down again)."""
    r = site_latency(sc, c, rate)
    if not _within(r, bound, stat):
        rate = bisect(lambda x: _within(site_latency(sc, c, x), bound, stat), rate * 0.9, rate, iterations=10)[0]
        r = site_latency(sc, c, rate)
    return SloPoint(threshold_tokens=c.threshold_tokens, n_prfaas=c.n_prfaas, n_p=c.n_p, n_d=c.n_d,
                    lambda_ttft_rps=rate, capacity_rps=c.capacity_rps, load=rate / c.capacity_rps,
                    binding="ttft" if rate < c.capacity_rps * (1 - 1e-4) else c.capacity_binding,
                    ttft_mean_s=r.ttft_mean_s, ttft_p90_s=r.ttft_p90_s, ttft_p99_s=r.ttft_p99_s,
                    ttft_at_rate_s=statistic(r, stat))


def bounded(sc: ScenarioSpec, t: Timing, res: Search) -> SloPlan:
    """PrfaaS-PD and the baselines under the TTFT SLO; raises InfeasibleError if nothing meets it."""
    t0 = time.perf_counter()
    bound, stat = sc.ttft_slo_s, sc.ttft_statistic
    assert bound is not None
    configs = systems(sc)
    space = res.space
    per_split, t_index = res.split_maxima()  # (N_prfaas options, N_p options): max and argmax over t
    best_t = res.routing.t[t_index]
    lengths = sc.workload.lengths
    coarse = np.geomspace(max(space.thresholds[0], 1.0), space.thresholds[-1], COARSE_THRESHOLDS)
    base = configs[PRFAAS]
    best: tuple[float, SystemConfig] | None = None
    order = np.argsort(per_split, axis=None)[::-1]
    for idx in order:
        ki, si = np.unravel_index(idx, per_split.shape)
        if best is not None and per_split[ki, si] <= best[0]:
            break
        n_prfaas, n_p = int(space.n_prfaas[ki]), int(space.n_p[si])
        for th in np.unique(np.append(coarse, best_t[ki, si])):
            c = _config(base, sc, t, float(th), n_prfaas, n_p, space.n_local - n_p)
            if best is not None and c.capacity_rps <= best[0]:
                continue
            rate = max_rate(sc, c, bound, stat, floor=best[0] if best else 0.0)
            if rate is not None and (best is None or rate > best[0]):
                best = (rate, c)
    for op in special_cases(lengths, t.curves, space, method=Method.EXACT, link_bytes_per_s=sc.link.usable_bytes_per_s,
                            decode_rps_per_instance=t.decode_rps_per_instance):
        assert op.threshold_tokens is not None
        c = _config(base, sc, t, op.threshold_tokens, op.n_prfaas, op.n_p, op.n_d)
        if best is not None and c.capacity_rps <= best[0]:
            continue
        rate = max_rate(sc, c, bound, stat, floor=best[0] if best else 0.0)
        if rate is not None and (best is None or rate > best[0]):
            best = (rate, c)
    if best is None:
        zero = site_latency(sc, base, base.capacity_rps * 1e-6)
        raise InfeasibleError(
            f"ttft: no configuration meets {stat} TTFT <= {bound:g} s; at zero load the throughput-best one has "
            f"{stat} TTFT {statistic(zero, stat):.3f} s (prefill and transfer alone)", binding="ttft")
    # refine t around the winner: a finer log grid between its coarse neighbours
    rate, c = best
    assert c.threshold_tokens is not None
    step = (coarse[-1] / coarse[0]) ** (1 / (COARSE_THRESHOLDS - 1))
    for th in np.geomspace(c.threshold_tokens / step, c.threshold_tokens * step, 9):
        if not lengths.lo - 1 <= th <= space.thresholds[-1]:
            continue
        cand = _config(base, sc, t, float(th), c.n_prfaas, c.n_p, c.n_d)
        r2 = max_rate(sc, cand, bound, stat, floor=rate) if cand.capacity_rps > rate else None
        if r2 is not None and r2 > rate:
            rate, c = r2, cand
    prfaas = _result(sc, c, rate, bound, stat)
    out: dict[str, SloPoint | None] = {}
    for name in (HOMOGENEOUS, NAIVE):
        if name not in configs:
            out[name] = None
            continue
        cands = [configs[name]]
        if name == HOMOGENEOUS and sc.homogeneous is not None:  # every split of the homogeneous cluster
            _, splits = homogeneous_splits(sc, sc.homogeneous, Method.EXACT)
            cands = [replace(configs[name], n_p=op.n_p, n_d=op.n_d, capacity_rps=op.lambda_max_rps,
                             capacity_binding=str(op.binding)) for op in splits]
        found = [(r, c2) for c2 in cands if (r := max_rate(sc, c2, bound, stat)) is not None]
        if found:
            r_best, c_best = max(found, key=lambda x: x[0])
            out[name] = _result(sc, c_best, r_best, bound, stat)
        else:
            out[name] = None
    hom = out[HOMOGENEOUS]
    return SloPlan(bound_s=bound, statistic=stat, prfaas=prfaas, homogeneous=hom, naive_heterogeneous=out[NAIVE],
                   prfaas_vs_homogeneous=prfaas.lambda_ttft_rps / hom.lambda_ttft_rps if hom else None,
                   search_s=time.perf_counter() - t0)

