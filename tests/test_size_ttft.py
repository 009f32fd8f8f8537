"""`size` under a TTFT SLO (api.size_ttft.constrained): the cheapest plan meeting the bound at D."""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import replace

import pytest

from prfaas_plan.api import size as api_size
from prfaas_plan.api.latency import system_latency
from prfaas_plan.api.size_grid import laws
from prfaas_plan.api.size_solve import solve
from prfaas_plan.api.size_ttft import FACTORS, constrained
from prfaas_plan.api.systems import PRFAAS, topology_systems
from prfaas_plan.errors import InfeasibleError
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.specs.sizing import SizedPlan


def scenario(name: str = "paper-case-study", *over: str):
    return load_scenario(name, Catalog.default(), overrides=["sizing.egress_price_per_gb=0", *over])


def setup(sc, bounds: tuple[float, ...] | None = None):
    if bounds is not None:
        sc = replace(sc, sizing=replace(sc.sizing, ttft_bounds=bounds))
    lw = laws(sc, sc.sizing)
    best = solve(lw, api_size.variant(lw), sc.sizing.demand_rps)
    assert best is not None
    return sc, lw, best


def independent_p90(sc, plan: SizedPlan) -> float:
    """The plan's p90 TTFT at D from system_latency, its system rebuilt from the scenario's own
    (api.systems) with the plan's counts, threshold and link: the case study's kinds are the
    scenario's clusters. Capacity is not flagged here (the plan's utilisations are checked apart)."""
    assert plan.prefill_hardware in (None, sc.prfaas.instance.gpu.name)
    (site,) = plan.sites
    assert site.hardware == sc.local.instance.gpu.name
    ts = topology_systems(sc, which=(PRFAAS,))[PRFAAS]
    c = ts.sites[0].config
    c = replace(c, threshold_tokens=site.threshold_tokens if site.p_offload > 0 else None, n_prfaas=plan.n_prfaas,
                n_p=site.n_p, n_d=site.n_d, t_prfaas=c.t_prfaas if plan.n_prfaas else None,
                link_bytes_per_s=site.link_usable_bytes_per_s or c.link_bytes_per_s, capacity_rps=math.inf)
    system = replace(ts, n_prfaas=plan.n_prfaas, sites=(replace(ts.sites[0], config=c),), capacity_rps=math.inf)
    r = system_latency(sc, system, plan.demand_rps)
    assert r.stable and r.ttft_p90_s is not None
    return r.ttft_p90_s


def test_case_study_meets_the_slo_and_costs_no_less():
    sc, lw, best = setup(scenario("paper-case-study", "slo.ttft=4s"))
    assert sc.ttft_slo_s == 4.0 and sc.ttft_statistic == "p90"
    plan, ttft, frontier = constrained(sc, lw, best)
    assert plan.kind == "prfaas" and plan.demand_rps == sc.sizing.demand_rps == 3.0
    assert ttft <= 4.0
    assert independent_p90(sc, plan) == pytest.approx(ttft, rel=1e-9) and independent_p90(sc, plan) <= 4.0
    assert independent_p90(sc, best) > 4.0  # the throughput plan misses it: the SLO costs something
    assert plan.cost.per_hour >= best.cost.per_hour
    c = plan.cost
    assert c.per_hour == pytest.approx(c.gpus_per_hour + c.links_per_hour + c.egress_per_hour, rel=1e-12)
    gpus = plan.n_prfaas * (plan.prefill_gpus_per_instance or 0) * (plan.prefill_price_per_gpu_hour or 0.0)
    gpus += sum((s.n_p + s.n_d) * s.gpus_per_instance * s.price_per_gpu_hour for s in plan.sites)
    assert c.gpus_per_hour == pytest.approx(gpus, rel=1e-12)
    us = [u for s in plan.sites for u in s.utilization.values()] + [plan.prfaas_utilization]
    assert max(us) <= sc.sizing.headroom * (1 + 1e-9)
    assert [p.bound_s for p in frontier] == [4.0 * f for f in FACTORS]
    assert next(p for p in frontier if p.bound_s == 4.0).plan == plan


@pytest.mark.slow
def test_size_with_the_slo():
    sc = scenario("paper-case-study", "slo.ttft=4s")
    t0 = time.perf_counter()
    r = api_size.size(sc)
    assert time.perf_counter() - t0 < 10.0  # ~0.3 s measured
    plain = api_size.size(sc, ttft=False)
    assert r.ttft_bound_s == 4.0 and r.ttft_statistic == "p90" and r.ttft_s is not None and r.ttft_s <= 4.0
    assert r.best.cost.per_hour >= plain.best.cost.per_hour and plain.ttft_frontier == ()


@pytest.mark.slow
def test_a_tighter_bound_never_costs_less():
    bounds = (3.3, 3.4, 3.5, 3.7, 4.0, 5.0, 8.0)
    sc, lw, best = setup(scenario("paper-case-study", "slo.ttft=8s"), bounds)
    _, _, frontier = constrained(sc, lw, best)
    costs = [p.plan.cost.per_hour if p.plan else math.inf for p in frontier]
    assert [p.bound_s for p in frontier] == list(bounds)
    assert all(a >= b for a, b in itertools.pairwise(costs)), costs
    assert frontier[-1].plan is not None and frontier[-1].plan.cost.per_hour == best.cost.per_hour
    for p in frontier:
        if p.plan is None:
            assert p.why and "3.3 s" in p.why
        else:
            assert p.ttft_s is not None and p.ttft_s <= p.bound_s
            assert independent_p90(sc, p.plan) <= p.bound_s
    # the frontier's pass answers each bound as a search of its own does
    for b in (3.5, 4.0):
        plan, _, _ = constrained(*setup(scenario("paper-case-study", f"slo.ttft={b}s"), (b,)))
        assert plan.cost.per_hour == next(p for p in frontier if p.bound_s == b).plan.cost.per_hour


def test_a_bound_below_zero_load_is_infeasible():
    sc, lw, best = setup(scenario("paper-case-study", "slo.ttft=0.5s"))
    with pytest.raises(InfeasibleError) as info:
        constrained(sc, lw, best)
    e = info.value
    assert e.binding == "ttft"
    msg = str(e)
    assert "p90 TTFT <= 0.5 s" in msg and "the lowest found is" in msg
    lowest = float(msg.split("the lowest found is ")[1].split(" s")[0])
    assert lowest > 0.5
    with pytest.raises(InfeasibleError):
        api_size.size(sc)


def test_a_loose_bound_returns_the_throughput_plan():
    sc, lw, best = setup(scenario("paper-case-study", "slo.ttft=1000s"))
    plan, ttft, frontier = constrained(sc, lw, best)
    assert plan.cost.per_hour == best.cost.per_hour
    assert plan.cost == best.cost and plan.n_prfaas == best.n_prfaas
    assert [(s.n_p, s.n_d, s.link_tier, s.p_offload) for s in plan.sites] == \
        [(s.n_p, s.n_d, s.link_tier, s.p_offload) for s in best.sites]
    assert ttft == pytest.approx(independent_p90(sc, best), rel=1e-9)
    assert all(p.plan is not None and p.plan.cost.per_hour == best.cost.per_hour for p in frontier)


@pytest.mark.slow
def test_two_sites():
    sc, lw, best = setup(scenario("two-regions", "slo.ttft=5s"))
    plan, ttft, frontier = constrained(sc, lw, best)
    assert ttft <= 5.0 and plan.cost.per_hour >= best.cost.per_hour and len(plan.sites) == 2
    costs = [p.plan.cost.per_hour if p.plan else math.inf for p in frontier]
    assert all(a >= b for a, b in itertools.pairwise(costs)), costs
    assert all(p.ttft_s <= p.bound_s for p in frontier if p.plan is not None)


@pytest.mark.slow
def test_baselines_tiers_and_the_demand_curve_meet_the_slo_too():
    """`size` weighs the PrfaaS plan against baselines under the same SLOs: with slo.ttft each
    homogeneous fleet, the naive plan, every link tier's plan and the demand curve are TTFT-bound."""
    sc = scenario("paper-case-study", "slo.ttft=4s")
    r, plain = api_size.size(sc), api_size.size(sc, ttft=False)
    hom = {name: (p, why) for name, p, why in r.homogeneous}
    assert hom["8xH20"][0] is None and "ttft" in hom["8xH20"][1]  # H20 prefill alone cannot reach 4 s
    assert plain.homogeneous[1][1] is not None  # ... though it serves the demand on throughput
    for t in r.tiers:
        if t.plan is not None:
            assert independent_p90(sc, t.plan) <= 4.0
        else:
            assert "ttft" in t.why
    assert r.naive is not None and independent_p90(sc, r.naive) <= 4.0
    for d, d0 in zip(r.demand_curve, plain.demand_curve, strict=True):
        assert d.prfaas is None or d.prfaas.cost.per_hour >= d0.prfaas.cost.per_hour
        if d.prfaas is not None:
            assert independent_p90(sc, d.prfaas) <= 4.0 * (1 + 1e-9)
