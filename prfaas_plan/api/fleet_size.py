"""`size` for several models: the cheapest prefill service, PD fleets and link tiers for their demands.

Every stage is sized for Lambda = D / h (``sizing.demand`` is the total; model m gets its
demand share of it, split over its sites as in the scenario). Model m at PD site i and threshold t
needs, on a site of local kind j and a service of kind k (Eqs. 3-5 read the other way round,
``core.sizing``):

    N_p = ceil(r (1 - p) T_local,j)    N_d = ceil(r / r_d,j)    a = ceil(r p T_prfaas,k)    bytes r p S_kv

with r its rate. Every instance holds one model, so the service's a instances are the entry's own
and its cost is additive; only the link couples a site's models: one tier carries all their KV.
So per site and local kind each model's (bytes, cost) candidates reduce to their Pareto frontier,
the models' frontiers are merged (Minkowski sum, ``core.sizing.merge``), and each tier takes the
cheapest merged point it carries: exact over every threshold of every model, per site, per kind.

Beside it, what sharing is weighed against: each model sized alone (``api.size``: its own
service and links), and each model on its cheapest homogeneous PD fleet.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from prfaas_plan import units
from prfaas_plan.api import size as single
from prfaas_plan.api.fleet_size_ttft import STEP, STEPS, bought, misses
from prfaas_plan.api.size_grid import Laws, SiteLaws, laws
from prfaas_plan.api.size_solve import usable_at_tier
from prfaas_plan.core import sizing as ks
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.specs.fleet import FleetSizedEntry, FleetSizedSite, FleetSizingResult, FleetSpec
from prfaas_plan.specs.sizing import Option, SizingSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    model: str
    law: SiteLaws  # the model's laws at its site
    laws: Laws
    rate_share: float  # of the total demand


@dataclass(frozen=True, slots=True, kw_only=True)
class _Cand:
    """One entry's candidates (K,) under one (prefill kind, local kind)."""

    n_p: np.ndarray
    n_d: np.ndarray
    a: np.ndarray
    carried: np.ndarray  # bytes/s at Lambda
    egress: np.ndarray  # dollars per hour at the demand
    cost: np.ndarray  # dollars per hour without the link; inf: infeasible


def candidates(e: _Entry, spec: SizingSpec, pre: Option | None, loc: Option, lam: float, demand: float,
          alone: bool) -> _Cand:
    law = e.law
    r = lam * e.rate_share
    p = law.p.copy()
    can_offload = pre is not None and not e.laws.prefill_why[pre.name]
    t_long = law.t_long_s[pre.name] if can_offload else np.zeros_like(p)
    s_long = law.s_long_bytes[pre.name] if can_offload else np.zeros_like(p)
    dec = law.decode_rps[loc.name]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        n_p = np.where(p >= 1, 0.0, np.maximum(ks.need(r * (1 - p) * law.t_short_s[loc.name]), 1.0))
        n_d = np.full_like(p, ks.need(r / dec) if dec > 0 else np.inf)
        if alone:  # a site of one model keeps the smallest PD cluster (one prefill, one decode)
            n_d = np.maximum(n_d, ks.MIN_SITE - n_p)
        a = np.where(p > 0, np.maximum(ks.need(r * p * t_long), 1.0), 0.0)
        carried = np.where(p > 0, r * p * s_long, 0.0)
        egress = np.where(p > 0, demand * e.rate_share * p * s_long, 0.0) * spec.egress_price_per_byte * units.HOUR
    ok = np.isfinite(n_p) & np.isfinite(n_d) & (can_offload | (p <= 0))
    price_k = pre.price_per_instance_hour if pre is not None else 0.0
    cost = np.where(ok, (n_p + n_d) * loc.price_per_instance_hour + a * price_k + egress, np.inf)
    return _Cand(n_p=n_p, n_d=n_d, a=a, carried=carried, egress=egress, cost=cost)


@dataclass(frozen=True, slots=True, kw_only=True)
class _SitePick:
    cost: float
    local: Option
    tier: int | None
    link_price: float
    picks: tuple[int, ...]  # candidate column per entry
    cands: tuple[_Cand, ...]


def _site(entries: list[_Entry], spec: SizingSpec, pre: Option | None, lam: float, demand: float) -> _SitePick | None:
    """The cheapest (local kind, tier, every entry's threshold) at one site."""
    best: _SitePick | None = None
    law0 = entries[0].law
    for loc in spec.local.options:
        cands = tuple(candidates(e, spec, pre, loc, lam, demand, len(entries) == 1) for e in entries)
        merged = ks.merge([(c.carried, c.cost) for c in cands])
        if not len(merged.cost):
            continue
        options = [(None, 0.0, merged.load <= 0)]
        options += [(m, t.price_per_hour, merged.load <= usable_at_tier(law0, t) * (1 + ks.TOL))
                    for m, t in enumerate(spec.tiers)]
        for tier, price, ok in options:
            total = np.where(ok, merged.cost + price, np.inf)
            if not np.isfinite(total).any():
                continue
            k = int(np.argmin(total))
            if best is None or total[k] < best.cost:
                best = _SitePick(cost=float(total[k]), local=loc, tier=tier, link_price=price,
                                 picks=tuple(int(x) for x in merged.picks[k]), cands=cands)
    return best


def entries_by_site(fs: FleetSpec, spec: SizingSpec) -> dict[str, list[_Entry]]:
    by_site: dict[str, list[_Entry]] = {}
    for m in fs.models:
        lw = laws(m.scenario, spec)
        for law in lw.sites:
            by_site.setdefault(law.name, []).append(_Entry(model=m.name, law=law, laws=lw,
                                                           rate_share=m.demand_share * law.demand_share))
    return by_site


def _solve(fs: FleetSpec, spec: SizingSpec, demand: float) -> tuple[Option | None, dict[str, _SitePick]] | None:
    lam = demand / spec.headroom
    by_site = entries_by_site(fs, spec)
    best: tuple[float, Option | None, dict[str, _SitePick]] | None = None
    for pre in spec.prfaas.options:
        sites = {name: _site(es, spec, pre, lam, demand) for name, es in by_site.items()}
        if any(s is None for s in sites.values()):
            continue
        total = sum(s.cost for s in sites.values())  # type: ignore[union-attr]
        if best is None or total < best[0]:
            best = (total, pre, sites)  # type: ignore[assignment]
    return None if best is None else (best[1], best[2])


def size(fs: FleetSpec) -> FleetSizingResult:
    spec = fs.models[0].scenario.sizing
    if spec is None:
        raise SpecError("the scenario has no sizing: section (demand, headroom, candidates, link tiers); see "
                        "scenarios/paper-case-study.yaml", field="sizing", source=fs.path)
    demand, asked = spec.demand_rps, spec.headroom
    slo = any(m.scenario.ttft_slo_s is not None for m in fs.models)
    headroom, ttft = spec.headroom, ()
    for _ in range(STEPS + 1 if slo else 1):
        at = replace(spec, headroom=headroom)
        found = _solve(fs, at, demand)
        if found is None:
            raise InfeasibleError(f"size: {_why(fs, at)}no candidate fleet serves {demand / headroom:.4g} req/s "
                                  f"(demand {demand:.4g} / headroom {headroom:.4g}) for every model", binding="size")
        if not slo:
            break
        ttft = tuple(misses(_bought(fs, at, *found, demand), demand))
        if all(v is not None and v <= bound * (1 + 1e-9) for _, _, v, bound in ttft):
            break
        headroom *= STEP
    else:
        worst = next(f"{label} {stat} TTFT {'unstable' if v is None else f'{v:.3g} s'} > {bound:g} s"
                     for label, stat, v, bound in ttft if v is None or v > bound)
        raise InfeasibleError(f"size: the TTFT SLO is missed even at headroom {headroom / STEP:.3g} ({worst}); "
                              "relax slo.ttft or add faster candidates", binding="ttft")
    spec = at
    pre, sites = found
    by_site = entries_by_site(fs, spec)
    entries, per_site, n_prfaas, gpus_cost, links, egress = [], [], 0, 0.0, 0.0, 0.0
    for name, sp in sites.items():
        n_site = 0
        for e, c, k in zip(by_site[name], sp.cands, sp.picks, strict=True):
            law = e.law
            a, n_p, n_d = int(c.a[k]), int(c.n_p[k]), int(c.n_d[k])
            n_prfaas += a
            n_site += n_p + n_d
            egress += float(c.egress[k])
            entries.append(FleetSizedEntry(model=e.model, site=name, demand_rps=demand * e.rate_share,
                                           threshold_tokens=float(law.t[k]), p_offload=float(law.p[k]), n_p=n_p,
                                           n_d=n_d, n_prfaas=a, egress_bytes_per_s=float(c.carried[k]) * spec.headroom))
        tier = spec.tiers[sp.tier] if sp.tier is not None else None
        per_site.append(FleetSizedSite(site=name, hardware=sp.local.instance.gpu.name,
                                       gpus_per_instance=sp.local.instance.gpus, instances=n_site,
                                       link_tier_bytes_per_s=tier.bandwidth_bytes_per_s if tier else None,
                                       link_price_per_hour=sp.link_price))
        gpus_cost += n_site * sp.local.price_per_instance_hour
        links += sp.link_price
        if n_site > spec.local.max_instances:
            raise InfeasibleError(f"size: {name} needs {n_site} instances; sizing.local.max_instances is "
                                  f"{spec.local.max_instances}: raise it or lower the demand", binding="size")
    if n_prfaas > spec.prfaas.max_instances:
        raise InfeasibleError(f"size: the prefill service needs {n_prfaas} instances; sizing.prfaas.max_instances is "
                              f"{spec.prfaas.max_instances}: raise it or lower the demand", binding="size")
    if pre is not None:
        gpus_cost += n_prfaas * pre.price_per_instance_hour
    alone, homog = _baselines(fs, demand)
    total = gpus_cost + links + egress
    return FleetSizingResult(
        scenario=fs.name, demand_rps=demand, headroom=spec.headroom, asked_headroom=asked,
        prefill_hardware=pre.instance.gpu.name if pre and n_prfaas else None,
        prefill_gpus_per_instance=pre.instance.gpus if pre and n_prfaas else None, n_prfaas=n_prfaas,
        entries=tuple(entries), sites=tuple(per_site), gpus_per_hour=gpus_cost, links_per_hour=links,
        egress_per_hour=egress, per_hour=total, per_million_requests=total / (demand * units.HOUR) * units.MILLION,
        separate_per_hour=alone, homogeneous_per_hour=homog, ttft=ttft)


def _why(fs: FleetSpec, spec: SizingSpec) -> str:
    """The first model no candidate kind can serve at its site, and why ("" if each has one)."""
    for name, es in entries_by_site(fs, spec).items():
        for e in es:
            law, kinds = e.law, spec.local.options
            if all(law.decode_rps[o.name] <= 0 for o in kinds):
                why = "; ".join(f"{o.name}: {law.decode_why[o.name].split(': ', 1)[-1]}" for o in kinds)
                return f"{e.model} at {name}: no candidate meets its decode SLO ({why}); "
            offload = any(not e.laws.prefill_why[o.name] for o in spec.prfaas.options)
            if not offload and all(law.local_why[o.name] for o in kinds):
                return f"{e.model} at {name}: no candidate holds it to prefill ({law.local_why[kinds[0].name]}); "
    return ""


def _bought(fs: FleetSpec, spec: SizingSpec, pre: Option | None, sites: dict[str, _SitePick], demand: float
            ) -> FleetSpec:
    """``fs`` on the fleet a solve bought (``api.fleet_size_ttft.bought``, per model)."""
    counts = {name: int(sum(c.n_p[k] + c.n_d[k] for c, k in zip(sp.cands, sp.picks, strict=True)))
              for name, sp in sites.items()}
    n_prfaas = int(sum(c.a[k] for sp in sites.values() for c, k in zip(sp.cands, sp.picks, strict=True)))
    models = tuple(replace(m, scenario=bought(m.scenario, pre, n_prfaas, sites, counts, spec.tiers))
                   for m in fs.models)
    return replace(fs, models=models)


def _baselines(fs: FleetSpec, demand: float) -> tuple[float | None, float | None]:
    """Each model alone at its share of the demand: the cheapest PrfaaS-PD fleet (its own service
    and links) and the cheapest homogeneous PD fleet, summed (None: some model has none)."""
    alone, homog = 0.0, 0.0
    for m in fs.models:
        sc = m.scenario
        assert sc.sizing is not None
        own = replace(sc, sizing=replace(sc.sizing, demand_rps=demand * m.demand_share))
        lw = laws(own, own.sizing)  # type: ignore[arg-type]
        plan, _ = single.fit(own, lw, single.variant(lw), demand * m.demand_share, ttft=False)
        homs = [p for _, p, _ in single.homogeneous(own, lw, demand * m.demand_share, ttft=False) if p is not None]
        alone = None if plan is None or alone is None else alone + plan.cost.per_hour
        homog = None if not homs or homog is None else homog + min(p.cost.per_hour for p in homs)
    return alone, homog
