"""Plan once, pass it down (issue 22, part 2): within one command each service law and each plan
is built once (``api.context``), counted through the console script's own entry."""

from __future__ import annotations

import json
from collections import Counter
from unittest import mock

import pytest
from typer.testing import CliRunner

from prfaas_plan.api import context, laws
from prfaas_plan.api import plan as api_plan
from prfaas_plan.cli import app

runner = CliRunner()


def counted(*args: str) -> tuple[Counter, dict]:
    """Run a command in-process; how often the timing and the plan searches were built."""
    calls: Counter = Counter()

    def wrap(name, fn):
        def inner(*a, **k):
            calls[name] += 1
            return fn(*a, **k)
        return inner

    with mock.patch.object(laws, "_timing", wrap("timing", laws._timing)), \
            mock.patch.object(api_plan, "_plan", wrap("plan", api_plan._plan)):
        res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return calls, json.loads(res.stdout)


@pytest.mark.slow
def test_optimize_with_a_ttft_slo_times_each_gpu_kind_once():
    """The case study with slo.ttft=10s: the fleet's laws (8xH200 service, 8xH20 PD) and the
    homogeneous baseline's (8xH20 at every length) once each, whatever the methods and the SLO
    search ask (8 before); the throughput plan searched once (2 before)."""
    calls, out = counted("optimize", "--set", "slo.ttft=10s")
    assert calls == Counter({"timing": 2, "plan": 1})
    assert out["ttft_slo"]["prfaas"]["lambda_ttft_rps"] > 0


@pytest.mark.slow
def test_two_regions_times_each_site_once():
    """two-regions with a TTFT SLO: per PD site its fleet and its homogeneous baseline (4; 14
    before), and one joint plan (2 before)."""
    calls, _ = counted("optimize", "two-regions", "--set", "slo.ttft=10s")
    assert calls == Counter({"timing": 4, "plan": 1})


def test_nothing_is_kept_outside_a_command():
    """A library call outside a context builds every time (no state between calls)."""
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.scenario import load_scenario

    sc = load_scenario(None, Catalog.default())
    assert context.current() is None
    assert laws.timing(sc) is not laws.timing(sc)
    with context.planning() as ctx:
        assert laws.timing(sc) is laws.timing(sc) and ctx.built == {"timing": 1}
        with context.planning(fresh=True) as inner:
            assert inner is not ctx and laws.timing(sc) is not None and inner.built == {"timing": 1}
    assert context.current() is None


@pytest.mark.slow
@pytest.mark.parametrize(("args", "plan", "timings"), [
    (("latency", "--load", "0.7"), "plan", 2), (("latency", "two-regions", "--load", "0.7"), "plan", 4),
    (("simulate", "--load", "0.7", "--requests", "500"), "plan", 2),
    (("simulate", "two-regions", "--load", "0.7", "--requests", "500"), "plan", 4)],
    ids=["latency", "latency-two-regions", "simulate", "simulate-two-regions"])
def test_latency_and_simulate_plan_once(args: tuple[str, ...], plan: str, timings: int):
    """latency and simulate (one path for every topology, api.latency and api.sim) search the plan
    once and time each PD site's fleet and homogeneous baseline once."""
    calls, _ = counted(*args)
    assert calls == Counter({"timing": timings, plan: 1})
