"""The service laws of a scenario: prefill time on each instance type, KV bytes, the decode rate
(Eq. 5), the search space and prices; built once per command (``api.context``)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from prfaas_plan import units
from prfaas_plan.api.context import remembered
from prfaas_plan.api.holds import decode_context, require_fleet
from prfaas_plan.api.perf import gpu_lookup
from prfaas_plan.core import kv
from prfaas_plan.core.memory import holding
from prfaas_plan.core.optimize import Space
from prfaas_plan.core.profile import EXTRAPOLATION
from prfaas_plan.core.throughput import Curves
from prfaas_plan.core.timers import prefill_timer
from prfaas_plan.core.timing import PrefillTimer, Source
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.specs.decode import DERIVED, PINNED, DecodeShape
from prfaas_plan.specs.hardware import InstanceSpec
from prfaas_plan.specs.scenario import ScenarioSpec

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


def sum_price(*prices: float | None) -> float | None:
    return None if any(p is None for p in prices) else float(sum(p for p in prices if p is not None))
