"""`prfaas-plan size` through the CLI: the plan, its JSON, PLAN.yaml confirmed by optimize, refusals."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.test_cli_errors import error_line

runner = CliRunner()


def size_json(*args: str) -> dict:
    res = runner.invoke(app, ["size", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_case_study_plan_and_its_cost_by_hand():
    r = size_json()
    b = r["best"]
    pre, local = b["prefill_service"], b["sites"]["local"]
    # every stage at utilisation <= the headroom, at the demand
    assert pre["utilization"] <= 0.8 + 1e-9
    assert all(u <= 0.8 + 1e-9 for u in local["utilization"].values())
    # decode pinned at 20 / (25 ms x 1024) = 0.78125 req/s per 8xH20: ceil(3.75 / 0.78125) = 5 instances
    assert local["n_d"] == 5
    gpus = pre["instances"] * 8 * 4.0 + local["instances"] * 8 * 2.0
    assert b["cost"]["gpus_per_hour"] == pytest.approx(gpus, rel=1e-12)
    c = b["cost"]
    assert c["per_hour"] == pytest.approx(c["gpus_per_hour"] + c["links_per_hour"] + c["egress_per_hour"], rel=1e-12)
    assert c["per_million_requests"] == pytest.approx(c["per_hour"] / (3.0 * 3600) * 1e6, rel=1e-12)
    assert c["per_million_output_tokens"] == pytest.approx(c["per_hour"] / (3.0 * 1024 * 3600) * 1e6, rel=1e-12)
    # homogeneous 8xH20 by hand: 16 prefill (3.75 x T_H20(27,486) = 3.75 x 4.265 s = 15.99) + 5 decode
    h = r["homogeneous"]["8xH20"]["sites"]["local"]
    assert (h["n_p"], h["n_d"]) == (16, 5)
    assert r["homogeneous"]["8xH20"]["cost"]["per_hour"] == 21 * 8 * 2.0
    best_h = min(p["cost"]["per_hour"] for p in r["homogeneous"].values() if "cost" in p)
    assert r["savings"]["vs_best_homogeneous"]["fraction"] == pytest.approx(1 - c["per_hour"] / best_h, rel=1e-12)


def test_more_demand_never_costs_less_and_tiers_price_the_trade():
    r = size_json()
    costs = [d["prfaas_per_hour"] for d in r["demand_curve"]]
    assert costs == sorted(costs)
    best = r["best"]["cost"]["per_hour"]
    for t in r["link_tiers"]:  # the best plan is the cheapest over every tier
        assert t["plan"]["cost"]["per_hour"] >= best - 1e-9
    assert min(t["plan"]["cost"]["per_hour"] for t in r["link_tiers"]) == pytest.approx(best, rel=1e-12)


def test_a_cheaper_tier_never_raises_the_cost():
    base = size_json()["best"]["cost"]["per_hour"]
    cheaper = size_json("--set", "sizing.links[2].price_per_hour=10")["best"]["cost"]["per_hour"]
    assert cheaper <= base


@pytest.mark.slow
@pytest.mark.parametrize("scenario", ["paper-case-study", "two-regions"])
def test_plan_yaml_loads_in_optimize_and_serves_the_demand(tmp_path, scenario):
    out = tmp_path / "plan.yaml"
    res = runner.invoke(app, ["size", scenario, "--demand", "4rps", "-o", str(out)])
    assert res.exit_code == 0, res.output
    m = re.search(r"Lambda_max ([\d.]+) req/s >= demand / headroom ([\d.]+)", res.stderr)
    assert m, res.stderr
    assert "sizing" not in yaml.safe_load(out.read_text())
    opt = runner.invoke(app, ["optimize", str(out), "--format", "json"])
    assert opt.exit_code == 0, opt.output
    lam = json.loads(opt.stdout)["best"]["lambda_max_rps"]
    assert lam >= 4 / 0.8 * (1 - 1e-9)
    sim = runner.invoke(app, ["simulate", str(out), "--requests", "300", "--format", "json"])
    assert sim.exit_code == 0, sim.output


def test_the_plan_yaml_keeps_the_pinned_decode_on_its_own_kind(tmp_path):
    out = tmp_path / "plan.yaml"
    res = runner.invoke(app, ["size", "-o", str(out)])
    assert res.exit_code == 0, res.output
    data = yaml.safe_load(out.read_text())
    assert data["decode"]["mode"] == "pinned" and data["clusters"]["local"]["hardware"] == "H20"
    assert data["baselines"]["homogeneous"]["hardware"] == "H20"  # pinned decode describes H20 only


def test_infeasible_names_the_constraint_and_the_fix():
    res = runner.invoke(app, ["size", "--demand", "30rps", "--set", "sizing.local.max_instances=20"])
    assert res.exit_code == 1, res.output
    line = res.stderr.strip().splitlines()[-1]
    assert "max_instances is 20" in line and "raise it to" in line


def test_no_kind_meets_the_decode_slo_is_infeasible():
    # derived decode: the 1T model's 931 GiB of weights do not fit on 8xH20
    res = runner.invoke(app, ["size", "--set", "decode.mode=derived", "--set", "decode.bs_max=null",
                              "--set", "decode.t_decode=null"])
    assert res.exit_code == 1, res.output
    assert "decode" in res.stderr and "H20" in res.stderr


@pytest.mark.parametrize(("args", "field"), [
    (["--demand", "0"], "--demand"),
    (["--demand", "-1rps"], "--demand"),
    (["--set", "sizing.headroom=0"], "sizing.headroom"),
    (["--set", "sizing.headroom=1.5"], "sizing.headroom"),
    (["--set", "sizing.prfaas.hardware=[H200, NoSuchGPU]"], "sizing.prfaas.hardware"),
    (["--set", "sizing.links=[{bandwidth: 10Gbps}]"], "price_per_hour"),
    (["--set", "sizing.local.hardware=[]"], "sizing.local.hardware"),
    (["--set", "sizing.links=[]"], "sizing.links"),
    (["--set", "sizing.prfaas.hardware=[B300]"], "sizing.prfaas.price_per_gpu_hour"),
])
def test_bad_sizing_input_is_one_line(args, field):
    line = error_line("size", *args)
    assert field in line, line


def test_a_scenario_without_sizing_is_refused():
    line = error_line("size", "qwen35-b200-h200")
    assert "sizing" in line


def test_prices_come_from_sizing_then_the_scenario_then_the_catalog():
    def price(*args):
        return size_json(*args)["homogeneous"]["8xH20"]["sites"]["local"]["price_per_gpu_hour"]

    assert price() == 2.0  # hardware/H20.yaml
    assert price("--set", "clusters.local.price_per_gpu_hour=1.5") == 1.5
    assert price("--set", "clusters.local.price_per_gpu_hour=1.5", "--set",
                 "sizing.local.price_per_gpu_hour={H20: 1.25}") == 1.25
