"""The topology simulator (several PD sites sharing one PrfaaS pool) against ``simulate`` and Eq. 6."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from prfaas_plan.api.systems import PRFAAS, systems
from prfaas_plan.errors import SpecError
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim.run import simulate
from prfaas_plan.sim.topology import saturation_topology, simulate_topology
from prfaas_plan.specs.system import SystemConfig
from prfaas_plan.specs.topology import SiteSystem, TopologySystem
from tests.conftest import FIXTURES

MOONCAKE = FIXTURES / "traces" / "mooncake_synthetic_trace.jsonl"  # 3,993 requests
T300 = FIXTURES / "mooncake_300.jsonl"  # its first 300


@pytest.fixture(scope="module")
def case():
    return load_scenario(None, Catalog.default())


@pytest.fixture(scope="module")
def config(case) -> SystemConfig:
    return systems(case, which=(PRFAAS,))[PRFAAS]


def _site(case, name: str, share: float, config: SystemConfig, workload=None) -> SiteSystem:
    return SiteSystem(site=name, link=f"prfaas->{name}", demand_share=share, config=config,
                      workload=workload if workload is not None else case.workload)


def _topology(sites: tuple[SiteSystem, ...], capacity: float, binding: str = "") -> TopologySystem:
    return TopologySystem(name="test", n_prfaas=sites[0].config.n_prfaas, sites=sites, capacity_rps=capacity,
                          capacity_binding=binding)


def _bounds(case, top: TopologySystem) -> dict[str, float]:
    """Eq. 6 over sites, exact method: each stage's bound on the TOTAL arrival rate (req/s)."""
    lengths = case.workload.lengths
    out: dict[str, float] = {}
    prfaas_work = 0.0  # sum_i share_i p_i E[T_prfaas,i | l > t_i]: seconds of PrfaaS work per arrival
    for s in top.sites:
        c, t, share = s.config, s.config.threshold_tokens, s.demand_share
        p = float(lengths.tail_prob(t))
        prfaas_work += share * p * float(lengths.expect_above(c.t_prfaas, t))
        out[f"{s.site}:local"] = c.n_p / (share * (1 - p) * float(lengths.expect_below(c.t_local, t)))
        out[f"{s.site}:link"] = c.link_bytes_per_s / (share * p * float(lengths.expect_above(c.kv_bytes, t)))
        out[f"{s.site}:decode"] = c.decode_rps / share
    return {"prfaas": top.n_prfaas / prfaas_work} | out


# ---------------------------------------------------------------- one site is simulate


@pytest.mark.validation
def test_one_site_is_simulate_event_for_event(case, config):
    top = _topology((_site(case, "local", 1.0, config),), config.capacity_rps)
    rate = 0.7 * config.capacity_rps
    one = simulate(case, config, rate_rps=rate, n_requests=20_000, rng=np.random.default_rng(5))
    res = simulate_topology(case, top, rate_rps=rate, n_requests=20_000, rng=np.random.default_rng(5))
    # the same generator draws the same requests and the same life cycle (KvPath) times them: the
    # TTFT and the throughput agree to rounding, not only within noise
    assert res.events == one.events
    assert res.ttft.mean == pytest.approx(one.ttft.mean, rel=1e-12)
    assert res.throughput_rps == pytest.approx(one.throughput_rps, rel=1e-12)
    site = res.sites["local"].to_dict()
    assert site == one.to_dict()
    assert res.prfaas_utilization == pytest.approx(one.utilization["prfaas"], rel=1e-12)


@pytest.mark.validation
def test_one_site_statistically_simulate_on_other_draws(case, config):
    top = _topology((_site(case, "local", 1.0, config),), config.capacity_rps)
    rate = 0.7 * config.capacity_rps
    one = simulate(case, config, rate_rps=rate, n_requests=60_000, rng=np.random.default_rng(1))
    res = simulate_topology(case, top, rate_rps=rate, n_requests=60_000, rng=np.random.default_rng(2))
    assert res.ttft.mean == pytest.approx(one.ttft.mean, rel=0.04)
    assert res.throughput_rps == pytest.approx(one.throughput_rps, rel=0.02)


# ---------------------------------------------------------------- two identical sites


@pytest.fixture(scope="module")
def twin(case, config) -> TopologySystem:
    """Two copies of the case study's local cluster, each half the demand, sharing 8 PrfaaS instances."""
    c2 = replace(config, n_prfaas=2 * config.n_prfaas)
    return _topology((_site(case, "a", 0.5, c2), _site(case, "b", 0.5, c2)), 2 * config.capacity_rps)


@pytest.mark.slow
@pytest.mark.validation
def test_twin_sites_saturate_at_twice_the_case_study(case, config, twin):
    sat = saturation_topology(case, twin, np.random.default_rng(3), 200_000)
    # Eq. 6: PrfaaS compute 2 x 3.226 req/s binds (each site's PD-P 2 x 3.269 is 1.3% above);
    # measured 0.994 x 2 x Lambda_max (seeds 0-5: 0.994..1.006)
    assert sat.throughput_rps == pytest.approx(2 * config.capacity_rps, rel=0.01)
    assert sat.bottleneck == "prfaas"
    assert sat.share["prfaas"] == pytest.approx(0.5, abs=0.01)
    assert sat.share["a:decode"] + sat.share["b:decode"] == pytest.approx(1.0)


@pytest.mark.validation
def test_twin_sites_see_the_same_ttft(case, config, twin):
    rate = 0.7 * twin.capacity_rps
    res = simulate_topology(case, twin, rate_rps=rate, n_requests=100_000, rng=np.random.default_rng(4))
    a, b = res.sites["a"], res.sites["b"]
    # seeds 0-7: per-site means within 0.7%, per path within 1.5%, P90 within 0.9%
    assert a.ttft.mean == pytest.approx(b.ttft.mean, rel=0.03)
    assert a.ttft.quantile(0.9) == pytest.approx(b.ttft.quantile(0.9), rel=0.04)
    for path in ("prfaas", "local"):
        assert a.ttft_paths[path].mean == pytest.approx(b.ttft_paths[path].mean, rel=0.04)
    assert a.requests + b.requests == res.requests == 100_000
    assert a.requests == pytest.approx(50_000, rel=0.02)
    assert res.completed == a.completed + b.completed == 90_000
    assert res.throughput_rps == pytest.approx(rate, rel=0.02)
    assert res.ttft.n == res.ttft_paths["prfaas"].n + res.ttft_paths["local"].n
    assert min(a.ttft.mean, b.ttft.mean) <= res.ttft.mean <= max(a.ttft.mean, b.ttft.mean)
    # the pool is shared: every site reports the same PrfaaS utilisation, 0.7 of its capacity
    assert a.utilization["prfaas"] == b.utilization["prfaas"] == res.prfaas_utilization
    assert res.prfaas_utilization == pytest.approx(0.7, rel=0.03)


# ---------------------------------------------------------------- unequal shares, a thin link


@pytest.fixture(scope="module")
def thin(case, config) -> TopologySystem:
    """Site a: 70% of the demand on the case study's path; site b: 30% behind 1/40 of its link."""
    c2 = replace(config, n_prfaas=2 * config.n_prfaas)
    sites = (_site(case, "a", 0.7, c2), _site(case, "b", 0.3, replace(c2, link_bytes_per_s=c2.link_bytes_per_s / 40)))
    top = _topology(sites, 0.0)
    bounds = _bounds(case, top)
    return replace(top, capacity_rps=min(bounds.values()), capacity_binding=min(bounds, key=bounds.get))


@pytest.mark.validation
def test_thin_link_binds_and_is_named(case, thin):
    bounds = _bounds(case, thin)
    # b's link bounds Lambda at 2.21 req/s; the next stage, a's PD-P, at 4.67
    assert thin.capacity_binding == "b:link"
    assert sorted(bounds.values())[1] > 2 * thin.capacity_rps
    sat = saturation_topology(case, thin, np.random.default_rng(0), 40_000)
    assert sat.bottleneck == "b:link"
    assert sat.throughput_rps == pytest.approx(thin.capacity_rps, rel=0.05)
    assert sat.share["b:link"] == pytest.approx(0.3 * 0.5, abs=0.01)


@pytest.mark.validation
def test_link_utilization_is_rate_share_p_skv_over_b(case, thin):
    rate = 0.7 * thin.capacity_rps
    res = simulate_topology(case, thin, rate_rps=rate, n_requests=60_000, rng=np.random.default_rng(1))
    lengths = case.workload.lengths
    for s in thin.sites:
        c, t = s.config, s.config.threshold_tokens
        expected = rate * s.demand_share * float(lengths.tail_prob(t)) * float(
            lengths.expect_above(c.kv_bytes, t)) / c.link_bytes_per_s
        assert res.sites[s.site].link_utilization == pytest.approx(expected, rel=0.03)
        assert res.stage_utilization[f"{s.site}:link"] == res.sites[s.site].link_utilization
    assert res.sites["b"].link_utilization == pytest.approx(0.7, rel=0.03)  # its link binds at load 0.7
    # the thin link's transfers wait behind each other: b's offloaded requests see a longer TTFT
    assert res.sites["b"].ttft_paths["prfaas"].mean > res.sites["a"].ttft_paths["prfaas"].mean


# ---------------------------------------------------------------- a trace per site


def test_a_trace_per_site_replays_each_through_its_own_prefix_cache(config):
    big = load_scenario(None, Catalog.default(), trace=str(MOONCAKE))
    small = load_scenario(None, Catalog.default(), trace=str(T300))
    c2 = replace(config, n_prfaas=2 * config.n_prfaas)
    top = _topology((_site(big, "a", 0.9, c2, big.workload), _site(big, "b", 0.1, c2, small.workload)), 6.0)
    res = simulate_topology(big, top, rate_rps=2.0, rng=np.random.default_rng(0))
    n = len(big.workload.trace) + len(small.workload.trace)
    assert res.requests == n and res.completed == n - int(0.1 * n)
    assert res.sites["a"].requests == len(big.workload.trace)
    assert res.sites["b"].requests == len(small.workload.trace)
    # the 300 requests are the big trace's first: one shared cache would have held their blocks;
    # each site's hit rate is its own trace's replay (the optimizer's), so each has its own cache
    assert res.sites["a"].prefix_hit_rate == big.workload.prefix_hit_rate
    assert res.sites["b"].prefix_hit_rate == small.workload.prefix_hit_rate
    assert res.sites["b"].rate_rps == pytest.approx(0.2)
    assert res.throughput_rps == pytest.approx(2.0, rel=0.15)
    json.dumps(res.to_dict(), allow_nan=False)


def test_one_traced_site_is_simulate(config):
    sc = load_scenario(None, Catalog.default(), trace=str(T300), overrides=["cache_mode=bandwidth-abundant"])
    top = _topology((_site(sc, "local", 1.0, config, sc.workload),), config.capacity_rps)
    one = simulate(sc, config, rate_rps=1.5, rng=np.random.default_rng(0))
    res = simulate_topology(sc, top, rate_rps=1.5, rng=np.random.default_rng(0))
    assert res.sites["local"].to_dict() == one.to_dict()


# ---------------------------------------------------------------- bounds, refusals, JSON


def test_duration_bounds_the_merged_stream(case, twin):
    res = simulate_topology(case, twin, rate_rps=4.0, duration_s=300.0, rng=np.random.default_rng(0))
    assert 1000 < res.requests < 1400
    assert res.sites["a"].requests + res.sites["b"].requests == res.requests
    d = res.to_dict()
    json.dumps(d, allow_nan=False)
    assert set(d["sites"]) == {"a", "b"}
    assert set(d["stage_rps"]) == {"prfaas", "a:local", "b:local", "a:link", "b:link", "a:decode", "b:decode"}


def test_an_idle_run_is_json_ready(case, twin):
    # two requests (int(0.1 x 2) = 0 warm-up, as simulate): rates over a short window, no NaN anywhere
    d = simulate_topology(case, twin, rate_rps=1.0, n_requests=2, rng=np.random.default_rng(0)).to_dict()
    json.dumps(d, allow_nan=False)
    assert d["completed"] == d["requests"] == 2


@pytest.mark.parametrize("change", ["shares", "pool", "rate", "requests"])
def test_refuses_bad_topologies_and_bounds(case, twin, change):
    kwargs = {"rate_rps": 1.0, "n_requests": 100}
    top = twin
    if change == "shares":
        top = replace(twin, sites=(twin.sites[0], replace(twin.sites[1], demand_share=0.6)))
    elif change == "pool":
        top = replace(twin, n_prfaas=4)
    elif change == "rate":
        kwargs["rate_rps"] = -1.0
    else:
        kwargs["n_requests"] = 0
    with pytest.raises(SpecError):
        simulate_topology(case, top, rng=np.random.default_rng(0), **kwargs)
