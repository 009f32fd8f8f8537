"""`latency` on a scenario of several models (``api.fleet_latency``): the plan and separate
services per model, each model's own pool of the service, every model's KV on its site's link."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan.api import latency as api_latency
from prfaas_plan.api.fleet_latency import latency
from prfaas_plan.api.fleet_sim import fleet_systems, simulate
from prfaas_plan.api.latency import link_load
from prfaas_plan.cli import app
from prfaas_plan.io.fleet import load_plan_input
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from tests.conftest import FIXTURES, ROOT

CASE = ROOT / "prfaas_plan" / "catalog" / "scenarios" / "paper-case-study.yaml"
FLEETS = {"three-models": "three-models", "two-regions": str(FIXTURES / "fleet-two-regions.yaml")}
ENTRIES = {"three-models": ("Kimi-Linear-48B-A3B", "DeepSeek-V3", "Llama-3.1-70B"),
           "two-regions": ("internal-1t@region-a", "internal-1t@region-b", "Kimi-Linear-48B-A3B@region-a")}


def _fleet(name: str):
    return load_plan_input(FLEETS[name], Catalog.default())


def _invoke(*args: str):
    return CliRunner().invoke(app, ["latency", *args])


# ---------------------------------------------------------------- analytic vs simulated


@pytest.fixture(scope="module", params=list(FLEETS))
def both(request):
    """The analytic TTFT and a 100,000-request simulation of each configuration at load 0.7."""
    fs = _fleet(request.param)
    return request.param, latency(fs, load=0.7), simulate(fs, load=0.7, n_requests=100_000, seed=7)


@pytest.mark.validation
@pytest.mark.parametrize("system", ["prfaas", "separate"])
def test_analytic_ttft_within_15_percent_of_simulated_at_load_07(both, system):
    name, ana, sim = both
    assert sim.rate_rps == pytest.approx(ana.rate_rps, rel=1e-12)
    a, res = ana.systems[system], sim.systems[system].result
    assert a.ttft_mean_s == pytest.approx(res.ttft.mean, rel=0.15)
    assert a.ttft_p90_s == pytest.approx(res.ttft.quantile(0.9), rel=0.15)
    assert set(a.entries) == set(res.sites) == set(ENTRIES[name])
    for label, t in a.entries.items():
        h = res.sites[label].ttft
        assert h.n > 10_000, label
        assert t.ttft_mean_s == pytest.approx(h.mean, rel=0.15), label
        assert t.ttft_p90_s == pytest.approx(h.quantile(0.9), rel=0.15), label


# ---------------------------------------------------------------- the model


def test_a_link_is_slowed_by_every_model_on_it():
    """The plan's one link: each entry's transfers see the link's utilisation by all its KV (the sum
    of each entry's own load), not their own share of it; separate services: one link slice each."""
    fs = _fleet("three-models")
    r = latency(fs, load=0.7)
    for name, (system, scs) in fleet_systems(fs).items():
        t = r.systems[name]
        own = {e.site: link_load(sc, e.config, r.rate_rps * e.demand_share) for sc, e in zip(scs, system.entries,
                                                                                              strict=True)}
        assert len(t.links) == (1 if name == "prfaas" else 3)
        for label, e in t.entries.items():
            total = t.links[t.links_of[label]]
            mine = [k for k in own if t.links_of[k] == t.links_of[label]]
            assert total == pytest.approx(sum(own[k] for k in mine), rel=1e-12)
            if e.p_offload > 0:
                assert e.utilization["link"] == e.link_utilization == total
        # each model's own pool: its offloaded stream on its instances, not the service's total
        for label, (n, u) in t.pools.items():
            assert n == dict(system.pools)[label]
            assert u == t.entries[label].utilization["prfaas prefill"]
        if name == "prfaas":  # every model offloads some KV: the link is busier than any one makes it
            assert min(own.values()) > 0
            assert t.links["prfaas->local"] > max(own.values()) * (1 + 1e-3)


def test_one_model_fleet_is_latency_on_the_case_study(tmp_path: Path):
    """The case study as a fleet of one model: PrfaaS-PD's TTFT of `latency` within 1e-6."""
    d = yaml.safe_load(CASE.read_text())
    for k in ("model", "sizing", "baselines"):
        d.pop(k)
    d["models"] = [{"model": "internal-1t", "demand_share": 1.0}]
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(d))
    ref = api_latency.latency(load_scenario(None, Catalog.default()), load=0.8, which=("prfaas",))
    want = ref.at_site("local")["prfaas"]
    r = latency(load_plan_input(str(path), Catalog.default()), rate_rps=ref.rate_rps)
    got = r.systems["prfaas"]
    e = got.entries["internal-1t"]
    assert (e.n_prfaas, e.n_p, e.n_d) == (want.n_prfaas, want.n_p, want.n_d)
    for k in ("ttft_mean_s", "ttft_p50_s", "ttft_p90_s", "ttft_p99_s", "tpot_s"):
        assert getattr(e, k) == pytest.approx(getattr(want, k), rel=1e-6), k
        assert getattr(got, k, getattr(e, k)) == pytest.approx(getattr(want, k), rel=1e-6), k
    assert e.link_utilization == pytest.approx(want.link_utilization, rel=1e-6)


def test_above_capacity_names_the_unstable_stages_per_model():
    """At twice the smaller capacity: every diverging stage named on its model; a model whose own
    pools and link keep up still has its TTFT (its pools are its own)."""
    r = latency(_fleet("three-models"), load=2.0)
    assert r.load == pytest.approx(2.0)
    shared = r.systems["prfaas"]
    assert not shared.stable and shared.ttft_mean_s is None and shared.ttft_p90_s is None
    assert "DeepSeek-V3: prfaas prefill" in shared.unstable_stages
    kimi = shared.entries["Kimi-Linear-48B-A3B"]
    assert kimi.stable and kimi.ttft_mean_s is not None
    # exactly at the plan's capacity its binding stage is unstable, whatever round-off says
    at = latency(_fleet("three-models"), rate_rps=shared.capacity_rps).systems["prfaas"]
    assert not at.entries["DeepSeek-V3"].stable


# ---------------------------------------------------------------- the CLI


def test_cli_table():
    res = _invoke("three-models", "--load", "0.8")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "three-models: analytic TTFT at 2.513 req/s in total (80% of the smaller capacity)" in out
    for label in ("one shared service", "separate services", *ENTRIES["three-models"], "TPOT ms", "link busy %",
                  "Per path"):
        assert label in out


def test_cli_json_and_csv():
    res = _invoke("three-models", "--rate", "2", "--format", "json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["rate_rps"] == 2.0 and set(d["systems"]) == {"prfaas", "separate"}
    shared = d["systems"]["prfaas"]
    assert set(shared["entries"]) == set(ENTRIES["three-models"])
    assert {k: v["n_prfaas"] for k, v in shared["pools"].items()} == {
        "Kimi-Linear-48B-A3B": 1, "DeepSeek-V3": 2, "Llama-3.1-70B": 1}
    assert set(shared["links"]) == {"prfaas->local"}
    mean = sum(e["demand_share"] * e["ttft_mean_s"] for e in shared["entries"].values())
    assert shared["ttft_mean_s"] == pytest.approx(mean, rel=1e-12)
    assert sum(e["rate_rps"] for e in shared["entries"].values()) == pytest.approx(2.0, rel=1e-12)
    for e in shared["entries"].values():
        assert e["ttft_p50_s"] <= e["ttft_p90_s"] <= e["ttft_p99_s"] and e["tpot_s"] > 0
    res = _invoke("three-models", "--rate", "2", "--format", "csv")
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    assert [(r["system"], r["model"]) for r in rows] == [(s, m) for s in ("prfaas", "separate")
                                                         for m in ENTRIES["three-models"]]
    assert float(rows[0]["ttft_mean_s"]) == pytest.approx(shared["entries"]["Kimi-Linear-48B-A3B"]["ttft_mean_s"])


@pytest.mark.parametrize(("args", "line"), [
    (["--rate", "0"], "error: --rate: must be a finite, positive arrival rate in req/s, got 0"),
    (["--load", "-1"], "error: --load:"),
    ([], "error: --rate: give --rate R (req/s) or --load F"),
    (["--load", "0.5", "--trace", str(FIXTURES / "mooncake_small.jsonl")], "error: --trace: a scenario of several"),
])
def test_bad_options_are_one_line(args, line):
    res = _invoke("three-models", *args)
    assert res.exit_code == 2 and res.stdout == ""
    err = res.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(line), err


def test_beyond_capacity_is_reported_not_refused():
    """--load 2 is what `latency` takes on one model too: the unstable stages, exit 0."""
    for scenario in ("paper-case-study", "three-models"):
        res = _invoke(scenario, "--load", "2")
        assert res.exit_code == 0, res.output
        assert "unstable: " in res.stdout
