"""The sizing kernel (core.sizing) against a brute-force oracle built on the stage-bounds kernel.

The oracle enumerates every integer fleet of a small problem (N_prfaas in 0..max; per site every
local kind, threshold column, link tier or no link, N_p in 0..max, N_d in 1..max with
MIN_SITE <= N_p + N_d <= max), keeps those whose every stage bound (core.stages.stage_bounds, compute_bound)
carries Lambda = D / h within the kernel's relative 1e-9, prices them, and takes the cheapest. The
kernel (site_sizes -> merge -> cheapest, per prefill kind, min over kinds) must give that cost.

``Problem``, ``brute_force`` and ``kernel`` are reused by tests/test_sizing_api.py.
"""

from __future__ import annotations

import itertools
import math
import os
from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prfaas_plan.core import sizing as ks
from prfaas_plan.core.stages import compute_bound, compute_bounds, stage_bounds

SLACK = 1 - 1e-9  # a bound within 1e-9 (relative) of Lambda carries it (core.sizing.TOL)
MIN_SITE = getattr(ks, "MIN_SITE", 1)  # the fewest instances (N_p + N_d) a PD site may have
REL = 1e-12  # float sums added in another order
HOUR = 3600.0
CI = bool(os.environ.get("CI"))


def cases(n: int):
    return settings(max_examples=n, deadline=None, derandomize=CI, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


def same_cost(a: float, b: float) -> bool:
    if math.isinf(a) or math.isinf(b):
        return a == b
    return math.isclose(a, b, rel_tol=REL, abs_tol=0.0)


# ----------------------------------------------------------------------------- the problem


@dataclass(frozen=True, slots=True)
class Site:
    """One PD site in plain arrays: K threshold columns, J local kinds, Q prefill kinds, M tiers."""

    share: float
    p: np.ndarray  # (K,)
    t_short: np.ndarray  # (J, K) seconds per local request on one instance of kind j
    decode_rps: np.ndarray  # (J,) per decode instance; 0: kind j cannot decode
    local_price: np.ndarray  # (J,) $ per instance-hour
    t_long: np.ndarray  # (Q, K) seconds per offloaded request on one prefill instance of kind q
    s_long: np.ndarray  # (Q, K) bytes per offloaded request over the link
    tier_cap: np.ndarray  # (M,) usable bytes/s
    tier_price: np.ndarray  # (M,) $ per hour


@dataclass(frozen=True, slots=True)
class Problem:
    sites: tuple[Site, ...]
    prefill_price: np.ndarray  # (Q,) $ per prefill instance-hour; empty: no prefill service
    max_prfaas: int
    max_local: int
    demand: float
    headroom: float
    egress_per_byte: float

    @property
    def lam(self) -> float:
        return self.demand / self.headroom


def _pairs(max_local: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (N_p, N_d): N_p in 0..max, N_d in 1..max, MIN_SITE <= N_p + N_d <= max."""
    pairs = [(a, b) for a in range(max_local + 1) for b in range(1, max_local + 1) if MIN_SITE <= a + b <= max_local]
    arr = np.array(pairs, dtype=np.float64).reshape(-1, 2)
    return arr[:, 0], arr[:, 1]


def _egress(pb: Problem, s: Site, q: int | None) -> np.ndarray:
    """$/h of egress per column at the demand D (not Lambda)."""
    if q is None:
        return np.zeros(len(s.p))
    return np.where(s.p > 0, pb.demand * s.share * s.p * s.s_long[q] * pb.egress_per_byte * HOUR, 0.0)


def site_fleets(pb: Problem, s: Site, q: int | None) -> tuple[np.ndarray, np.ndarray]:
    """(load c_i, cost) of every feasible fleet of one site under prefill kind q (None: there is no
    prefill service, so the site may not offload), duplicates of (load, cost) dropped."""
    lam = pb.lam
    n_p, n_d = _pairs(pb.max_local)
    k_cols = len(s.p)
    t_long = s.t_long[q] if q is not None else np.zeros(k_cols)
    s_long = s.s_long[q] if q is not None else np.zeros(k_cols)
    egress = _egress(pb, s, q)
    loads, costs = [], []
    for j in range(len(s.decode_rps)):
        for m in range(-1, len(s.tier_cap)):  # -1: no link bought
            cap = float(s.tier_cap[m]) if m >= 0 else 0.0
            link_price = float(s.tier_price[m]) if m >= 0 else 0.0
            b = stage_bounds(p=s.p[:, None], t_long_s=t_long[:, None], s_long_bytes=s_long[:, None],
                             t_short_s=s.t_short[j][:, None], n_p=n_p[None, :], n_d=n_d[None, :],
                             demand_share=s.share, link_bytes_per_s=cap, decode_rps_per_instance=float(s.decode_rps[j]))
            ok = (b.pd_prefill >= lam * SLACK) & (b.link >= lam * SLACK) & (b.decode >= lam * SLACK)
            if q is None:
                ok &= (s.p == 0)[:, None]
            cost = (n_p + n_d)[None, :] * s.local_price[j] + link_price + egress[:, None]
            loads.append(b.compute_load[ok])
            costs.append(np.broadcast_to(cost, ok.shape)[ok])
    pts = np.unique(np.stack([np.concatenate(loads), np.concatenate(costs)], axis=1), axis=0)
    return pts[:, 0], pts[:, 1]


def brute_force(pb: Problem) -> float:
    """The cheapest feasible fleet over every integer fleet: $/h, inf when none is feasible."""
    lam = pb.lam
    best = math.inf
    kinds: list[int | None] = list(range(len(pb.prefill_price))) or [None]
    for q in kinds:
        per = [site_fleets(pb, s, q) for s in pb.sites]
        if any(not len(c) for _, c in per):
            continue
        load, cost = np.zeros(1), np.zeros(1)
        for lo, co in per:
            load = (load[:, None] + lo[None, :]).ravel()
            cost = (cost[:, None] + co[None, :]).ravel()
        price = float(pb.prefill_price[q]) if q is not None else 0.0
        for n in range((pb.max_prfaas if q is not None else 0) + 1):
            ok = compute_bounds(n, load) >= lam * SLACK
            if ok.any():
                best = min(best, float(cost[ok].min()) + n * price)
    return best


def brute_force_literal(pb: Problem) -> float:
    """``brute_force`` written out fleet by fleet with scalar calls (for tiny problems): the check
    that the vectorised oracle enumerates what it says."""
    lam = pb.lam
    best = math.inf
    kinds: list[int | None] = list(range(len(pb.prefill_price))) or [None]
    for q in kinds:
        per_site = []
        for s in pb.sites:
            fleets = []
            for j, k, m, n_p, n_d in itertools.product(range(len(s.decode_rps)), range(len(s.p)),
                                                       range(-1, len(s.tier_cap)), range(pb.max_local + 1),
                                                       range(1, pb.max_local + 1)):
                if not MIN_SITE <= n_p + n_d <= pb.max_local:
                    continue
                p = float(s.p[k])
                if q is None and p > 0:
                    continue
                t_long = float(s.t_long[q, k]) if q is not None else 0.0
                s_long = float(s.s_long[q, k]) if q is not None else 0.0
                b = stage_bounds(p=p, t_long_s=t_long, s_long_bytes=s_long, t_short_s=float(s.t_short[j, k]),
                                 n_p=n_p, n_d=n_d, demand_share=s.share,
                                 link_bytes_per_s=float(s.tier_cap[m]) if m >= 0 else 0.0,
                                 decode_rps_per_instance=float(s.decode_rps[j]))
                if min(float(b.pd_prefill), float(b.link), float(b.decode)) < lam * SLACK:
                    continue
                egress = pb.demand * s.share * p * s_long * pb.egress_per_byte * HOUR if p > 0 else 0.0
                cost = (n_p + n_d) * float(s.local_price[j]) + (float(s.tier_price[m]) if m >= 0 else 0.0) + egress
                fleets.append((float(b.compute_load), cost))
            per_site.append(fleets)
        price = float(pb.prefill_price[q]) if q is not None else 0.0
        for combo in itertools.product(*per_site):
            load = sum(c[0] for c in combo)
            for n in range((pb.max_prfaas if q is not None else 0) + 1):
                if compute_bound(n, load) >= lam * SLACK:
                    best = min(best, sum(c[1] for c in combo) + n * price)
                    break  # more instances only cost more
    return best


# ----------------------------------------------------------------------------- the kernel


@dataclass(frozen=True, slots=True)
class KernelAnswer:
    cost: float
    q: int | None
    choice: ks.Choice | None
    sizes: tuple[ks.SiteSizes, ...]


def grid(pb: Problem, s: Site, q: int) -> ks.SiteGrid:
    return ks.SiteGrid(demand_share=s.share, p=s.p, t_long_s=s.t_long[q], s_long_bytes=s.s_long[q], t_short_s=s.t_short,
                       decode_rps=s.decode_rps, instance_price=s.local_price, max_instances=pb.max_local,
                       tiers=ks.Tiers(usable_bytes_per_s=s.tier_cap, price_per_hour=s.tier_price),
                       egress_price_per_byte=pb.egress_per_byte)


def kernel(pb: Problem) -> KernelAnswer:
    """What the kernel finds: per prefill kind site_sizes -> merge -> cheapest, the cheapest kind."""
    best = KernelAnswer(cost=math.inf, q=None, choice=None, sizes=())
    for q in range(len(pb.prefill_price)):
        sizes = tuple(ks.site_sizes(grid(pb, s, q), pb.lam, pb.demand) for s in pb.sites)
        merged = ks.merge([(z.load, z.cost) for z in sizes])
        ch = ks.cheapest(merged, pb.lam, float(pb.prefill_price[q]), pb.max_prfaas)
        if ch.cost < best.cost:
            best = KernelAnswer(cost=ch.cost, q=q, choice=ch, sizes=sizes)
    return best


def check_witness(pb: Problem, ans: KernelAnswer) -> None:
    """The kernel's own pick is a fleet the stage bounds accept, at the cost it reports."""
    ch, q = ans.choice, ans.q
    assert ch is not None and q is not None
    assert len(ch.picks) == len(pb.sites)
    assert 0 <= ch.n_prfaas <= pb.max_prfaas
    lam, total, load = pb.lam, ch.n_prfaas * float(pb.prefill_price[q]), 0.0
    for s, z, idx in zip(pb.sites, ans.sizes, ch.picks, strict=True):
        j, k = divmod(idx, len(s.p))
        n_p, n_d, m = float(z.n_p[j, k]), float(z.n_d[j, k]), int(z.tier[j, k])
        assert n_p == int(n_p) and n_d == int(n_d) and n_d >= 1 and n_p >= 0
        assert MIN_SITE <= n_p + n_d <= pb.max_local
        p = float(s.p[k])
        assert (m >= 0) == (p > 0 and s.s_long[q, k] > 0)  # a link is bought iff something crosses it
        b = stage_bounds(p=p, t_long_s=float(s.t_long[q, k]), s_long_bytes=float(s.s_long[q, k]),
                         t_short_s=float(s.t_short[j, k]), n_p=n_p, n_d=n_d, demand_share=s.share,
                         link_bytes_per_s=float(s.tier_cap[m]) if m >= 0 else 0.0,
                         decode_rps_per_instance=float(s.decode_rps[j]))
        assert float(b.local) >= lam * SLACK
        load += float(b.compute_load)
        egress = pb.demand * s.share * p * float(s.s_long[q, k]) * pb.egress_per_byte * HOUR if p > 0 else 0.0
        total += (n_p + n_d) * float(s.local_price[j]) + (float(s.tier_price[m]) if m >= 0 else 0.0) + egress
    assert math.isclose(load, ch.compute_load, rel_tol=REL, abs_tol=1e-300)
    assert compute_bound(ch.n_prfaas, load) >= lam * SLACK
    assert same_cost(total, ch.cost)


def check(pb: Problem) -> float:
    want = brute_force(pb)
    got = kernel(pb)
    assert same_cost(got.cost, want), (got.cost, want)
    if math.isfinite(got.cost):
        check_witness(pb, got)
    else:
        assert got.choice is None
    return want


# ----------------------------------------------------------------------------- random problems


def random_problem(rng: np.random.Generator) -> Problem:
    n_sites = int(rng.integers(1, 3))
    k_cols, j_kinds, q_kinds = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
    shares = [1.0] if n_sites == 1 else [s := float(rng.uniform(0.1, 0.9)), 1 - s]
    sites = []
    for share in shares:
        p = rng.uniform(0, 1, k_cols)
        p[rng.uniform(size=k_cols) < 0.25] = 0.0
        p[rng.uniform(size=k_cols) < 0.2] = 1.0
        m = int(rng.integers(0, 4))
        decode = rng.uniform(0.2, 2.5, j_kinds)
        decode[rng.uniform(size=j_kinds) < 0.15] = 0.0  # a kind that cannot meet the decode SLO
        sites.append(Site(
            share=share, p=p, t_short=rng.uniform(0.05, 2.5, (j_kinds, k_cols)), decode_rps=decode,
            local_price=rng.uniform(1, 40, j_kinds), t_long=rng.uniform(0.05, 2.0, (q_kinds, k_cols)),
            s_long=rng.uniform(0.1, 2.0, (q_kinds, k_cols)) * 1e9, tier_cap=rng.uniform(0.05, 3.0, m) * 1e9,
            tier_price=rng.uniform(0.5, 30, m)))
    return Problem(sites=tuple(sites), prefill_price=rng.uniform(5, 60, q_kinds),
                   max_prfaas=int(rng.integers(1, 7)), max_local=int(rng.integers(2, 7)),
                   demand=float(rng.uniform(0.1, 3.0)), headroom=float(rng.uniform(0.4, 1.0)),
                   egress_per_byte=float(rng.choice([0.0, 2e-11, 1e-9])))


def test_oracle_matches_its_literal_form_on_tiny_problems():
    checked = 0
    for seed in range(25):
        rng = np.random.default_rng(1000 + seed)
        pb = random_problem(rng)
        pb = Problem(sites=pb.sites, prefill_price=pb.prefill_price, max_prfaas=min(pb.max_prfaas, 3),
                     max_local=min(pb.max_local, 3), demand=pb.demand, headroom=pb.headroom,
                     egress_per_byte=pb.egress_per_byte)
        want = brute_force_literal(pb)
        assert same_cost(brute_force(pb), want)
        checked += math.isfinite(want)
    assert checked >= 3  # not every tiny case is infeasible


def test_kernel_equals_brute_force_on_seeded_grids():
    feasible = infeasible = 0
    for seed in range(120):
        want = check(random_problem(np.random.default_rng(seed)))
        feasible += math.isfinite(want)
        infeasible += not math.isfinite(want)
    assert feasible >= 30 and infeasible >= 5  # both kinds of answer are exercised


NICE = [0.25, 0.5, 1.0, 1.5, 2.0]  # exact binary fractions: loads that land exactly on an instance count


def _pos(draw, lo: float, hi: float) -> float:
    return draw(st.sampled_from(NICE) | st.floats(lo, hi, allow_nan=False, allow_infinity=False))


@st.composite
def problems(draw) -> Problem:
    n_sites = draw(st.integers(1, 2))
    k_cols, j_kinds, q_kinds = draw(st.integers(1, 3)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    if n_sites == 1:
        shares = [1.0]
    else:
        s = draw(st.sampled_from([0.5, 0.25, 0.75]) | st.floats(0.05, 0.95))
        shares = [s, 1 - s]
    sites = []
    for share in shares:
        # no subnormal p: there s p T underflows to 0 in the stage bounds, while the kernel still
        # asks a link and a prefill service of any site that offloads anything (core.sizing._TINY)
        p = np.array([draw(st.sampled_from([0.0, 1.0, 0.5, 0.25]) | st.floats(1e-12, 1)) for _ in range(k_cols)])
        m = draw(st.integers(0, 3))
        sites.append(Site(
            share=share, p=p,
            t_short=np.array([[_pos(draw, 0.05, 3.0) for _ in range(k_cols)] for _ in range(j_kinds)]),
            decode_rps=np.array([draw(st.sampled_from([0.0, *NICE]) | st.floats(0.1, 3.0)) for _ in range(j_kinds)]),
            local_price=np.array([_pos(draw, 0.5, 50) for _ in range(j_kinds)]),
            t_long=np.array([[_pos(draw, 0.05, 3.0) for _ in range(k_cols)] for _ in range(q_kinds)]),
            s_long=np.array([[_pos(draw, 0.1, 2.0) * 1e9 for _ in range(k_cols)] for _ in range(q_kinds)]),
            tier_cap=np.array([_pos(draw, 0.05, 3.0) * 1e9 for _ in range(m)]),
            tier_price=np.array([draw(st.sampled_from([0.0, 1.0, 2.0]) | st.floats(0, 40)) for _ in range(m)])))
    return Problem(sites=tuple(sites), prefill_price=np.array([_pos(draw, 1, 60) for _ in range(q_kinds)]),
                   max_prfaas=draw(st.integers(0, 6)), max_local=draw(st.integers(1, 6)),
                   demand=_pos(draw, 0.05, 3.0), headroom=draw(st.sampled_from([1.0, 0.8, 0.5]) | st.floats(0.3, 1)),
                   egress_per_byte=draw(st.sampled_from([0.0, 1e-10, 2e-11])))


@pytest.mark.slow
@cases(60)
@given(problems())
def test_kernel_equals_brute_force_hypothesis(pb: Problem):
    check(pb)


# ----------------------------------------------------------------------------- nothing feasible


def _one_site(**kw) -> Problem:
    site = dict(share=1.0, p=np.array([0.0, 0.5, 1.0]), t_short=np.array([[1.0, 1.0, 1.0]]), decode_rps=np.array([1.0]),
                local_price=np.array([10.0]), t_long=np.array([[1.0, 1.0, 1.0]]), s_long=np.array([[1e9, 1e9, 1e9]]),
                tier_cap=np.array([1e10]), tier_price=np.array([5.0]))
    prob = dict(prefill_price=np.array([20.0]), max_prfaas=4, max_local=4, demand=1.0, headroom=1.0,
                egress_per_byte=0.0)
    site.update({k: v for k, v in kw.items() if k in site})
    prob.update({k: v for k, v in kw.items() if k in prob})
    return Problem(sites=(Site(**site),), **prob)


@pytest.mark.parametrize("kw", [
    {"decode_rps": np.array([0.0])},  # the only kind cannot decode
    {"demand": 50.0},  # past every maximum
    {"p": np.array([0.5, 1.0, 0.9]), "tier_cap": np.zeros(0), "tier_price": np.zeros(0)},  # offloads, no link
    {"p": np.array([0.5, 1.0, 0.9]), "tier_cap": np.array([1e8]), "tier_price": np.array([1.0])},  # link too thin
    {"p": np.array([1.0, 1.0, 1.0]), "max_prfaas": 0},  # must offload all, no prefill instance allowed
    {"max_local": 1, "p": np.array([0.5, 0.0, 0.25])},  # p < 1 needs N_p >= 1 beside N_d >= 1
], ids=["no-decode", "demand", "no-tiers", "thin-link", "no-prefill", "one-instance"])
def test_nothing_feasible(kw):
    pb = _one_site(**kw)
    assert brute_force(pb) == math.inf
    assert brute_force_literal(pb) == math.inf
    ans = kernel(pb)
    assert ans.cost == math.inf and ans.choice is None
    q_sizes = [ks.site_sizes(grid(pb, s, 0), pb.lam, pb.demand) for s in pb.sites]
    ch = ks.cheapest(ks.merge([(z.load, z.cost) for z in q_sizes]), pb.lam, 20.0, pb.max_prfaas)
    assert ch.cost == math.inf and ch.picks == () and ch.n_prfaas == 0


def test_one_site_by_hand():
    """Lambda = 2 / 0.8 = 2.5 req/s; column p = 0.5: N_p = ceil(2.5 x 0.5 x 1.0) = 2, N_d = ceil(2.5 / 1.0)
    = 3, the 1e10 B/s tier carries 2.5 x 0.5 x 1e9; prefill ceil(2.5 x 0.5 x 1.0) = 2 -> 5 x 10 + 5 + 2 x 20
    = 95. Column p = 0: 3 + 3 instances = 60, no link, no prefill: cheaper. Column p = 1: N_p = 0,
    N_d = 3, link 5, prefill ceil(2.5) = 3 -> 30 + 5 + 60 = 95."""
    pb = _one_site(demand=2.0, headroom=0.8, max_local=8)
    ans = kernel(pb)
    assert ans.cost == 60.0 and ans.choice is not None
    assert ans.choice.n_prfaas == 0 and ans.choice.picks == (0,)
    no_zero = _one_site(demand=2.0, headroom=0.8, max_local=8, p=np.array([0.5, 1.0, 0.5]))
    assert kernel(no_zero).cost == 95.0 == brute_force(no_zero)
    z = ks.site_sizes(grid(no_zero, no_zero.sites[0], 0), no_zero.lam, no_zero.demand)
    assert z.n_p.tolist() == [[2.0, 0.0, 2.0]] and z.n_d.tolist() == [[3.0, 3.0, 3.0]]
    assert z.tier.tolist() == [[0, 0, 0]] and z.cost.tolist() == [[55.0, 35.0, 55.0]]
    assert z.load.tolist() == [[0.5, 1.0, 0.5]]


# ----------------------------------------------------------------------------- the pieces


@pytest.mark.parametrize(("x", "n"), [(0.0, 0), (1e-12, 1), (1.0, 1), (3.0, 3), (3.0 * (1 + 1e-10), 3),
                                      (3.0 * (1 + 1e-8), 4), (2.9999, 3), (3.1, 4), (5.5, 6)])
def test_need(x, n):
    assert ks.need(x) == n


@cases(60)
@given(st.lists(st.tuples(st.sampled_from([1e9, 2e9, 5e9]) | st.floats(1e8, 1e10),
                          st.sampled_from([0.0, 1.0, 3.0]) | st.floats(0, 50)), max_size=4,
                unique_by=lambda t: t[0]),
       st.lists(st.sampled_from([0.0, 1e9, 2e9, 5e9 * (1 + 1e-10)]) | st.floats(0, 1.2e10), min_size=1, max_size=6))
def test_tiers_cheapest_brute_force(tiers, loads):
    cap = np.array([t[0] for t in tiers], dtype=np.float64)
    price = np.array([t[1] for t in tiers], dtype=np.float64)
    pick, cost = ks.Tiers(usable_bytes_per_s=cap, price_per_hour=price).cheapest(np.array(loads))
    for x, m, c in zip(loads, pick, cost, strict=True):
        if x <= 0:
            assert (m, c) == (-1, 0.0)
            continue
        fit = [float(price[i]) for i in range(len(cap)) if cap[i] >= x * SLACK]
        assert c == (min(fit) if fit else math.inf)
        if fit:
            assert cap[m] >= x * SLACK and price[m] == c
        else:
            assert m == -1


def _dominated(lo: float, co: float, load: np.ndarray, cost: np.ndarray) -> bool:
    return bool(np.any((load <= lo) & (cost <= co) & ((load < lo) | (cost < co))))


@cases(60)
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.0]) | st.floats(0, 5),
                          st.sampled_from([1.0, 2.0, math.inf]) | st.floats(0, 10)), max_size=12))
def test_frontier_brute_force(points):
    load = np.array([p[0] for p in points], dtype=np.float64)
    cost = np.array([p[1] for p in points], dtype=np.float64)
    idx = ks.frontier(load, cost)
    fl, fc = load[idx], cost[idx]
    assert np.all(np.isfinite(fc))
    assert np.all(np.diff(fl) > 0) and np.all(np.diff(fc) < 0)  # load ascending, cost strictly falling
    finite = np.isfinite(cost)
    for lo, co in zip(fl, fc, strict=True):
        assert not _dominated(lo, co, load[finite], cost[finite])
    for lo, co in zip(load[finite], cost[finite], strict=True):  # every finite point is covered by one kept
        assert np.any((fl <= lo) & (fc <= co))


@cases(40)
@given(st.lists(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 3),
                                   st.sampled_from([1.0, 2.0, math.inf]) | st.floats(0, 10)),
                         min_size=1, max_size=6), min_size=1, max_size=3))
def test_merge_is_the_frontier_of_the_minkowski_sum(sites):
    arrays = [(np.array([p[0] for p in s]), np.array([p[1] for p in s])) for s in sites]
    m = ks.merge(arrays)
    combos = [c for c in itertools.product(*[range(len(s)) for s in sites])
              if all(math.isfinite(arrays[i][1][k]) for i, k in enumerate(c))]
    if not combos:
        assert len(m.load) == 0 and m.picks.shape == (0, len(sites))
        return
    tl = np.array([sum(arrays[i][0][k] for i, k in enumerate(c)) for c in combos])
    tc = np.array([sum(arrays[i][1][k] for i, k in enumerate(c)) for c in combos])
    assert m.picks.shape == (len(m.load), len(sites))
    for lo, co, pick in zip(m.load, m.cost, m.picks, strict=True):  # each point is the sum of its picks
        assert math.isclose(lo, sum(arrays[i][0][k] for i, k in enumerate(pick)), rel_tol=REL, abs_tol=1e-12)
        assert math.isclose(co, sum(arrays[i][1][k] for i, k in enumerate(pick)), rel_tol=REL, abs_tol=1e-12)
    for lo, co in zip(tl, tc, strict=True):  # no sum is better than the merged frontier on both
        assert np.any((m.load <= lo + 1e-12) & (m.cost <= co + 1e-12))
    for f in (lambda x: 0 * x, lambda x: 3.0 * np.ceil(2 * x), lambda x: 100 * x):  # any nondecreasing charge
        assert math.isclose(float(np.min(m.cost + f(m.load))), float(np.min(tc + f(tl))), rel_tol=1e-12,
                            abs_tol=1e-12)
