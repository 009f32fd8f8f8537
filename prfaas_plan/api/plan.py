"""Library API of `optimize` and `sweep`: a scenario in, the best PrfaaS-PD plan and baselines out."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.api import staging
from prfaas_plan.api.context import remembered
from prfaas_plan.api.holds import decode_context, require_fleet
from prfaas_plan.api.perf import gpu_lookup
from prfaas_plan.core import kv
from prfaas_plan.core.memory import holding
from prfaas_plan.core.optimize import Search, Space, offload_all_threshold, search
from prfaas_plan.core.profile import EXTRAPOLATION
from prfaas_plan.core.throughput import Curves, Method, OperatingPoint, operating_point, routing
from prfaas_plan.core.timers import prefill_timer
from prfaas_plan.core.timing import PrefillTimer, Source
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.specs.decode import DERIVED, PINNED, DecodeDetail, DecodeShape
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.results import (
    HomogeneousBaseline,
    MethodPlan,
    NaiveBaseline,
    PlanResult,
    Pool,
    Priced,
    Ratios,
)
from prfaas_plan.specs.scenario import ClusterSpec, ScenarioSpec

MAX_THRESHOLDS = 20_000
MAX_CANDIDATES = 5_000_000  # ~40 MB a bound array; the case study weighs 7,168


@dataclass(frozen=True)
class Timing:
    """The service laws of one scenario: prefill on each instance type, link bytes, decode rate
    (unstaged from ``timing``; a plan's carries the staged rate at its threshold, ``api.staging``)."""

    curves: Curves
    sources: dict[str, str]
    decode_rps_per_instance: float
    decode_shape: DecodeShape


def decode_rate(sc: ScenarioSpec, instance: InstanceSpec) -> tuple[float, DecodeShape]:
    """Per-instance decode throughput BS_max / (T_decode * L_out) in req/s (Eq. 5), pinned or derived;
    a derived one at the scenario's decode time scale (a step x longer serves 1/x the requests)."""
    tpot = sc.tpot_slo_s
    if sc.decode.pinned:
        bs, step = sc.decode.bs_max, sc.decode.t_decode_s
        assert bs is not None and step is not None
        if step > tpot * (1 + 1e-9):
            raise InfeasibleError(
                f"decode: pinned T_decode {units.s_to_ms(step):g} ms misses the SLO of "
                f"{sc.decode_tokens_per_s:g} tokens/s ({units.s_to_ms(tpot):g} ms per token)", binding="decode")
        return bs / (step * sc.workload.output_tokens), DecodeShape(mode=PINNED, bs_max=bs, t_decode_s=step)
    from prfaas_plan.core.decode import decode_capacity

    context = decode_context(sc)
    cap = decode_capacity(sc.model, instance, tpot_s=tpot, context=context, output_tokens=sc.workload.output_tokens,
                          memory_fraction=sc.decode.memory_fraction)
    if cap.bs_max < 1:
        why = (holding(sc.model, instance, context, memory_fraction=sc.decode.memory_fraction).why()
               if cap.binding == "weights" else f"even batch 1 takes {units.s_to_ms(cap.step_s):.1f} ms per step")
        raise InfeasibleError(
            f"decode: no batch meets the SLO of {sc.decode_tokens_per_s:g} tokens/s "
            f"({units.s_to_ms(tpot):g} ms per token) on {instance.name} at {context:,.0f} tokens of context: {why}",
            binding="decode")
    return cap.requests_per_s / sc.time_scale[1], DecodeShape(
        mode=DERIVED, bs_max=cap.bs_max, t_decode_s=cap.step_s, context_tokens=context, bound_by=cap.binding,
        bs_slo=cap.bs_slo, bs_memory=cap.bs_memory)


def timing(sc: ScenarioSpec, local: InstanceSpec | None = None, *, homogeneous: bool = False) -> Timing:
    """The service laws on the scenario's prefill service and ``local`` (its PD instances by
    default); exits 1 first when an instance cannot hold the model (``api.holds``), the PD
    instances of homogeneous PD at every length. Built once per command (``api.context``)."""
    local = local or sc.local.instance
    return remembered("timing", (sc, local), (homogeneous,), lambda: _timing(sc, local, homogeneous=homogeneous))


def _timing(sc: ScenarioSpec, local: InstanceSpec, *, homogeneous: bool) -> Timing:
    require_fleet(sc, local, homogeneous=homogeneous)
    gpu_of = gpu_lookup(known=[*(c.instance.gpu for c in (sc.prfaas, sc.local, sc.homogeneous) if c), *sc.profile_gpus])
    tp = scaled(prefill_timer(sc.model, sc.prfaas.instance, gpu_of=gpu_of), sc.time_scale[0])
    tl = scaled(prefill_timer(sc.model, local, gpu_of=gpu_of), sc.time_scale[0])
    f = kv.footprint(sc.model)
    s_kv = tp.kv_bytes if tp.kv_bytes is not None else f.s_kv
    rate, detail = decode_rate(sc, local)
    return Timing(
        curves=Curves(t_prfaas=tp, t_local=tl, s_kv=s_kv),  # type: ignore[arg-type]
        sources={f"prefill {sc.prfaas.instance.name}": f"{tp.source}: {tp.detail}{_beyond(tp, sc)}",
                 f"prefill {local.name}": f"{tl.source}: {tl.detail}{_beyond(tl, sc)}",
                 "kv bytes": "measured profile" if tp.kv_bytes is not None else "kv engine",
                 "stack": stack_names(sc.prfaas.instance, local)},
        decode_rps_per_instance=rate,
        decode_shape=detail,
    )


def modelled(timer: PrefillTimer) -> bool:
    """A time of the time model (analytic, or a profile carried by its ratio), not a measurement."""
    return timer.source in (Source.ANALYTIC, Source.SCALED)


def scaled(timer: PrefillTimer, factor: float) -> PrefillTimer:
    """A modelled timer's seconds times ``factor``; a measured one as it is."""
    if factor == 1.0 or not modelled(timer):
        return timer
    inner = timer.seconds
    return replace(timer, seconds=lambda length: inner(length) * factor)


def stack_names(*instances: InstanceSpec) -> str:
    """The serving-stack profile(s) the instances' analytic times use (a GPU's own calibration by its source)."""
    names = dict.fromkeys(i.gpu.efficiency.stack or f"{i.gpu.name}'s own ({i.gpu.efficiency.source})"
                          for i in instances)
    return ", ".join(names)


def _beyond(timer: Any, sc: ScenarioSpec) -> str:
    """Where the workload runs past a measured profile: which side, and for what share of requests."""
    profile = getattr(timer, "profile", None)
    if profile is None:
        return ""
    lengths = sc.workload.lengths
    lo, hi = profile.lengths[0], profile.lengths[-1]
    below = 1.0 - float(lengths.tail_prob(lo - 1))  # whole tokens: P(L < lo)
    above = float(lengths.tail_prob(hi))
    sides = [f"{side} the measured {units.format_length(edge)} for {share:.2%} of requests"
             for side, edge, share in (("below", lo, below), ("beyond", hi, above)) if share > 0]
    return f"; extrapolated {' and '.join(sides)} ({EXTRAPOLATION})" if sides else ""


def search_space(sc: ScenarioSpec) -> Space:
    s = sc.search
    count = (s.threshold_max - s.threshold_min) / s.threshold_step
    if count > MAX_THRESHOLDS:  # a range of many decades: log steps instead (the root finder refines t)
        thresholds = np.geomspace(max(s.threshold_min, 1.0), s.threshold_max, MAX_THRESHOLDS)
    else:
        thresholds = np.arange(s.threshold_min, s.threshold_max + s.threshold_step / 2, s.threshold_step)
    thresholds = np.unique(np.append(thresholds[thresholds <= s.threshold_max], s.threshold_max))
    if s.size_prfaas:
        n_max = s.max_prfaas_instances or sc.prfaas.instances
        n_prfaas = np.arange(1, n_max + 1, dtype=np.int64)
    else:
        n_prfaas = np.array([sc.prfaas.instances], dtype=np.int64)
    space = Space(thresholds=thresholds, n_prfaas=n_prfaas, n_local=sc.local.instances)
    if space.size > MAX_CANDIDATES:  # the grid is evaluated in memory, 8 bytes a candidate per bound
        sizes = f"{len(thresholds):,} thresholds x {len(space.n_p):,} splits x {len(n_prfaas):,} PrfaaS sizes"
        raise SpecError(f"the search would weigh {space.size:,} candidates ({sizes}); at most {MAX_CANDIDATES:,}: "
                        "fewer local instances (clusters.local.instances), a coarser search.threshold.step or a "
                        "smaller search.max_prfaas_instances", field="search")
    return space


def cost_per_million(price_per_hour: float | None, lam: float) -> float | None:
    """Dollars per million requests served at Lambda_max; None without a price, a rate, or where
    it passes the largest float (a rate near 1e-300 req/s: no number to print)."""
    if price_per_hour is None or lam <= 0:
        return None
    with np.errstate(over="ignore"):
        cost = float(np.float64(price_per_hour) / (lam * units.HOUR) * units.MILLION)
    return cost if math.isfinite(cost) else None


def homogeneous_splits(sc: ScenarioSpec, cluster: ClusterSpec, method: Method) -> tuple[Timing, list[OperatingPoint]]:
    """Homogeneous PD, every request prefilled locally at its full length: each integer split N_p / N_d."""
    t = timing(sc, cluster.instance, homogeneous=True)
    r = routing(sc.workload.lengths, t.curves, [sc.workload.lengths.hi], method)
    return t, [operating_point(r, 0, n_prfaas=0, n_p=n_p, n_d=cluster.instances - n_p, link_bytes_per_s=1.0,
                               decode_rps_per_instance=t.decode_rps_per_instance)
               for n_p in range(1, cluster.instances)]


def homogeneous(sc: ScenarioSpec, cluster: ClusterSpec, method: Method) -> HomogeneousBaseline:
    """Homogeneous PD at its best split."""
    best = max(homogeneous_splits(sc, cluster, method)[1], key=lambda op: op.lambda_max_rps)
    return HomogeneousBaseline(hardware=cluster.instance.gpu.name, gpus=cluster.gpus, instances=cluster.instances,
                               point=best, cost=Priced(price_per_hour=cluster.price_per_hour,
                                                       cost_per_million_requests=cost_per_million(cluster.price_per_hour,
                                                                                       best.lambda_max_rps)))


def naive(sc: ScenarioSpec, t: Timing, method: Method) -> NaiveBaseline:
    """Naive heterogeneous PD: all prefill on the PrfaaS cluster, all local instances decode."""
    r = routing(sc.workload.lengths, t.curves, [offload_all_threshold(sc.workload.lengths)], method)
    op = operating_point(r, 0, n_prfaas=sc.prfaas.instances, n_p=0, n_d=sc.local.instances,
                         link_bytes_per_s=sc.link.usable_bytes_per_s, decode_rps_per_instance=t.decode_rps_per_instance)
    price = sum_price(sc.prfaas.price_per_hour, sc.local.price_per_hour)
    return NaiveBaseline(point=op, cost=Priced(price_per_hour=price,
                                               cost_per_million_requests=cost_per_million(price, op.lambda_max_rps)))


def sum_price(*prices: float | None) -> float | None:
    return None if any(p is None for p in prices) else float(sum(p for p in prices if p is not None))


def staged_search(sc: ScenarioSpec, t: Timing, space: Space, m: Method) -> tuple[Search, Timing, DecodeDetail]:
    """The search at the decode rate with staging at its own threshold (``api.staging``'s fixed
    point), the timing with that rate and the plan's decode dict."""

    def solve(rates: tuple[float, ...]) -> Search:
        return search(sc.workload.lengths, t.curves, space, method=m, link_bytes_per_s=sc.link.usable_bytes_per_s,
                      decode_rps_per_instance=rates[0], top=sc.search.top)

    def own(res: Search) -> tuple[float, ...]:
        return (staging.rate(t, staging.site_staging(t, sc, res.best.threshold_tokens, m)),)

    rounds = staging.fixed_point(solve, own, (t.decode_rps_per_instance,))
    res, rate = rounds[-1][0], rounds[-1][1][0]
    if not staging.converged(rounds):  # each round's best at its own staged rate; the highest
        res, rate = max(((_at_rate(sc, t, r, m, mine[0]), mine[0]) for r, _, mine in rounds),
                        key=lambda x: x[0].best.lambda_max_rps)
    b = res.best
    st = staging.site_staging(t, sc, b.threshold_tokens, m)
    decode = staging.detail(t, sc, st, lambda_rps=b.lambda_max_rps, p_offload=b.p_offload, n_d=b.n_d,
                            rounds=len(rounds))
    return res, replace(t, decode_rps_per_instance=rate), decode


def _at_rate(sc: ScenarioSpec, t: Timing, res: Search, m: Method, rate: float) -> Search:
    """``res`` with its best configuration evaluated at decode rate ``rate``."""
    b = res.best
    r = routing(sc.workload.lengths, t.curves, [b.threshold_tokens], m)
    best = operating_point(r, 0, n_prfaas=b.n_prfaas, n_p=b.n_p, n_d=b.n_d, link_bytes_per_s=sc.link.usable_bytes_per_s,
                           decode_rps_per_instance=rate)
    return replace(res, best=best, top=(best, *res.top[1:]), refined=False)


def naive_timing(sc: ScenarioSpec, t: Timing, m: Method) -> Timing:
    """``t`` with the decode rate staged at naive heterogeneous PD's threshold (every request offloaded)."""
    st = staging.site_staging(t, sc, offload_all_threshold(sc.workload.lengths), m)
    return replace(t, decode_rps_per_instance=staging.rate(t, st))


@dataclass(frozen=True)
class Plan:
    """The typed result (``result``) with the searches, service laws and scenario behind it (its
    JSON is written at the edge, ``report.plan_json``). ``timing`` carries the headline method's
    decode rate with staging at its plan's threshold."""

    result: PlanResult
    searches: dict[str, Search]
    timing: Timing
    scenario: ScenarioSpec


def _ratios(best: OperatingPoint, price: float | None, hom: HomogeneousBaseline | None,
            nv: NaiveBaseline | None) -> Ratios:
    if hom is None:
        return Ratios()
    h = hom.point.lambda_max_rps
    equal_cost = (best.lambda_max_rps / price) / (h / hom.cost.price_per_hour) \
        if price and hom.cost.price_per_hour else None
    return Ratios(prfaas_vs_homogeneous=best.lambda_max_rps / h,
                  naive_vs_homogeneous=nv.point.lambda_max_rps / h if nv else None,
                  prfaas_vs_homogeneous_equal_cost=equal_cost)


def plan(sc: ScenarioSpec, *, methods: tuple[str, ...] = ("paper", "exact")) -> Plan:
    """Search t and the split under each method; the scenario's method is the headline (the
    plan under a TTFT SLO is ``api.optimize.optimize``'s). Searched once per command."""
    return remembered("plan", (sc,), (tuple(methods),), lambda: _plan(sc, methods))


def _plan(sc: ScenarioSpec, methods: tuple[str, ...]) -> Plan:
    t = timing(sc)
    space = search_space(sc)
    per: dict[str, MethodPlan] = {}
    searches: dict[str, Search] = {}
    timings: dict[str, Timing] = {}
    chosen = Method(sc.search.method)
    order = [chosen] + [Method(m) for m in methods if Method(m) != chosen]
    for m in order:
        t0 = time.perf_counter()
        res, timings[str(m)], decode = staged_search(sc, t, space, m)
        elapsed = time.perf_counter() - t0
        searches[str(m)] = res
        if res.best.lambda_max_rps <= 0:
            raise InfeasibleError(f"no configuration serves any load; binding: {res.best.binding}",
                                  binding=str(res.best.binding))
        price = sum_price(sc.prfaas.price_for(res.best.n_prfaas), sc.local.price_per_hour)
        hom = homogeneous(sc, sc.homogeneous, m) if sc.homogeneous else None
        nv = naive(sc, naive_timing(sc, t, m), m) if sc.naive_heterogeneous else None
        per[str(m)] = MethodPlan(
            method=str(m), best=res.best, cost=Priced(price_per_hour=price,
                                                      cost_per_million_requests=cost_per_million(
                                                          price, res.best.lambda_max_rps)),
            top=res.top, homogeneous=hom, naive=nv, ratios=_ratios(res.best, price, hom, nv),
            refined_threshold=res.refined, evaluations=res.evaluations, search_s=elapsed, decode=decode)
    w, topo = sc.workload, sc.topology
    result = PlanResult(
        scenario=sc.name, model=sc.model.name, method=str(chosen), methods=per,
        mean_input_tokens=w.input_total_mean, mean_uncached_tokens=float(w.lengths.mean), output_tokens=w.output_tokens,
        prefix_hit_rate=w.prefix_hit_rate, hit_rate_source=w.hit_rate_source, distribution=w.description,
        requests=None if w.trace is None else len(w.trace),
        prfaas=Pool(hardware=sc.prfaas.instance.gpu.name, gpus_per_instance=sc.prfaas.instance.gpus,
                    instances=sc.prfaas.instances),
        local=Pool(hardware=sc.local.instance.gpu.name, gpus_per_instance=sc.local.instance.gpus,
                   instances=sc.local.instances),
        prefill_site=topo.prefill.name, pd_site=topo.sites[0].name, link=topo.links[0].name,
        link_bandwidth_bytes_per_s=sc.link.bandwidth_bytes_per_s, link_usable_fraction=sc.link.usable_fraction,
        link_usable_bytes_per_s=sc.link.usable_bytes_per_s,
        decode=per[str(chosen)].decode, sources=t.sources,
        thresholds=len(space.thresholds), n_prfaas_options=len(space.n_prfaas),
        max_prfaas_instances=int(space.n_prfaas.max()), splits=len(space.n_p), evaluations=space.size)
    return Plan(result=result, searches=searches, timing=timings[str(chosen)], scenario=sc)
