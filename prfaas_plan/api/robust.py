"""Bandwidth that varies (issue 11 item 3): how a plan holds up when a link's bandwidth follows a
law (``specs.bandwidth``), and the plan for a percentile of it (`optimize --plan-at p10`).

Two plans, each a configuration (every site's t_i and N_p,i, N_prfaas) held fixed:
- *nominal*: optimised at each link's median bandwidth (its single number, what `optimize`
  plans without a law);
- *safe*: optimised at each link's P10 bandwidth (and, with ``--plan-at pNN`` at another level,
  that plan too: the headline then).
Each is re-evaluated with ``core.joint.point`` at each link's P50, P10 and P1 bandwidth: only the
link bounds fall with the bandwidth (the routing and the other stages stay as planned, decode
at the rate the plan was made with). Over the law: the expected served rate
E_B[min(rate, Lambda(B))] and the fraction of time the demand fits, P_B(Lambda(B) >= rate), at the
scenario's ``workload.rate_rps``, else at 0.8 x the nominal plan's Lambda_max.

Several links: all at the same percentile of their own laws (comonotone: a bad hour is bad on
every link), so the laws combine into one law over U ~ Uniform(0, 1), every link at Q_i(U);
a link without a law keeps its bandwidth. A link at 0 (down) that the plan sends requests over
serves nothing: Lambda 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from prfaas_plan.api.headline import planned
from prfaas_plan.api.plan import Plan
from prfaas_plan.core import joint
from prfaas_plan.core.stages import SiteModel, compute_bound, stage_bounds
from prfaas_plan.core.throughput import Method
from prfaas_plan.errors import SpecError
from prfaas_plan.specs.bandwidth import BandwidthLaw
from prfaas_plan.specs.robust import AtBandwidth, LinkBandwidth, Robustness, RobustPlan, SiteConfig
from prfaas_plan.specs.scenario import ScenarioSpec

LEVELS = ("p50", "p10", "p1")  # the percentiles every plan is evaluated at
SAFE = "p10"  # the robust plan's
DEFAULT_LOAD = 0.8  # of the nominal plan's Lambda_max, without a workload.rate_rps
_FITS_RTOL = 1e-9  # Lambda(B) within this of the rate counts as fitting
_CUT_ATOL = 1e-12  # cumulative weights of two laws closer than this are one cut
_PERCENTILE = re.compile(r"^[pP](\d{1,2}(?:\.\d+)?)$")


def laws(sc: ScenarioSpec) -> list[BandwidthLaw | None]:
    topo = sc.topology
    return [lk.link.bandwidth_law for lk in topo.links]


def has_law(sc: ScenarioSpec) -> bool:
    return any(law is not None for law in laws(sc))


def level(text: str) -> tuple[str, float]:
    """``p10`` -> ("p10", 0.10); any pNN with 0 < NN < 100; SpecError naming --plan-at if not."""
    m = _PERCENTILE.match(text.strip())
    nn = float(m.group(1)) if m else math.nan
    if not 0 < nn < 100:
        raise SpecError(f"{text!r} is not a percentile: give pNN with 0 < NN < 100 (p50, p10, p1)", field="--plan-at")
    return f"p{nn:g}", nn / 100


def plan_level(sc: ScenarioSpec, plan_at: str | None) -> tuple[str, float] | None:
    """The --plan-at level, checked; None without the option."""
    if plan_at is None:
        return None
    lv = level(plan_at)
    if not has_law(sc):
        raise SpecError(f"{plan_at} is a percentile of a link's bandwidth law, and no link has one: give "
                        "link.bandwidth (or links[i].bandwidth) as {kind: empirical|quantiles|series, ...}",
                        field="--plan-at")
    down = _down(sc, lv[1])
    if down is not None:
        raise SpecError(f"at {lv[0].upper()} {down}: a plan there sends nothing over it; plan at a higher "
                        "percentile", field="--plan-at")
    return lv


def _down(sc: ScenarioSpec, q: float) -> str | None:
    """Which link is down (bandwidth 0) at quantile q, in words; None if none is."""
    topo = sc.topology
    for lk, law, b in zip(topo.links, laws(sc), bandwidths(sc, q), strict=True):
        if b <= 0 and law is not None:
            return f"link {lk.name} is down (bandwidth 0 for {law.down_fraction:.1%} of the time)"
    return None


def bandwidths(sc: ScenarioSpec, q: float) -> list[float]:
    """Every link's bandwidth at quantile q of its law (its own bandwidth without one)."""
    topo = sc.topology
    return [lk.link.bandwidth_bytes_per_s if law is None else law.quantile(q)
            for lk, law in zip(topo.links, laws(sc), strict=True)]


def at_bandwidths(sc: ScenarioSpec, bws: Sequence[float]) -> ScenarioSpec:
    """The scenario with link i at bandwidth ``bws[i]`` (its law kept): as ``--set links[i].bandwidth``."""
    topo = sc.topology
    links = tuple(replace(lk, link=replace(lk.link, bandwidth_bytes_per_s=b))
                  for lk, b in zip(topo.links, bws, strict=True))
    return replace(sc, topology=replace(topo, links=links))


def at_level(sc: ScenarioSpec, q: float) -> ScenarioSpec:
    return at_bandwidths(sc, bandwidths(sc, q))


# --- a held configuration across bandwidths


def _usable(link: Any, b: float) -> float:
    """B_out of ``link`` with its line at ``b`` bytes/s (fraction, share cap and stream limits kept)."""
    return replace(link, bandwidth_bytes_per_s=b).usable_bytes_per_s


def _held(sc: ScenarioSpec, p: Plan) -> tuple[list[SiteModel], list[Any], float]:
    """The plan's site models (its decode rates), its configuration as one candidate per site, N_prfaas."""
    m = Method(sc.search.method)
    models, best = list(p.models), p.result.head.best
    conf = [(s.threshold_tokens, s.n_p) for s in best.sites]
    n_prfaas = float(best.n_prfaas)
    cands = [joint.at(md, [t], n_p, m) for md, (t, n_p) in zip(models, conf, strict=True)]
    return models, cands, n_prfaas


def evaluate(sc: ScenarioSpec, models: list[SiteModel], cands: list[Any], n_prfaas: float,
             bws: Sequence[float]) -> tuple[float, str]:
    """(Lambda_max, binding) of the held configuration with link i at ``bws[i]`` bytes/s."""
    topo = sc.topology
    at = []
    for md, c, lk, b in zip(models, cands, topo.links, bws, strict=True):
        if b <= 0:
            if float(c.p[0]) > 0:  # the plan sends requests over a link that is down
                return 0.0, f"link {lk.name} (down)"
            b = lk.link.bandwidth_bytes_per_s  # nothing crosses it: its bound is unconstrained anyway
        at.append(replace(md, link_bytes_per_s=_usable(lk.link, b)))
    pt = joint.point(at, cands, [0] * len(cands), n_prfaas)
    return pt.lambda_max_rps, pt.binding


def lambdas(sc: ScenarioSpec, models: list[SiteModel], cands: list[Any], n_prfaas: float,
            bws: Sequence[Sequence[float]]) -> np.ndarray:
    """Lambda_max of the held configuration at each row of link bandwidths ``bws[k][i]``, all at
    once: ``joint.point``'s minimum of the same stage bounds (``core.stages``), the link bounds
    evaluated per row (a link at 0 that carries requests bounds Lambda at 0)."""
    topo = sc.topology
    k = len(bws)
    lam = np.full(k, np.inf)
    load = 0.0
    for i, (md, c, lk) in enumerate(zip(models, cands, topo.links, strict=True)):
        usable = np.array([_usable(lk.link, row[i]) for row in bws])

        def rows(a: Any) -> np.ndarray:
            return np.broadcast_to(np.asarray(a), (k,))

        st = stage_bounds(p=rows(c.p), t_long_s=rows(c.t_long_s), s_long_bytes=rows(c.s_long_bytes),
                          t_short_s=rows(c.t_short_s), n_p=rows(c.n_p), n_d=rows(md.n_local - c.n_p),
                          demand_share=md.demand_share, link_bytes_per_s=usable,
                          decode_rps_per_instance=md.decode_rps_per_instance)  # type: ignore[arg-type]
        lam = np.minimum(lam, st.local)
        load += float(st.compute_load[0])
    return np.minimum(lam, compute_bound(n_prfaas, load))


def states(sc: ScenarioSpec) -> list[tuple[float, list[float]]]:
    """The comonotone law of every link's bandwidth: (weight, bandwidth of each link) per state."""
    ls = laws(sc)
    cuts = sorted({c for law in ls if law is not None for c in law.cumulative[:-1]})
    merged: list[float] = []
    for c in cuts:
        if not merged or c - merged[-1] > _CUT_ATOL:
            merged.append(c)
    out, lo = [], 0.0
    for hi in [*merged, 1.0]:
        if hi - lo > _CUT_ATOL:
            out.append((hi - lo, bandwidths(sc, (lo + hi) / 2)))
        lo = hi
    return out


def _robust_plan(sc: ScenarioSpec, name: str, planned_at: str, headline: bool, p: Plan,
                 levels: Sequence[tuple[str, float]], weighted: list[tuple[float, list[float]]],
                 rate: float) -> RobustPlan:
    models, cands, n_prfaas = _held(sc, p)
    at = []
    for label, q in levels:
        lam, binding = evaluate(sc, models, cands, n_prfaas, bandwidths(sc, q))
        at.append(AtBandwidth(percentile=label, lambda_max_rps=lam, binding=binding))
    w = np.array([x for x, _ in weighted])
    lam = lambdas(sc, models, cands, n_prfaas, [b for _, b in weighted])
    served = w * np.minimum(rate, lam)
    fits = np.where(lam >= rate * (1 - _FITS_RTOL), w, 0.0)
    topo = sc.topology
    sites = tuple(SiteConfig(site=s.name, threshold_tokens=float(c.t[0]), n_p=int(c.n_p[0]),
                             n_d=md.n_local - int(c.n_p[0]), p_offload=float(c.p[0]))
                  for s, md, c in zip(topo.sites, models, cands, strict=True))
    return RobustPlan(name=name, planned_at=planned_at, headline=headline, n_prfaas=round(n_prfaas), sites=sites,
                      at=tuple(at), expected_served_rps=math.fsum(served.tolist()),
                      fits_fraction=min(math.fsum(fits.tolist()), 1.0),
                      rate_rps=rate)


def _link_summary(sc: ScenarioSpec, levels: Sequence[tuple[str, float]]) -> tuple[LinkBandwidth, ...]:
    topo = sc.topology
    out = []
    for i, (lk, law) in enumerate(zip(topo.links, laws(sc), strict=True)):
        per = {label: bandwidths(sc, q)[i] for label, q in levels}
        out.append(LinkBandwidth(
            link=lk.name, kind=None if law is None else law.kind, source="" if law is None else law.source,
            samples=0 if law is None else law.samples, percentiles_bytes_per_s=per,
            usable_bytes_per_s={k: _usable(lk.link, b) for k, b in per.items()},
            mean_bytes_per_s=lk.link.bandwidth_bytes_per_s if law is None else law.mean_bytes_per_s,
            down_fraction=0.0 if law is None else law.down_fraction))
    return tuple(out)


def robustness(sc: ScenarioSpec, headline: Plan,
               plan_at: tuple[str, float] | None = None) -> Robustness:
    """The nominal and the safe plan (and the --plan-at one) across the law; ``headline`` is the
    plan `optimize` shows: the nominal one, or the one at ``plan_at``."""
    at_q = None if plan_at is None else plan_at[1]
    levels = [(label, float(label[1:]) / 100) for label in LEVELS]
    if plan_at is not None and plan_at[0] not in LEVELS:
        levels.append(plan_at)
    levels.sort(key=lambda x: -x[1])
    nominal = headline if at_q in (None, 0.5) else planned(sc)
    down = _down(sc, 0.1)
    safe = headline if at_q == 0.1 else None if down else planned(at_level(sc, 0.1))
    notes = () if safe is not None else (f"No safe plan: at P10 {down}.",)
    rate_given = sc.workload.rate_rps
    lam_nominal = nominal.result.head.best.lambda_max_rps
    rate = rate_given if rate_given is not None else DEFAULT_LOAD * lam_nominal
    source = "workload.rate_rps" if rate_given is not None else f"{DEFAULT_LOAD:g} x the nominal plan's Lambda_max"
    weighted = states(sc)
    head_label = "p50" if plan_at is None else plan_at[0]
    plans = [_robust_plan(sc, "nominal", "p50", head_label == "p50", nominal, levels, weighted, rate)]
    if safe is not None:
        plans.append(_robust_plan(sc, "safe", SAFE, head_label == SAFE, safe, levels, weighted, rate))
    if plan_at is not None and head_label not in ("p50", SAFE):
        plans.append(_robust_plan(sc, "plan-at", head_label, True, headline, levels, weighted, rate))
    return Robustness(rate_rps=rate, rate_source=source, percentiles=tuple(label for label, _ in levels),
                      links=_link_summary(sc, levels), comonotone=sum(law is not None for law in laws(sc)) > 1,
                      plans=tuple(plans),
                      plan_at=None if plan_at is None else plan_at[0], states=len(weighted), notes=notes)
