"""The bundled two-regions topology: the simulator against the analytic model (issue "Topology
as data"): saturation within 1% of the exact-method Lambda_max, and per-site mean TTFT at 70% of
capacity within 5% of the analytic model."""

from __future__ import annotations

import numpy as np
import pytest

from prfaas_plan.api.latency import system_latency
from prfaas_plan.api.systems import topology_systems
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim.topology import saturation_topology, simulate_topology


@pytest.fixture(scope="module")
def two_regions():
    sc = load_scenario("two-regions", Catalog.default(()))
    return sc, topology_systems(sc, which=("prfaas",))["prfaas"]


@pytest.mark.slow
@pytest.mark.validation
def test_saturates_within_one_percent_of_the_exact_lambda_max(two_regions) -> None:
    sc, system = two_regions
    sat = saturation_topology(sc, system, np.random.default_rng(3), n_requests=200_000)
    assert sat.throughput_rps == pytest.approx(system.capacity_rps, rel=0.01)
    assert sat.bottleneck == "prfaas"  # the plan balances Eq. 7: the shared compute binds


@pytest.mark.validation
def test_per_site_mean_ttft_at_load_0_7_matches_the_analytic_model(two_regions) -> None:
    sc, system = two_regions
    rate = 0.7 * system.capacity_rps
    res = simulate_topology(sc, system, rate_rps=rate, n_requests=60_000, rng=np.random.default_rng(5))
    analytic = system_latency(sc, system, rate)
    for name, site in res.sites.items():
        sim_mean = site.to_dict()["ttft_mean_s"]
        assert sim_mean == pytest.approx(analytic.sites[name].ttft_mean_s, rel=0.05), name
