"""`size` through the library API: api.size_solve.solve against a brute force over the service laws
(api.size_grid.laws), the invariants a cost minimum must keep, one plan computed by hand, and the
refusals of a bad sizing: section.

The brute force (tests/test_sizing_core.py) enumerates every integer fleet of the two-regions
scenario at small maxima and a coarse threshold grid, with each stage checked by core.stages.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from prfaas_plan.api import size as api_size
from prfaas_plan.api.laws import timing
from prfaas_plan.api.size_grid import Laws, SiteLaws, laws
from prfaas_plan.api.size_solve import ALL, HOMOGENEOUS, NAIVE, NONE, OFFLOAD_ALL, Variant, solve
from prfaas_plan.core.stages import compute_bound, stage_bounds
from prfaas_plan.errors import InfeasibleError, SpecError
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.specs.sizing import LinkTier, SizedPlan
from tests.conftest import ROOT
from tests.test_sizing_core import MIN_SITE, REL, SLACK, Problem, Site, brute_force, cases, same_cost

CATALOG = Catalog.default()
SMALL = ("sizing.prfaas.max_instances=6", "sizing.local.max_instances=10", "search.threshold.step=16K")
EGRESS = ("sizing.egress_price_per_gb=0.02",)
THIN = ("sizing.links[0].usable_fraction=0.5", "sizing.headroom=0.6")
SETS = {"base": (), "egress": EGRESS, "thin-link": THIN}


@cache
def scenario(name: str, overrides: tuple[str, ...]):
    return load_scenario(name, CATALOG, overrides=list(overrides))


@cache
def small_laws(extra: tuple[str, ...] = ()) -> Laws:
    sc = scenario("two-regions", (*SMALL, *extra))
    assert sc.sizing is not None
    return laws(sc, sc.sizing)


def cost(plan: SizedPlan | None) -> float:
    return math.inf if plan is None else plan.cost.per_hour


# ----------------------------------------------------------------------------- the brute force


def columns(law: SiteLaws, which: str) -> np.ndarray:
    if which == NONE:
        k = int(np.flatnonzero(law.t == law.t.max())[-1])
        assert law.p[k] == 0.0  # the column offloads nothing
        return np.array([k])
    if which == OFFLOAD_ALL:
        k = int(np.argmin(law.t))
        assert law.p[k] == 1.0  # the column offloads everything
        return np.array([k])
    assert which == ALL
    return np.arange(len(law.t))


def problem(lw: Laws, v: Variant, demand: float) -> Problem:
    """The variant's search space in the oracle's plain arrays, from the laws and the spec."""
    spec = lw.spec
    tiers = [spec.tiers[m] for m in v.tiers]
    sites = []
    for law in lw.sites:
        c = columns(law, v.columns)
        frac = law.link_usable_fraction
        sites.append(Site(
            share=law.demand_share, p=law.p[c],
            t_short=np.stack([law.t_short_s[o.name][c] for o in v.local]),
            decode_rps=np.array([law.decode_rps[o.name] for o in v.local]),
            local_price=np.array([o.price_per_gpu_hour * o.instance.gpus for o in v.local]),
            t_long=np.array([law.t_long_s[o.name][c] for o in v.prefill]).reshape(len(v.prefill), len(c)),
            s_long=np.array([law.s_long_bytes[o.name][c] for o in v.prefill]).reshape(len(v.prefill), len(c)),
            tier_cap=np.array([t.bandwidth_bytes_per_s * (frac if t.usable_fraction is None else t.usable_fraction)
                               for t in tiers], dtype=np.float64),
            tier_price=np.array([t.price_per_hour for t in tiers], dtype=np.float64)))
    return Problem(sites=tuple(sites),
                   prefill_price=np.array([o.price_per_gpu_hour * o.instance.gpus for o in v.prefill]),
                   max_prfaas=v.max_prfaas, max_local=v.max_local, demand=demand, headroom=spec.headroom,
                   egress_per_byte=spec.egress_price_per_byte)


def variants(lw: Laws) -> dict[str, Variant]:
    out = {"prfaas": api_size.variant(lw), "naive": api_size.variant(lw, NAIVE, columns=OFFLOAD_ALL)}
    for name, o in lw.kinds.items():
        out[f"homogeneous-{name}"] = api_size.variant(lw, HOMOGENEOUS, local=(o,), columns=NONE)
    for m in range(len(lw.spec.tiers)):
        out[f"tier-{m}"] = api_size.variant(lw, tiers=(m,))
    out["one-local-kind"] = api_size.variant(lw, local=lw.spec.local.options[:1])
    return out


def check_plan(lw: Laws, v: Variant, demand: float, plan: SizedPlan) -> None:
    """The plan is a fleet every stage bound accepts at Lambda, and its cost adds up."""
    spec = lw.spec
    lam = demand / spec.headroom
    assert plan.demand_rps == demand and plan.headroom == spec.headroom and plan.kind == v.kind
    assert 0 <= plan.n_prfaas <= v.max_prfaas
    pre = None
    if plan.n_prfaas:
        pre = next(o for o in v.prefill if o.instance.gpu.name == plan.prefill_hardware
                   and o.instance.gpus == plan.prefill_gpus_per_instance)
        assert plan.prefill_price_per_gpu_hour == pre.price_per_gpu_hour
    else:
        assert plan.prefill_hardware is None and plan.prfaas_utilization == 0.0
    gpus, links, egress, load = plan.n_prfaas * (pre.price_per_instance_hour if pre else 0.0), 0.0, 0.0, 0.0
    for law, s in zip(lw.sites, plan.sites, strict=True):
        assert (s.site, s.demand_share) == (law.name, law.demand_share)
        assert MIN_SITE <= s.n_p + s.n_d <= v.max_local and s.n_d >= 1
        assert math.isclose(s.demand_rps, demand * law.demand_share, rel_tol=REL)
        cols = [c for c in columns(law, v.columns) if law.t[c] == s.threshold_tokens and law.p[c] == s.p_offload]
        assert cols  # the plan's threshold is one the variant may use
        col = int(cols[0])
        o = next(o for o in v.local if o.instance.gpu.name == s.hardware and o.instance.gpus == s.gpus_per_instance)
        tier: LinkTier | None = spec.tiers[s.link_tier] if s.link_tier is not None else None
        assert (tier is not None) == (s.p_offload > 0)
        if tier is not None:
            assert s.link_tier in v.tiers
        usable = (tier.bandwidth_bytes_per_s * (tier.usable_fraction or law.link_usable_fraction)) if tier else 0.0
        kind = pre.name if pre else next(iter(law.t_long_s))
        b = stage_bounds(p=s.p_offload, t_long_s=law.t_long_s[kind][col], s_long_bytes=law.s_long_bytes[kind][col],
                         t_short_s=law.t_short_s[o.name][col], n_p=s.n_p, n_d=s.n_d, demand_share=law.demand_share,
                         link_bytes_per_s=usable, decode_rps_per_instance=law.decode_rps[o.name])
        assert float(b.local) >= lam * SLACK
        if s.p_offload > 0:
            assert pre is not None  # what a site offloads needs a prefill service
            load += float(b.compute_load)
            moved = demand * law.demand_share * s.p_offload * law.s_long_bytes[pre.name][col]
            assert math.isclose(s.egress_bytes_per_s, moved, rel_tol=REL)
            assert math.isclose(s.egress_price_per_hour, moved * spec.egress_price_per_byte * 3600, rel_tol=REL)
        else:
            assert s.egress_price_per_hour == 0.0 and s.link_price_per_hour == 0.0
        assert s.gpu_price_per_hour == (s.n_p + s.n_d) * s.gpus_per_instance * s.price_per_gpu_hour
        assert s.price_per_gpu_hour == o.price_per_gpu_hour
        assert s.link_price_per_hour == (tier.price_per_hour if tier else 0.0)
        gpus += s.gpu_price_per_hour
        links += s.link_price_per_hour
        egress += s.egress_price_per_hour
        for stage, u in s.utilization.items():
            assert 0 < u <= spec.headroom * (1 + 1e-9), (s.site, stage, u)
        assert set(s.utilization) == {"decode"} | ({"pd-prefill"} if s.n_p else set()) | ({"link"} if tier else set())
    assert compute_bound(plan.n_prfaas, load) >= lam * SLACK
    assert 0 <= plan.prfaas_utilization <= spec.headroom * (1 + 1e-9)
    if plan.n_prfaas:
        assert math.isclose(plan.prfaas_utilization, demand * load / plan.n_prfaas, rel_tol=1e-9)
    c = plan.cost
    assert math.isclose(c.gpus_per_hour, gpus, rel_tol=REL)
    assert math.isclose(c.links_per_hour, links, rel_tol=REL)
    assert math.isclose(c.egress_per_hour, egress, rel_tol=REL, abs_tol=0.0)
    assert math.isclose(c.gpus_per_hour + c.links_per_hour + c.egress_per_hour, c.per_hour, rel_tol=REL)
    assert math.isclose(c.per_million_requests, c.per_hour / (demand * 3600) * 1e6, rel_tol=REL)
    out_tokens = sum(demand * law.demand_share * law.output_tokens for law in lw.sites)
    assert math.isclose(c.per_million_output_tokens, c.per_hour / (out_tokens * 3600) * 1e6, rel_tol=REL)


@pytest.mark.slow
@pytest.mark.parametrize("extra", list(SETS.values()), ids=list(SETS))
def test_solve_equals_brute_force_on_two_regions(extra):
    lw = small_laws(extra)
    found = missing = 0
    for demand in (0.3, 1.5, 4.0, 9.0):
        for name, v in variants(lw).items():
            plan = solve(lw, v, demand)
            want = brute_force(problem(lw, v, demand))
            assert same_cost(cost(plan), want), (name, demand, cost(plan), want)
            if plan is not None:
                check_plan(lw, v, demand, plan)
            found += plan is not None
            missing += plan is None
    assert found >= 10 and missing >= 3  # feasible and infeasible answers are both exercised


def test_egress_and_usable_fraction_reach_the_laws():
    base, eg, thin = small_laws(), small_laws(EGRESS), small_laws(THIN)
    assert base.spec.egress_price_per_byte == 0.0
    assert eg.spec.egress_price_per_byte == pytest.approx(0.02 / 1e9, rel=1e-15)
    assert thin.spec.tiers[0].usable_fraction == 0.5 and thin.spec.headroom == 0.6
    sc = scenario("two-regions", SMALL)
    assert sc.topology is not None
    assert [law.link_usable_fraction for law in base.sites] == [lk.link.usable_fraction for lk in sc.topology.links]
    # egress is paid on what crosses at D: at 1.5 req/s the PrfaaS plan offloads without it and
    # costs more with it; the naive plan (everything offloaded) pays D x S_kv x $0.02/GB on top
    p0, p1 = solve(base, api_size.variant(base), 1.5), solve(eg, api_size.variant(eg), 1.5)
    assert p0 is not None and p1 is not None and p0.offloads
    assert p1.cost.per_hour > p0.cost.per_hour
    n0 = solve(base, api_size.variant(base, NAIVE, columns=OFFLOAD_ALL), 1.5)
    n1 = solve(eg, api_size.variant(eg, NAIVE, columns=OFFLOAD_ALL), 1.5)
    assert n0 is not None and n1 is not None and n0.cost.egress_per_hour == 0.0
    moved = sum(1.5 * law.demand_share * law.s_long_bytes[n1.prefill_hardware and f"8x{n1.prefill_hardware}"][
        law.all_column] for law in eg.sites)
    assert n1.cost.egress_per_hour == pytest.approx(moved * 0.02 / 1e9 * 3600, rel=1e-12) and moved > 0
    assert n1.cost.egress_per_hour > 0 and n1.cost.per_hour >= n0.cost.per_hour + n1.cost.egress_per_hour


VARIANT_NAMES = ["prfaas", "naive", "homogeneous-8xH20", "homogeneous-8xH200", "homogeneous-8xB200", "tier-0",
                 "tier-1", "tier-2", "one-local-kind"]


@cases(30)
@given(st.sampled_from(list(SETS)), st.sampled_from(VARIANT_NAMES),
       st.floats(0.05, 12.0) | st.sampled_from([0.5, 1.0, 1.25, 2.5, 5.0]))
def test_solve_equals_brute_force_hypothesis(which, name, demand):
    lw = small_laws(SETS[which])
    v = variants(lw)[name]
    plan = solve(lw, v, demand)
    assert same_cost(cost(plan), brute_force(problem(lw, v, demand)))
    if plan is not None:
        check_plan(lw, v, demand, plan)


# ----------------------------------------------------------------------------- invariants


DEMANDS = [0.05, 0.2, 0.5, 0.8, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.5, 9.0, 11.0, 14.0, 20.0]


@pytest.mark.parametrize("name", VARIANT_NAMES)
def test_more_demand_never_costs_less(name):
    lw = small_laws(EGRESS)
    v = variants(lw)[name]
    costs = [cost(solve(lw, v, d)) for d in DEMANDS]
    assert all(a <= b for a, b in itertools.pairwise(costs)), costs
    assert math.isfinite(costs[0]) and math.isinf(costs[-1])  # from served to past the maxima


@pytest.mark.parametrize("headroom", [0.5, 0.8, 1.0])
def test_full_scale_demand_curve_is_monotone_and_within_headroom(headroom):
    """The scenario's own maxima (64 and 128 instances, the 128-token grid)."""
    sc = scenario("two-regions", (f"sizing.headroom={headroom}", *EGRESS))
    assert sc.sizing is not None
    lw = laws(sc, sc.sizing)
    v = api_size.variant(lw)
    prev = 0.0
    for d in (0.5, 2.0, 6.0, 12.0, 24.0):
        plan = solve(lw, v, d)
        assert plan is not None
        assert plan.cost.per_hour >= prev
        prev = plan.cost.per_hour
        check_plan(lw, v, d, plan)


def _with_tiers(lw: Laws, tiers: tuple[LinkTier, ...]) -> Laws:
    return replace(lw, spec=replace(lw.spec, tiers=tiers))


@pytest.mark.parametrize("demand", [0.5, 1.5, 4.0, 7.5])
def test_a_cheaper_link_tier_never_raises_the_cost(demand):
    lw = small_laws(EGRESS)
    base = cost(solve(lw, api_size.variant(lw), demand))
    for m in range(len(lw.spec.tiers)):
        for factor in (0.9, 0.5, 0.1, 0.0):
            cheaper = tuple(replace(t, price_per_hour=t.price_per_hour * factor) if k == m else t
                            for k, t in enumerate(lw.spec.tiers))
            lw2 = _with_tiers(lw, cheaper)
            got = cost(solve(lw2, api_size.variant(lw2), demand))
            assert got <= base, (m, factor, got, base)
        dearer = tuple(replace(t, price_per_hour=t.price_per_hour * 10) if k == m else t
                       for k, t in enumerate(lw.spec.tiers))
        lw3 = _with_tiers(lw, dearer)
        assert cost(solve(lw3, api_size.variant(lw3), demand)) >= base


@pytest.mark.parametrize("demand", [0.5, 1.5, 4.0, 7.5, 11.0])
def test_more_candidates_never_raise_the_cost(demand):
    lw = small_laws()
    kinds = list(lw.kinds.values())
    pre_all = lw.spec.prfaas.options
    base = api_size.variant(lw)
    subsets = [tuple(o for k, o in enumerate(kinds) if mask >> k & 1) for mask in range(1, 2 ** len(kinds))]
    for local in subsets:
        small = cost(solve(lw, replace(base, local=local), demand))
        for extra in kinds:
            if extra not in local:
                assert cost(solve(lw, replace(base, local=(*local, extra)), demand)) <= small
        for pre in pre_all:
            assert cost(solve(lw, replace(base, local=local, prefill=pre_all), demand)) <= \
                cost(solve(lw, replace(base, local=local, prefill=(pre,)), demand))
    # more tiers, higher maxima: never dearer either
    for m in range(len(lw.spec.tiers)):
        assert cost(solve(lw, base, demand)) <= cost(solve(lw, replace(base, tiers=(m,)), demand))
    assert cost(solve(lw, replace(base, max_local=20, max_prfaas=12), demand)) <= cost(solve(lw, base, demand))


@pytest.mark.parametrize("demand", [0.3, 1.5, 4.0, 7.5])
def test_homogeneous_never_beats_prfaas_on_a_local_candidate(demand):
    lw = small_laws(EGRESS)
    best = cost(solve(lw, api_size.variant(lw), demand))
    naive = cost(solve(lw, api_size.variant(lw, NAIVE, columns=OFFLOAD_ALL), demand))
    assert best <= naive
    for _, o in ((n, o) for n, o in lw.kinds.items() if o in lw.spec.local.options):
        hom = solve(lw, api_size.variant(lw, HOMOGENEOUS, local=(o,), columns=NONE), demand)
        assert best <= cost(hom)
        if hom is not None:
            assert hom.n_prfaas == 0 and all(s.p_offload == 0 and s.link_tier is None for s in hom.sites)


def test_size_result_orders_its_plans():
    sc = scenario("two-regions", (*SMALL, "sizing.demand=1.5", *EGRESS))
    r = api_size.size(sc)
    assert r.demand_rps == 1.5 and r.headroom == 0.8 and r.ttft_s is None
    lw = small_laws(EGRESS)
    assert r.best.cost.per_hour == cost(solve(lw, api_size.variant(lw), 1.5))
    assert [n for n, _, _ in r.homogeneous] == list(lw.kinds)
    for name, plan, why in r.homogeneous:
        assert (plan is None) == (why is not None)
        o = lw.kinds[name]
        assert cost(plan) == brute_force(problem(lw, api_size.variant(lw, HOMOGENEOUS, local=(o,), columns=NONE),
                                                 1.5))
        if o in lw.spec.local.options:
            assert r.best.cost.per_hour <= cost(plan)
    assert r.best_homogeneous is not None
    assert r.best_homogeneous.cost.per_hour == min(cost(p) for _, p, _ in r.homogeneous)
    assert r.naive is not None and r.naive.cost.per_hour >= r.best.cost.per_hour
    assert [t.tier for t in r.tiers] == [0, 1, 2]
    assert min(cost(t.plan) for t in r.tiers) == r.best.cost.per_hour
    assert [p.factor for p in r.demand_curve] == [0.25, 0.5, 1.0, 2.0, 4.0]
    curve = [cost(p.prfaas) for p in r.demand_curve]
    assert all(a <= b for a, b in itertools.pairwise(curve))
    assert r.demand_curve[2].prfaas is not None and r.demand_curve[2].prfaas.cost == r.best.cost
    assert r.candidates == sum(len(s.t) * 4 for s in lw.sites)  # 2 prefill + 2 local options per t


# ----------------------------------------------------------------------------- by hand


def test_homogeneous_h20_case_study_by_hand():
    """3 req/s at headroom 0.8: Lambda = 3.75. Decode pinned at 20 / (25 ms x 1024) = 0.78125 req/s per
    8xH20, so N_d = ceil(3.75 / 0.78125) = ceil(4.8) = 5; prefill of the mean request on 8xH20,
    N_p = ceil(3.75 x T_H20(mean)); cost (N_p + N_d) x 8 GPUs x $2.0."""
    sc = scenario("paper-case-study", ("sizing.egress_price_per_gb=0",))
    assert sc.sizing is not None and sc.sizing.demand_rps == 3.0 and sc.sizing.headroom == 0.8
    lam = 3.0 / 0.8
    decode = 20 / (0.025 * 1024)
    assert decode == 0.78125
    n_d = math.ceil(lam / decode)
    assert n_d == 5
    t_h20 = float(timing(sc).curves.t_local(sc.workload.lengths.mean))
    assert t_h20 == pytest.approx(4.265, abs=1e-3)  # the case study's implied T_H20(mean)
    n_p = math.ceil(lam * t_h20)
    assert n_p == 16
    lw = laws(sc, sc.sizing)
    law = lw.sites[0]
    assert law.decode_rps["8xH20"] == decode
    assert law.t_short_s["8xH20"][law.none_column] == pytest.approx(t_h20, rel=1e-12)
    r = api_size.size(sc)
    hom = dict((n, p) for n, p, _ in r.homogeneous)["8xH20"]
    assert hom is not None
    s = hom.sites[0]
    assert (s.n_p, s.n_d, s.hardware, s.gpus_per_instance, s.p_offload) == (n_p, n_d, "H20", 8, 0.0)
    assert hom.n_prfaas == 0 and s.link_tier is None
    assert hom.cost.per_hour == (n_p + n_d) * 8 * 2.0 == 336.0
    assert hom.cost.links_per_hour == 0.0 and hom.cost.egress_per_hour == 0.0
    assert s.utilization["decode"] == pytest.approx(3.0 / (n_d * decode), rel=1e-12)
    assert s.utilization["pd-prefill"] == pytest.approx(3.0 * t_h20 / n_p, rel=1e-12)
    assert r.best.cost.per_hour < hom.cost.per_hour  # PrfaaS beats it on the case study


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(("overrides", "field", "words"), [
    (["sizing.demand=0"], "sizing.demand", "positive"),
    (["sizing.demand=-1rps"], "sizing.demand", "positive"),
    (["sizing.demand=0rps"], "sizing.demand", "positive"),
    (["sizing.headroom=0"], "sizing.headroom", "greater than 0"),
    (["sizing.headroom=1.5"], "sizing.headroom", "less than or equal to 1"),
    (["sizing.prfaas.hardware=[H200, NoSuchGPU]"], "sizing.prfaas.hardware[1]", "NoSuchGPU"),
    (["sizing.local.hardware=[NoSuchGPU]"], "sizing.local.hardware[0]", "unknown hardware"),
    (["sizing.links=[{bandwidth: 10Gbps}]"], "sizing.links[0].price_per_hour", "missing"),
    (["sizing.prfaas.hardware=[]"], "sizing.prfaas.hardware", "at least 1"),
    (["sizing.local.hardware=[]"], "sizing.local.hardware", "at least 1"),
    (["sizing.links=[]"], "sizing.links", "at least 1"),
    (["sizing.local.hardware=[H20, B300]"], "sizing.local.price_per_gpu_hour", "B300"),
    (["sizing.prfaas.hardware=[B300]"], "sizing.prfaas.price_per_gpu_hour", "B300"),
    (["sizing.local.hardware=[H20, h20]"], "sizing.local.hardware[1]", "twice"),
    (["sizing.links[0].price_per_hour=-1"], "sizing.links[0].price_per_hour", "greater than or equal to 0"),
    (["sizing.links[1].bandwidth=10Gbps"], "sizing.links[1].bandwidth", "same bandwidth"),
    (["sizing.prfaas.max_instances=0"], "sizing.prfaas.max_instances", "greater than or equal to 1"),
    (["sizing.local.price_per_gpu_hour={H100: 1.0}"], "sizing.local.price_per_gpu_hour.H100", "not among"),
])
def test_bad_sizing_is_refused_naming_the_field(overrides, field, words):
    with pytest.raises(SpecError) as info:
        load_scenario("two-regions", CATALOG, overrides=overrides)
    assert field in (info.value.field or ""), str(info.value)
    assert field in str(info.value) and words in str(info.value)


def test_a_price_for_an_uncatalogued_gpu_lets_it_in():
    sc = scenario("two-regions", ("sizing.local.hardware=[H20, B300]", "sizing.local.price_per_gpu_hour={B300: 9.0}"))
    assert sc.sizing is not None
    opts = {o.name: o.price_per_gpu_hour for o in sc.sizing.local.options}
    assert opts == {"8xH20": 2.0, "8xB300": 9.0}


def test_size_without_a_sizing_section_is_refused():
    sc = scenario("qwen35-b200-h200", ())
    assert sc.sizing is None
    with pytest.raises(SpecError) as info:
        api_size.size(sc)
    assert info.value.field == "sizing"


def test_infeasible_demand_names_the_maximum():
    sc = scenario("two-regions", (*SMALL, "sizing.demand=40"))
    with pytest.raises(InfeasibleError) as info:
        api_size.size(sc)
    assert "max_instances" in str(info.value)


# ----------------------------------------------------------------------------- bugs found (these fail)


def test_no_prefill_service_means_no_offload():
    """A variant with no prefill service (prefill=()) over every threshold never offloads (found:
    with t_long_s zero for want of a prefill kind, every load was 0 and the plan offloaded 100% to
    a prefill service of 0 instances over no link)."""
    lw = small_laws()
    v = replace(api_size.variant(lw), prefill=())
    plan = solve(lw, v, 1.5)
    want = brute_force(problem(lw, v, 1.5))  # the oracle refuses any p > 0 without a prefill kind
    assert plan is None or all(s.p_offload == 0 for s in plan.sites), \
        [(s.site, s.p_offload, s.n_p, s.n_d, s.link_tier) for s in plan.sites]
    assert same_cost(cost(plan), want)


def test_size_with_a_ttft_slo():
    """With slo.ttft set, size() gives a plan no cheaper than without it (or an InfeasibleError)."""
    sc = scenario("paper-case-study", ("slo.ttft=30s",))
    plain = api_size.size(sc, ttft=False)
    try:
        r = api_size.size(sc)
    except InfeasibleError:
        return
    assert r.ttft_bound_s == 30.0 and r.best.cost.per_hour >= plain.best.cost.per_hour


def test_no_sizing_hint_names_a_file_that_exists():
    """The refusal without a sizing: section points at a scenario file that exists."""
    sc = scenario("qwen35-b200-h200", ())
    with pytest.raises(SpecError) as info:
        api_size.size(sc)
    named = [w.strip(";,.()") for w in str(info.value).split() if w.strip(";,.()").endswith(".yaml")]
    assert named, str(info.value)
    for f in named:
        assert (ROOT / f).is_file() or Path(f).is_file(), f"{f} does not exist"


def test_a_trace_by_option_sizes_for_the_traces_rate_unless_demand_is_given(tmp_path):
    """`report --trace` (and any command given --trace) sizes for the trace's mean rate, (n - 1) /
    span, not the sizing.demand the file wrote for its own workload, and says so; --demand wins; a
    trace the file itself names keeps the file's demand."""
    trace = ROOT / "tests" / "fixtures" / "traces" / "mooncake_synthetic_trace.jsonl"
    cat = Catalog.default()
    sc = load_scenario(None, cat, trace=str(trace))
    t = sc.workload.trace
    assert sc.sizing.demand_rps == pytest.approx((len(t) - 1) / t.span_s, rel=1e-12)
    assert sc.sizing.demand_source.startswith("the trace's mean rate")
    assert load_scenario(None, cat, trace=str(trace), demand="5rps").sizing.demand_rps == 5.0
    file = tmp_path / "own-trace.yaml"
    lognormal = "  input: {kind: lognormal, mu: 9.90, sigma: 1.00, min: 128, max: 128K}"
    file.write_text((ROOT / "scenarios" / "paper-case-study.yaml").read_text().replace(
        lognormal, f"  input: {{kind: trace, file: {trace}}}"))
    own = load_scenario(str(file), cat)
    assert own.workload.trace is not None and own.sizing.demand_source is None
    assert own.sizing.demand_rps == load_scenario(None, cat).sizing.demand_rps
