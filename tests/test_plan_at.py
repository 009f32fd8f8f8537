"""`--plan-at rate=pNN` (issue 23, part 3): plan for a trace's busy hour, in optimize and size;
the percentile's reading, its oracle, and the errors."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prfaas_plan.api import plan_at
from prfaas_plan.api.latency import site_latency
from prfaas_plan.api.systems import PRFAAS, systems
from prfaas_plan.cli import app
from prfaas_plan.core.arrivals import RateProfile, rate_profile
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from tests.conftest import FIXTURES
from tests.test_cli_errors import error_line

runner = CliRunner()
AZURE = FIXTURES / "traces" / "azure_code_2023_2000.csv"
QUANTILES = "link.bandwidth={kind: quantiles, p50: 14.7Gbps, p10: 8Gbps, p1: 2Gbps}"


def profile(factors, shares) -> RateProfile:
    return RateProfile(factors=(1.0,), weights=(1.0,), windows=len(factors), bin_s=60.0, peak_to_mean=max(factors),
                       window_factors=tuple(factors), window_shares=tuple(shares))


def test_rate_at_is_the_window_whose_time_reaches_the_share_by_hand():
    """Four equal windows at 0.5, 3, 1, 2 x the mean: half the time is at 1x or less, so P50 is 1;
    P51 is the next window's 2; P90 and P99 the busiest, 3; P25 the quietest, 0.5."""
    p = profile((0.5, 3.0, 1.0, 2.0), (0.25,) * 4)
    assert [p.rate_at(q) for q in (0.25, 0.5, 0.51, 0.9, 0.99)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_rate_at_weighs_windows_by_their_time():
    """A partial last window counts for its time: 0.9 of the span at 1x, 0.1 at 5x: P89 is 1, P91 is 5."""
    p = profile((1.0, 5.0), (0.9, 0.1))
    assert (p.rate_at(0.89), p.rate_at(0.91)) == (1.0, 5.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 10.0), st.floats(0.01, 1.0)), min_size=1, max_size=30),
       st.floats(0.001, 0.999))
def test_rate_at_equals_a_brute_force_over_the_windows(windows, q):
    """The oracle: the smallest window factor f with time(rate <= f) >= q x span."""
    f, w = zip(*windows, strict=True)
    total = sum(w)
    want = min(x for x in f if sum(s for y, s in zip(f, w, strict=True) if y <= x) >= q * total * (1 - 1e-12))
    assert profile(f, w).rate_at(q) == want


def test_the_profile_keeps_every_window_and_its_time():
    """1 req/s for 50 min, then 3 req/s for 10 min, in 5-min bins: the span (first to last arrival)
    is just short of an hour, so the partial 12th bin joins the 11th: 10 windows of 1/12 of the
    span, the busy one 1/6. P80 is the quiet rate, P90 the busy one, 3 / mean (mean 4/3 req/s)."""
    rng = np.random.default_rng(7)
    t = np.concatenate([np.sort(rng.uniform(0, 3000, 3000)), np.sort(rng.uniform(3000, 3600, 1800))])
    p = rate_profile(t, bin_s=300)
    assert p.window_shares == pytest.approx((1 / 12,) * 10 + (1 / 6,), rel=1e-2)
    assert sum(p.window_shares) == pytest.approx(1, rel=1e-12)
    mean = (len(t) - 1) / (t[-1] - t[0])
    # P80: the 9th of 10 quiet windows of about 300 arrivals (sampling sd 6%, shrunk), so within 15%
    assert p.rate_at(0.8) * mean == pytest.approx(1.0, rel=0.15)
    assert p.rate_at(0.9) * mean == pytest.approx(3.0, rel=0.08)


def run_json(*args: str, command: str = "optimize") -> dict:
    res = runner.invoke(app, [command, *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.fixture(scope="module")
def azure():
    return load_scenario(None, Catalog.default(), trace=str(AZURE), overrides=["slo.ttft=10s"])


@pytest.mark.slow
def test_optimize_at_the_busy_hour_searches_the_slo_at_the_window_rate(azure):
    """With rate=p90, Lambda_max and the plan are unchanged (capacity does not depend on the
    rate); the TTFT SLO's rate is the largest stationary rate (the trace's gaps' SCV kept) meeting
    the bound: P90 TTFT there is 10 s within the bisection's tolerance, and 2% above it misses."""
    plain = run_json("--trace", str(AZURE), "--set", "slo.ttft=10s")
    busy = run_json("--trace", str(AZURE), "--set", "slo.ttft=10s", "--plan-at", "rate=p90")
    assert busy["best"] == plain["best"]
    lv = plan_at.parse(azure, "rate=p90").rate
    assert busy["planned_rate"]["rate_rps"] == pytest.approx(lv.rate_rps, rel=1e-12)
    assert lv.factor == azure.workload.rate_profile.rate_at(0.9)
    assert lv.mean_rps == pytest.approx(1999 / float(azure.workload.trace.span_s), rel=1e-12)
    held = plan_at.at_rate(azure, lv)
    assert held.workload.rate_profile.stationary and not azure.workload.rate_profile.stationary
    slo = busy["ttft_slo"]["prfaas"]
    config = replace(systems(held, which=(PRFAAS,))[PRFAAS], threshold_tokens=slo["threshold_tokens"],
                     n_prfaas=slo["n_prfaas"], n_p=slo["n_p"], n_d=slo["n_d"], capacity_rps=slo["capacity_rps"])
    at = site_latency(held, config, slo["lambda_ttft_rps"])
    assert at.statistic("p90") <= 10.0 * (1 + 1e-9)
    assert at.statistic("p90") == pytest.approx(10.0, rel=0.01)
    over = site_latency(held, config, slo["lambda_ttft_rps"] * 1.02)
    assert not over.stable or over.statistic("p90") > 10.0
    # the windows as they come allow a mean rate below the busy window's: the busy hour binds
    assert plain["ttft_slo"]["prfaas"]["lambda_ttft_rps"] < slo["lambda_ttft_rps"]


def test_size_buys_for_the_busy_hour():
    """size --trace buys for the trace's mean rate; at rate=p90 for factor x that; with --demand D
    for D x the factor (D read as the mean)."""
    mean = run_json("--trace", str(AZURE), command="size")
    busy = run_json("--trace", str(AZURE), "--plan-at", "rate=p90", command="size")
    sc = load_scenario(None, Catalog.default(), trace=str(AZURE))
    factor = sc.workload.rate_profile.rate_at(0.9)
    assert busy["demand_rps"] == pytest.approx(mean["demand_rps"] * factor, rel=1e-12)
    assert "P90 windowed rate" in busy["demand_source"]
    given = run_json("--trace", str(AZURE), "--demand", "2rps", "--plan-at", "p90", command="size")
    assert given["demand_rps"] == pytest.approx(2 * factor, rel=1e-12)
    assert busy["best"]["cost"]["per_hour"] > mean["best"]["cost"]["per_hour"]


@pytest.mark.parametrize(("command", "args", "words"), [
    ("optimize", ["--plan-at", "p90"], "the scenario has none"),
    ("optimize", ["--plan-at", "rate=p90"], "no trace"),
    ("optimize", ["--trace", str(AZURE), "--plan-at", "speed=p90"], "not bandwidth or rate"),
    ("optimize", ["--trace", str(AZURE), "--plan-at", "rate=p90,rate=p50"], "gives rate twice"),
    ("optimize", ["--trace", str(AZURE), "--plan-at", "rate=p100"], "not a percentile"),
    ("optimize", ["--trace", str(AZURE), "--set", QUANTILES, "--plan-at", "p10"], "bandwidth=p10, rate=p10"),
    ("size", ["--trace", str(AZURE), "--set", QUANTILES, "--plan-at", "bandwidth=p10"], "sizing.links"),
])
def test_plan_at_errors_are_one_line(command, args, words):
    line = error_line(command, *args)
    assert "--plan-at" in line and words in line, line


def test_both_laws_at_once():
    """bandwidth=p10,rate=p90: the plan at the link's P10 with the busy window's rate as the
    robustness demand."""
    both = run_json("--trace", str(AZURE), "--set", QUANTILES, "--plan-at", "bandwidth=p10,rate=p90")
    link = run_json("--trace", str(AZURE), "--set", QUANTILES, "--plan-at", "bandwidth=p10")
    assert both["best"] == link["best"] and both["robustness"]["plan_at"] == "p10"
    assert both["robustness"]["rate_rps"] == pytest.approx(both["planned_rate"]["rate_rps"], rel=1e-12)


@pytest.mark.slow
def test_report_plans_and_buys_for_the_busy_hour_and_replays_the_trace(tmp_path):
    """report --trace --plan-at rate=p90: the plan's closing line names the window, the sizing
    buys for its rate, and the latency section shows the trace replayed in the simulator first,
    with the line saying where the analytic model does not hold for these arrivals."""
    import html
    import re

    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", "--trace", str(AZURE), "--plan-at", "rate=p90", "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", out.read_text())))
    sc = load_scenario(None, Catalog.default(), trace=str(AZURE))
    rate = plan_at.parse(sc, "rate=p90").rate.rate_rps
    assert f"planned at the trace's P90 windowed rate, {rate:.3f} req/s" in text
    assert f"what to buy for {rate:.3f} req/s" in text
    replay = text.index("the trace replayed in the simulator")
    assert replay < text.index("paper-case-study: analytic TTFT at")
    assert "does not hold for this trace's arrivals" in text
