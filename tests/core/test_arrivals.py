"""A trace's arrival rate over time and its burstiness (core.arrivals), and the piecewise-stationary
TTFT built on them (api.latency.paths_of)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from typer.testing import CliRunner

from prfaas_plan.api.latency import site_latency
from prfaas_plan.api.systems import PRFAAS, systems
from prfaas_plan.cli import app
from prfaas_plan.core.arrivals import RateProfile, rate_profile
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from tests.conftest import FIXTURES

rng = np.random.default_rng(20261203)


def test_a_poisson_stream_is_nearly_stationary_and_poisson():
    """The bins' counts of a steady stream vary by sampling alone (about 1 / sqrt(360) = 5% at 120 s
    bins of 3 req/s); shrunk, the factors stay within 5% of 1, and the gaps' SCV within 0.05 of 1."""
    t = np.cumsum(rng.exponential(1 / 3, 20_000))
    p = rate_profile(t)
    assert p is not None and max(abs(f - 1) for f in p.factors) < 0.05
    assert p.arrival_scv == pytest.approx(1.0, abs=0.05)


def test_two_rates_are_two_windows_weighted_by_their_requests():
    """1 req/s for an hour, then 3 req/s for an hour: mean rate 2, factors 0.5 and 1.5 holding a
    quarter and three quarters of the requests."""
    t = np.concatenate([np.sort(rng.uniform(0, 3600, 3600)), np.sort(rng.uniform(3600, 7200, 10_800))])
    p = rate_profile(t, bin_s=600)
    lo = sum(w for f, w in zip(p.factors, p.weights, strict=True) if f < 1)
    assert lo == pytest.approx(0.25, abs=0.01)
    mean_lo = sum(f * w for f, w in zip(p.factors, p.weights, strict=True) if f < 1) / lo
    mean_hi = sum(f * w for f, w in zip(p.factors, p.weights, strict=True) if f > 1) / (1 - lo)
    assert mean_lo == pytest.approx(0.5, rel=0.05) and mean_hi == pytest.approx(1.5, rel=0.05)


def test_batches_raise_the_gaps_scv():
    """Poisson batches of b requests at one instant: the gaps are 0 with probability (b - 1) / b,
    else exponential of mean b x m; their SCV is 2b - 1 (19 for b = 10)."""
    starts = np.cumsum(rng.exponential(10 / 3, 3000))
    t = np.repeat(starts, 10)
    p = rate_profile(t)
    assert p.arrival_scv == pytest.approx(19.0, rel=0.1)


def test_too_few_gaps_measure_no_departure_from_poisson():
    t = np.cumsum(rng.exponential(1.0, 40))
    assert rate_profile(t).arrival_scv == 1.0
    assert rate_profile([5.0, 5.0, 5.0]) is None and rate_profile([1.0]) is None


@pytest.fixture(scope="module")
def case():
    sc = load_scenario(None, Catalog.default())
    return sc, systems(sc, which=(PRFAAS,))[PRFAAS]


def test_piecewise_ttft_is_the_request_weighted_mixture_of_the_windows(case):
    """Two windows at 0.5x and 1.5x the rate holding 1/4 and 3/4 of the requests: the mean TTFT is
    the weighted mean of the stationary means at those rates, the P90 lies between theirs."""
    sc, c = case
    rate = 0.5 * c.capacity_rps
    two = RateProfile(factors=(0.5, 1.5), weights=(0.25, 0.75), windows=2, bin_s=60.0, peak_to_mean=1.5)
    piecewise = site_latency(replace(sc, workload=replace(sc.workload, rate_profile=two)), c, rate)
    lo, hi = site_latency(sc, c, 0.5 * rate), site_latency(sc, c, 1.5 * rate)
    assert piecewise.ttft_mean_s == pytest.approx(0.25 * lo.ttft_mean_s + 0.75 * hi.ttft_mean_s, rel=1e-9)
    assert lo.ttft_p90_s < piecewise.ttft_p90_s < hi.ttft_p90_s
    assert piecewise.utilization["prfaas prefill"] == pytest.approx(
        0.25 * lo.utilization["prfaas prefill"] + 0.75 * hi.utilization["prfaas prefill"], rel=1e-9)
    # a window over capacity makes the system unstable, whatever the mean rate
    over = RateProfile(factors=(0.9, 2.2), weights=(0.9, 0.1), windows=2, bin_s=60.0, peak_to_mean=2.2)
    t = site_latency(replace(sc, workload=replace(sc.workload, rate_profile=over)), c, rate)
    assert not t.stable and t.ttft_p90_s is None


def _latency(trace: str, load: str) -> dict:
    import json

    r = CliRunner().invoke(app, ["latency", "--trace", str(FIXTURES / "traces" / trace), "--load", load,
                                 "--format", "json"])
    assert r.exit_code == 0, r.stdout
    return json.loads(r.stdout)


def test_latency_on_a_near_poisson_trace_holds_against_its_replay():
    d = _latency("mooncake_synthetic_trace.jsonl", "0.5")
    check = d["trace_check"]
    assert check["arrival_scv"] == 1.0 and check["rate_peak_to_mean"] == 1.0
    for name, s in check["systems"].items():
        assert s["analytic_holds"], name
        assert d["systems"][name]["ttft_p90_s"] == pytest.approx(s["simulated_ttft_p90_s"], rel=0.25)


@pytest.mark.slow
def test_latency_on_a_bursty_trace_says_the_analytic_model_does_not_hold():
    """The first 2,000 requests of the Azure LLM inference 2023 code trace (as published, see
    tests/fixtures/traces/README.md): bursts inside a minute (gaps' SCV 14.85) that the windows'
    G/G/c waits underestimate; the replay's P90 is shown first, with one line saying so."""
    d = _latency("azure_code_2023_2000.csv", "0.4")
    check = d["trace_check"]
    assert check["requests"] == 2000 and check["arrival_scv"] == pytest.approx(14.85, abs=0.01)
    assert not any(s["analytic_holds"] for s in check["systems"].values())
    table = CliRunner().invoke(app, ["latency", "--trace", str(FIXTURES / "traces" / "azure_code_2023_2000.csv"),
                                     "--load", "0.4"]).stdout
    first, said = table.splitlines()[0], [ln for ln in table.splitlines() if "does not hold" in ln]
    assert first.startswith("paper-case-study: the trace replayed in the simulator (2,000 requests")
    assert len(said) == 1 and "PrfaaS-PD" in said[0]
