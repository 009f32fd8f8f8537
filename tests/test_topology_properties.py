"""Invariants of the joint plan over random topologies built from two-regions' sites: more
bandwidth on a link, more prefill-service instances or more instances at a site never lower
Lambda_max; the plan's point is feasible; site rates are the demand shares of the total."""

from __future__ import annotations

import os
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prfaas_plan.api.topology import joint_plan, site_models
from prfaas_plan.core.throughput import Method
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario

CI = bool(os.environ.get("CI"))
THRESHOLDS = np.arange(128.0, 131072.0 + 1, 512.0)
RTOL = 1e-6  # the refinement zooms t off the grid at the grid's splits; round-off and zoom steps stay below this


@pytest.fixture(scope="module")
def models():
    return site_models(load_scenario("two-regions", Catalog.default(())))[0]


def cases(n: int):
    return settings(max_examples=n, deadline=None, derandomize=CI, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@st.composite
def topologies(draw):
    share = draw(st.floats(0.1, 0.9))
    return {"share": share, "gbps": (draw(st.floats(1.0, 200.0)), draw(st.floats(1.0, 200.0))),
            "n": (draw(st.integers(2, 10)), draw(st.integers(2, 10))), "n_prfaas": draw(st.integers(1, 12)),
            "method": draw(st.sampled_from([Method.PAPER, Method.EXACT]))}


def _lam(models, t) -> float:
    ms = [replace(models[0], demand_share=t["share"], link_bytes_per_s=t["gbps"][0] * 1.25e8, n_local=t["n"][0]),
          replace(models[1], demand_share=1 - t["share"], link_bytes_per_s=t["gbps"][1] * 1.25e8, n_local=t["n"][1])]
    _, best, _, _ = joint_plan(ms, THRESHOLDS, np.array([t["n_prfaas"]]), t["method"])
    for sp, m in zip(best.sites, ms, strict=True):  # feasible at its Lambda, shares of the total
        assert sp.egress_bytes_per_s <= m.link_bytes_per_s * (1 + 1e-9)
        assert sp.lambda_rps == pytest.approx(m.demand_share * best.lambda_max_rps, rel=1e-12)
    assert best.prfaas_utilization <= 1 + 1e-9
    return best.lambda_max_rps


@cases(15)
@given(topologies(), st.integers(0, 1), st.floats(1.1, 20.0))
def test_more_bandwidth_on_a_link_never_lowers_lambda(models, t, which, factor):
    more = dict(t, gbps=tuple(g * factor if i == which else g for i, g in enumerate(t["gbps"])))
    assert _lam(models, more) >= _lam(models, t) * (1 - RTOL)


@cases(15)
@given(topologies(), st.integers(1, 8))
def test_more_prefill_instances_never_lower_lambda(models, t, extra):
    assert _lam(models, dict(t, n_prfaas=t["n_prfaas"] + extra)) >= _lam(models, t) * (1 - RTOL)


@cases(15)
@given(topologies(), st.integers(0, 1), st.integers(1, 4))
def test_more_instances_at_a_site_never_lower_lambda(models, t, which, extra):
    more = dict(t, n=tuple(n + extra if i == which else n for i, n in enumerate(t["n"])))
    assert _lam(models, more) >= _lam(models, t) * (1 - RTOL)


@cases(20)
@given(topologies(), st.integers(0, 1), st.lists(st.floats(100.0, 131072.0), min_size=1, max_size=6))
def test_capacities_is_point_at_each_candidate(models, t, i, ts):
    """``core.joint.capacities`` (site i's candidates vectorised, the other site held) is, candidate by
    candidate, Lambda_max of ``core.joint.point`` on the same configuration (the SLO search's pruning)."""
    from prfaas_plan.core import joint

    ms = [replace(models[0], demand_share=t["share"], link_bytes_per_s=t["gbps"][0] * 1.25e8, n_local=t["n"][0]),
          replace(models[1], demand_share=1 - t["share"], link_bytes_per_s=t["gbps"][1] * 1.25e8, n_local=t["n"][1])]
    n_p = [max(1, n // 2) for n in t["n"]]
    held = [joint.at(m, [20_000.0], k, t["method"]) for m, k in zip(ms, n_p, strict=True)]
    cands = joint.at(ms[i], sorted(ts), n_p[i], t["method"])
    caps = joint.capacities(ms, held, i, float(t["n_prfaas"]), cands)
    for k in range(len(cands.t)):
        one = [joint.at(ms[i], [float(cands.t[k])], n_p[i], t["method"]) if j == i else held[j] for j in range(2)]
        assert caps[k] == pytest.approx(joint.point(ms, one, [0, 0], t["n_prfaas"]).lambda_max_rps, rel=1e-12)
