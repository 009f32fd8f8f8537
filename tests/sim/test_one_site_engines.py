"""The topology simulator (``sim.topology``) on one PD site is the one-site simulator (``sim.run``):
on the case study's three systems, with Poisson arrivals and with a replayed trace, every statistic
of the site's run (TTFT histogram and paths, throughput, stage rates, utilisations, queues, link,
prefix hits, events) is the same bit for bit at the same seed. ``simulate`` of one PD site runs in
``sim.run`` for its control loops, records, replay and compiled fast path; this holds the two
engines to one model of a site."""

from __future__ import annotations

import numpy as np
import pytest

from prfaas_plan.api.systems import topology_systems
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.sim.run import simulate
from prfaas_plan.sim.topology import simulate_topology
from tests.conftest import FIXTURES

_TIMED = {"wall_s", "cpu_s"}


def _untimed(d):
    if isinstance(d, dict):
        return {k: _untimed(v) for k, v in d.items() if k not in _TIMED}
    if isinstance(d, list):
        return [_untimed(v) for v in d]
    return d


@pytest.mark.slow
@pytest.mark.parametrize("trace", [None, FIXTURES / "mooncake_small.jsonl"], ids=["poisson", "trace"])
def test_the_topology_engine_on_one_site_is_the_one_site_engine(trace) -> None:
    sc = load_scenario(None, Catalog.default(()), trace=None if trace is None else str(trace))
    n = None if trace is not None else 3000
    for name, system in topology_systems(sc).items():
        rate = 0.7 * system.capacity_rps
        one = simulate(sc, system.sites[0].config, rate_rps=rate, n_requests=n, rng=np.random.default_rng(1))
        topo = simulate_topology(sc, system, rate_rps=rate, n_requests=n, rng=np.random.default_rng(1))
        assert one.completed > 0, name
        assert _untimed(topo.sites["local"].to_dict()) == _untimed(one.to_dict()), name
        assert topo.ttft.n == one.ttft.n and topo.ttft.mean == one.ttft.mean, name
