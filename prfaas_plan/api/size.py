"""Library API of `size`: the cheapest fleet and link tiers that serve a demand under the SLOs.

The cheapest PrfaaS-PD plan (``api.size_solve`` over ``core.sizing``), and beside it what a user
weighs it against: homogeneous PD on each candidate kind, naive heterogeneous PD (every request
offloaded), the cheapest plan at each link tier (what a thinner link costs in GPUs), the plan
across demand (``sizing.demand_factors``) and, with a TTFT SLO, across TTFT bounds
(``api.size_ttft``). An infeasible demand names the constraint and what would lift it.
"""

from __future__ import annotations

import time
from dataclasses import replace

from prfaas_plan.api.interval import bands
from prfaas_plan.api.laws import stack_names
from prfaas_plan.api.size_grid import Laws, laws
from prfaas_plan.api.size_solve import ALL, HOMOGENEOUS, NAIVE, NONE, OFFLOAD_ALL, PRFAAS, Variant, solve
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.specs.scenario import ScenarioSpec
from prfaas_plan.specs.sizing import DemandPoint, SizedPlan, SizeInterval, SizingResult, TierPlan

_HUGE = 10**12  # instances: "no maximum", when asking what a maximum costs


def variant(laws_: Laws, kind: str = PRFAAS, *, tiers: tuple[int, ...] | None = None, local: tuple = (),
            columns: str = ALL, max_prfaas: int | None = None, max_local: int | None = None) -> Variant:
    s = laws_.spec
    return Variant(kind=kind, prefill=() if columns == NONE else s.prfaas.options,
                   local=local or s.local.options, columns=columns,
                   tiers=tuple(range(len(s.tiers))) if tiers is None else tiers,
                   max_prfaas=s.prfaas.max_instances if max_prfaas is None else max_prfaas,
                   max_local=s.local.max_instances if max_local is None else max_local)


def fit(sc: ScenarioSpec, laws_: Laws, v: Variant, demand: float, *, ttft: bool = True
        ) -> tuple[SizedPlan | None, str | None]:
    """The cheapest plan of ``v`` at ``demand`` under every SLO (with ``slo.ttft``, the TTFT search
    of ``api.size_ttft`` from the throughput plan), or None and why not."""
    plan = solve(laws_, v, demand)
    if plan is None:
        return None, _why(laws_, v, demand)
    if sc.ttft_slo_s is None or not ttft:
        return plan, None
    from prfaas_plan.api.size_ttft import constrained

    try:
        return constrained(sc, laws_, plan, v, demand, frontier=False)[0], None
    except InfeasibleError as exc:
        return None, str(exc)


def homogeneous(sc: ScenarioSpec, laws_: Laws, demand: float, *, ttft: bool = True
                ) -> tuple[tuple[str, SizedPlan | None, str | None], ...]:
    """Homogeneous PD on each candidate kind (of either role), each site on its own instances."""
    return tuple((name, *fit(sc, laws_, variant(laws_, HOMOGENEOUS, local=(o,), columns=NONE), demand, ttft=ttft))
                 for name, o in laws_.kinds.items())


def _why(laws_: Laws, v: Variant, demand: float) -> str:
    """Which constraint keeps ``v`` from serving ``demand``, and what would lift it."""
    spec = laws_.spec
    lam = demand / spec.headroom
    if v.prefill and all(laws_.prefill_why[o.name] for o in v.prefill):
        return f"prefill service: no candidate holds the model ({'; '.join(laws_.prefill_why.values())})"
    for law in laws_.sites:
        if v.columns == NONE and all(law.local_why[o.name] for o in v.local):
            return f"prefill at {law.name}: {'; '.join(law.local_why[o.name] for o in v.local)}"
        if all(law.decode_rps[o.name] <= 0 for o in v.local):
            reasons = "; ".join(f"{o.name}: {law.decode_why[o.name].split(': ', 1)[-1]}" for o in v.local)
            return f"decode at {law.name}: no candidate meets the decode SLO ({reasons})"
    relaxed = replace(v, max_local=_HUGE)
    plan = solve(laws_, relaxed, demand)
    if plan is not None:
        over = [s for s in plan.sites if s.n_p + s.n_d > v.max_local]
        s = max(over, key=lambda x: x.n_p + x.n_d) if over else plan.sites[0]
        return (f"{s.site}: needs {s.n_p + s.n_d} instances of {s.gpus_per_instance}x{s.hardware} "
                f"({s.n_p} prefill + {s.n_d} decode) for {lam:.4g} req/s (demand {demand:.4g} / headroom "
                f"{spec.headroom:g}); sizing.local.max_instances is {v.max_local}: raise it to "
                f"{s.n_p + s.n_d} or lower the demand")
    relaxed = replace(v, max_prfaas=_HUGE)
    plan = solve(laws_, relaxed, demand)
    if plan is not None and v.prefill:
        return (f"prefill service: needs {plan.n_prfaas} instances of {plan.prefill_gpus_per_instance}x"
                f"{plan.prefill_hardware} for {lam:.4g} req/s; sizing.prfaas.max_instances is {v.max_prfaas}: "
                f"raise it to {plan.n_prfaas} or lower the demand")
    plan = solve(laws_, replace(v, max_local=_HUGE, max_prfaas=_HUGE), demand)
    if plan is not None:
        return (f"the maxima together: {plan.n_prfaas} prefill-service instances and up to "
                f"{max(s.n_p + s.n_d for s in plan.sites)} instances a site would serve {lam:.4g} req/s; "
                f"raise sizing.prfaas.max_instances and sizing.local.max_instances")
    return f"no candidate serves {lam:.4g} req/s (demand {demand:.4g} / headroom {spec.headroom:g})"


def size(sc: ScenarioSpec, *, ttft: bool = True) -> SizingResult:
    """The cheapest plan and everything it is weighed against; raises InfeasibleError naming the
    constraint when no plan serves the demand."""
    spec = sc.sizing
    if spec is None:
        raise SpecError("the scenario has no sizing: section (demand, headroom, candidates, link tiers); see "
                        "scenarios/paper-case-study.yaml", field="sizing", source=sc.path)
    t0 = time.perf_counter()
    lw = laws(sc, spec)
    demand = spec.demand_rps
    best = solve(lw, variant(lw), demand)
    if best is None:
        raise InfeasibleError(f"size: {_why(lw, variant(lw), demand)}", binding="size")
    bound, stat, ttft_s, frontier = sc.ttft_slo_s, sc.ttft_statistic if sc.ttft_slo_s else None, None, ()
    if bound is not None and ttft:  # the SLO plan and the cost-versus-TTFT frontier in one search
        from prfaas_plan.api.size_ttft import constrained

        best, ttft_s, frontier = constrained(sc, lw, best)
    hom = homogeneous(sc, lw, demand, ttft=ttft)
    naive, _ = fit(sc, lw, variant(lw, NAIVE, columns=OFFLOAD_ALL), demand, ttft=ttft)
    tiers = []
    for m, tier in enumerate(spec.tiers):
        plan, why = fit(sc, lw, variant(lw, tiers=(m,)), demand, ttft=ttft)
        tiers.append(TierPlan(tier=m, bandwidth_bytes_per_s=tier.bandwidth_bytes_per_s,
                              price_per_hour=tier.price_per_hour, plan=plan, why=why))
    curve = []
    for f in spec.demand_factors:
        d = demand * f
        plan, why = (best, None) if f == 1 else fit(sc, lw, variant(lw), d, ttft=ttft)
        homs = [p for _, p, _ in homogeneous(sc, lw, d, ttft=ttft) if p is not None]
        curve.append(DemandPoint(factor=f, demand_rps=d, prfaas=plan,
                                 homogeneous=min(homs, key=lambda p: p.cost.per_hour) if homs else None, why=why))
    return SizingResult(
        scenario=sc.name, model=sc.model.name, method=str(lw.method), demand_rps=demand, headroom=spec.headroom,
        best=best, ttft_statistic=stat, ttft_bound_s=bound, ttft_s=ttft_s, homogeneous=hom, naive=naive,
        tiers=tuple(tiers), demand_curve=tuple(curve), ttft_frontier=frontier, candidates=lw.candidates,
        search_s=time.perf_counter() - t0, interval=size_interval(sc), demand_source=spec.demand_source)


def size_interval(sc: ScenarioSpec) -> SizeInterval:
    """The cheapest fleet for the sizing demand at the stack's P10 and P90 times (throughput sizing)."""
    spec = sc.sizing
    assert spec is not None
    kinds = [o.instance for o in (*spec.prfaas.options, *spec.local.options)]
    pre, dec = bands(sc, None, tuple(kinds))
    ends = []
    for k in (0, 1):  # fast end (P10 times): the cost's P10
        at = replace(sc, time_scale=(pre[k] if pre else 1.0, dec[k] if dec else 1.0))
        lw = laws(at, spec)
        best = solve(lw, variant(lw), spec.demand_rps)
        ends.append(best.cost if best is not None else None)
    lo, hi = ends
    return SizeInterval(per_hour_p10=lo.per_hour if lo else None, per_hour_p90=hi.per_hour if hi else None,
                        per_million_p10=lo.per_million_requests if lo else None,
                        per_million_p90=hi.per_million_requests if hi else None, prefill_band=pre, decode_band=dec,
                        stack=stack_names(*kinds))
