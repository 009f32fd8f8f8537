"""`thresholds`: the router's threshold table over link bandwidth x load (``api.thresholds``).

At load >= 1 every entry is optimize's plan at that bandwidth (reloaded with the bandwidth as a
``--set``); below, the entry's TTFT is the minimum over the same candidates by brute force, never
above t*'s, and t*'s is what the PrfaaS system ``api.systems`` builds gives. The CLI writes
parseable JSON and CSV, ``-o`` writes the file, bad grids end with one line and exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.api import thresholds as th
from prfaas_plan.api.latency import system_latency
from prfaas_plan.api.optimize import optimize
from prfaas_plan.api.slo import SEARCH_NODES
from prfaas_plan.api.systems import PRFAAS, topology_systems
from prfaas_plan.cli import app
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.report.views_thresholds import thresholds_json
from tests.test_cli_errors import error_line

runner = CliRunner()
CAT = Catalog.default(())


@pytest.fixture(scope="module")
def case():
    return th.thresholds(None, CAT, bandwidths="5Gbps,100Gbps", loads="0.5,1,1.2")


@pytest.fixture(scope="module")
def two():
    return th.thresholds("two-regions", CAT, bandwidths="30%", loads="0.6,1")


def _at(ref, entries):
    """The scenario reloaded with each site's link at the entries' bandwidth (a plain --set)."""
    keys = ["link.bandwidth"] if len(entries) == 1 else [f"links[{i}].bandwidth" for i in range(len(entries))]
    return load_scenario(ref, CAT, overrides=[f"{k}={e.bandwidth_bytes_per_s!r}B/s"
                                              for k, e in zip(keys, entries, strict=True)])


def _cells(table, load):
    """Per bandwidth index, the entries of every site at ``load``."""
    per = list(table.sites.values())
    idx = [k for k, e in enumerate(per[0]) if e.load == load]
    return [[es[k] for es in per] for k in idx]


@pytest.mark.slow
def test_case_study_grid_and_patched_once(case, monkeypatch):
    assert list(case.sites) == ["local"] and case.grid == "absolute" and case.loads == (0.5, 1.0, 1.2)
    es = case.sites["local"]
    assert [e.bandwidth_bytes_per_s for e in es] == [0.625e9] * 3 + [12.5e9] * 3
    assert [e.scale for e in es] == [0.05] * 3 + [1.0] * 3
    assert es[3].n_p == 3 and es[3].n_d == 5 and es[3].n_prfaas == 4  # the paper's 4 / 3 / 5 at 100 Gbps
    assert es[0].n_p == 5 and es[0].n_d == 3  # the README's sweep: 4/5/3 below ~5 Gbps
    calls = []
    real = th.load_scenario
    monkeypatch.setattr(th, "load_scenario", lambda *a, **k: calls.append(a) or real(*a, **k))
    th.thresholds(None, CAT, bandwidths="5Gbps,10Gbps,20Gbps", loads="1")
    assert len(calls) == 1  # loaded once, each bandwidth a patch of that spec


@pytest.mark.slow
@pytest.mark.parametrize("table", ["case", "two"])
def test_at_load_one_and_above_the_entry_is_optimizes_plan(table, request):
    t = request.getfixturevalue(table)
    ref = None if table == "case" else "two-regions"
    for load in [x for x in t.loads if x >= 1]:
        for entries in _cells(t, load):
            sc = _at(ref, entries)
            best = optimize(sc, ttft_slo=False).result.head.best
            sites = best.sites
            assert round(best.n_prfaas) == entries[0].n_prfaas
            for e, b in zip(entries, sites, strict=True):
                assert (e.threshold_tokens, e.n_p, e.n_d) == (b.threshold_tokens, b.n_p, b.n_d)
                assert e.threshold_tokens == e.threshold_star_tokens and e.offload and e.ttft_s is None
                assert e.lambda_max_plan_rps == best.lambda_max_rps
                assert e.rate_rps == pytest.approx(load * e.lambda_max_rps, rel=1e-15)


@pytest.mark.slow
def test_below_capacity_the_entry_is_the_brute_force_minimum(case):
    for (e,) in _cells(case, 0.5):
        sc = _at(None, [e])
        f = th.fleet(sc)
        rate = 0.5 * f.capacity(f.star).lambda_max_rps
        assert e.rate_rps == rate and e.lambda_max_rps == f.capacity(f.star).lambda_max_rps
        assert f.cands[0] == th.candidates(sc.workload.lengths, e.threshold_star_tokens)
        assert None in f.cands[0] and 40 <= len(f.cands[0]) <= th.GRID + 3
        brute = {}
        for j, t in enumerate(f.cands[0]):
            if f.capacity((j,)).lambda_max_rps > rate:
                timing = f.timing((j,), rate)
                if timing.stable:
                    brute[t] = timing.sites["local"].ttft_p90_s
        assert len(brute) >= 10  # the capacity filter keeps a fair share at half load
        assert e.ttft_s == min(brute.values())
        assert brute[e.threshold_tokens] == e.ttft_s
        assert e.ttft_s <= e.ttft_star_s == brute[e.threshold_star_tokens]
        assert e.ttft_weighted_s == e.ttft_s  # one site: the objective is its statistic
        # t*'s TTFT is that of the PrfaaS system api.systems builds from the same plan
        system = topology_systems(sc, which=(PRFAAS,))[PRFAAS]
        assert system_latency(sc, system, rate, nodes=SEARCH_NODES).sites["local"].ttft_p90_s == e.ttft_star_s
    low, high = _cells(case, 0.5)
    assert low[0].ttft_s > high[0].ttft_s  # a thin link costs TTFT
    assert low[0].threshold_tokens < low[0].threshold_star_tokens  # below capacity, offload more than t*


def test_offloading_nothing_can_win():
    """A 30 s round trip and the mean: every offloaded request pays it, so the best is to keep all."""
    t = th.thresholds(None, CAT, bandwidths="100Gbps", loads="0.1",
                      overrides=["link.rtt=30s", "slo.ttft_statistic=mean"])
    (e,) = t.sites["local"]
    assert t.statistic == "mean"
    assert e.threshold_tokens is None and not e.offload and e.p_offload == 0.0
    assert e.ttft_s < e.ttft_star_s


@pytest.mark.slow
def test_two_regions_scales_every_link(two):
    assert two.grid == "relative" and two.passes == 2 and list(two.sites) == ["region-a", "region-b"]
    assert [lk.bandwidths_bytes_per_s for lk in two.links] == [(3.75e9,), (0.75e9,)]  # 30 and 6 Gbps
    a, b = _cells(two, 0.6)[0]
    assert a.rate_rps == b.rate_rps and b.site_rate_rps == pytest.approx(0.4 * b.rate_rps)
    assert a.ttft_weighted_s == b.ttft_weighted_s <= a.ttft_weighted_star_s  # never above t*'s
    assert a.ttft_weighted_s < a.ttft_weighted_star_s  # and here it gains
    assert a.ttft_weighted_s == pytest.approx(0.6 * a.ttft_s + 0.4 * b.ttft_s, rel=1e-12)
    p = thresholds_json(two)
    assert p["bandwidths_gbps"] is None and p["links"]["region-b"]["bandwidths_gbps"] == [6.0]
    assert p["links"]["region-a"]["nominal_gbps"] == 100.0


@pytest.mark.slow
def test_the_default_grid_follows_the_form():
    one = th.thresholds(None, CAT, loads="1")
    assert one.grid == "absolute" and one.bandwidth_texts[:2] == ("1Gbps", "1.931Gbps") and len(one.scales) == 8
    several = th.thresholds("two-regions", CAT, loads="1")
    assert several.grid == "relative" and several.bandwidth_texts == ("10%", "21.54%", "46.42%", "100%")
    assert several.scales == (0.1, 0.2154, 0.4642, 1.0)
    assert [lk.bandwidths_bytes_per_s[0] for lk in several.links] == [1.25e9, 0.25e9]  # 10 and 2 Gbps


@pytest.mark.slow
def test_cli_json_csv_and_output(tmp_path: Path):
    res = runner.invoke(app, ["thresholds", "--bandwidths", "100Gbps", "--loads", "0.5,1", "-f", "json"])
    assert res.exit_code == 0, res.output
    p = json.loads(res.stdout)
    assert p["bandwidths_gbps"] == [100.0] and p["loads"] == [0.5, 1.0] and p["statistic"] == "p90"
    low, one = p["sites"]["local"]
    assert one["threshold_tokens"] == one["threshold_star_tokens"] and one["ttft_s"] is None
    assert low["ttft_s"] <= low["ttft_star_s"] and low["n_p"] == 3

    out = tmp_path / "table.csv"
    res = runner.invoke(app, ["thresholds", "two-regions", "--bandwidths", "30%,100%", "--loads", "1,1.2",
                              "-o", str(out), "--format", "csv"])
    assert res.exit_code == 0, res.output
    rows = out.read_text().splitlines()
    assert len(rows) == 1 + 2 * 2 * 2  # sites x bandwidths x loads, and the header
    assert rows[0].startswith("site,bandwidth_gbps,") and res.stdout == out.read_text()

    out = tmp_path / "table.json"
    res = runner.invoke(app, ["thresholds", "--bandwidths", "1Gbps..100Gbps:8:log", "--loads", "1..1.5:12",
                              "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert f"wrote {out}" in res.stderr
    assert json.loads(out.read_text())["bandwidths"][1] == "1.931Gbps"
    assert "local: threshold t, tokens" in res.stdout and "19,194" in res.stdout  # optimize's t at 100 Gbps
    assert max(len(line) for line in res.stdout.splitlines()) <= 120  # 12 load columns: split to fit


@pytest.mark.slow
@pytest.mark.parametrize(("args", "option"), [
    (["--loads", "0"], "--loads"), (["--loads", "1.6"], "--loads"), (["--loads", ""], "--loads"),
    (["--loads", "0.5,0.5"], "--loads"), (["--loads", "-0.2..1:3"], "--loads"),
    (["--bandwidths", "0Gbps"], "--bandwidths"), (["--bandwidths", ","], "--bandwidths"),
    (["--bandwidths", "-1Gbps..10Gbps:3"], "--bandwidths"), (["--bandwidths", "0%,50%"], "--bandwidths"),
    (["two-regions", "--bandwidths", "10Gbps"], "--bandwidths"), (["-o", "no/such/folder/t.json"], "--output"),
])
def test_bad_input_is_one_line_naming_the_option(args, option):
    assert option in error_line("thresholds", *args)
