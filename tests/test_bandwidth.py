"""Bandwidth that varies (issue 11 item 3): `link.bandwidth` as a law (empirical, quantiles, series),
its median the nominal bandwidth; `optimize`'s robustness of the nominal and the P10 plan; --plan-at."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.api import robust
from prfaas_plan.api.optimize import optimize
from prfaas_plan.api.topology import site_models
from prfaas_plan.cli import app
from prfaas_plan.core import joint
from prfaas_plan.core.throughput import Method
from prfaas_plan.io.bandwidth import read_empirical, read_series
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from tests.conftest import FIXTURES, ROOT
from tests.test_cli_errors import CASE, error_line

runner = CliRunner()
GBPS = units.GBPS
DIURNAL = FIXTURES / "bandwidth" / "diurnal.csv"
QUANTILES = "{kind: quantiles, p50: 14.7Gbps, p10: 8Gbps, p1: 2Gbps}"


def law_set(spec: str, key: str = "link.bandwidth") -> str:
    return f"{key}={spec}"


def series_set(path: Path, key: str = "link.bandwidth") -> str:
    return f"{key}={{kind: series, file: {json.dumps(str(path))}}}"


def case(*over: str, scenario: str | None = None):
    return load_scenario(scenario, Catalog.default(), overrides=list(over))


def run_json(*args: str) -> dict:
    res = runner.invoke(app, ["optimize", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def sets(*over: str) -> list[str]:
    return [a for o in over for a in ("--set", o)]


# --- the readers, by hand


def test_empirical_quantiles_by_hand(tmp_path):
    # ten samples 1..10 Gbps, shuffled, a header, a comment, units per value and bare Gbps
    f = tmp_path / "bw.csv"
    f.write_text("bandwidth\n# measured\n7\n3Gbps\n10\n1000Mbps\n5\n0.75GB/s\n2\n8Gb/s\n4\n9\n")
    law = read_empirical(f)
    assert law.values_bytes_per_s == tuple(k * GBPS for k in range(1, 11))
    assert law.weights == pytest.approx([0.1] * 10, abs=1e-15)
    # Q(q) = x_(floor(n q) + 1) of the sorted samples (right-continuous)
    assert law.quantile(0.5) == 6 * GBPS
    assert law.quantile(0.1) == 2 * GBPS
    assert law.quantile(0.01) == 1 * GBPS
    assert law.quantile(0.95) == 10 * GBPS
    assert law.mean_bytes_per_s == pytest.approx(5.5 * GBPS, rel=1e-15)
    assert law.down_fraction == 0.0
    # the unit key: bare numbers in Mbps
    m = tmp_path / "mbps.csv"
    m.write_text("500\n1500\n")
    assert read_empirical(m, "Mbps").values_bytes_per_s == (0.5 * GBPS, 1.5 * GBPS)


def test_series_time_weighting_by_hand(tmp_path):
    f = tmp_path / "s.csv"
    f.write_text("time_s,bandwidth\n0,10\n60,20\n180,0\n240,40Gbps\n")
    law = read_series(f)
    # each value holds until the next time: 60 s, 120 s, 60 s; the last for the median gap, 60 s
    assert law.hold_last_s == 60.0
    assert law.duration_s == 300.0
    assert law.values_bytes_per_s == (0.0, 10 * GBPS, 20 * GBPS, 40 * GBPS)
    assert law.weights == pytest.approx([60 / 300, 60 / 300, 120 / 300, 60 / 300], abs=1e-15)
    assert law.quantile(0.5) == 20 * GBPS  # F(10) = 0.4, F(20) = 0.8
    assert law.quantile(0.1) == 0.0
    assert law.quantile(0.2) == 10 * GBPS  # exactly 20% of the time at 0 or below: the next value
    assert law.down_fraction == pytest.approx(0.2)
    assert law.mean_bytes_per_s == pytest.approx((10 * 60 + 20 * 120 + 40 * 60) / 300 * GBPS)
    assert law.times_s == (0.0, 60.0, 180.0, 240.0)
    assert law.series_bytes_per_s == (10 * GBPS, 20 * GBPS, 0.0, 40 * GBPS)


def test_quantiles_are_a_step_law_with_the_given_percentiles():
    sc = case(law_set(QUANTILES))
    law = sc.link.bandwidth_law
    assert law is not None and law.kind == "quantiles"
    assert law.values_bytes_per_s == (2 * GBPS, 8 * GBPS, 14.7 * GBPS)
    assert law.weights == pytest.approx([0.10, 0.40, 0.50], abs=1e-15)
    assert (law.quantile(0.5), law.quantile(0.1), law.quantile(0.01)) == (14.7 * GBPS, 8 * GBPS, 2 * GBPS)


# --- nominal = P50, and every plain scenario as it was


def test_the_nominal_bandwidth_is_the_median_and_plans_as_that_number():
    sc = case(series_set(DIURNAL))
    law = sc.link.bandwidth_law
    assert law is not None and law.samples == 1440 and law.kind == "series"
    assert sc.link.bandwidth_bytes_per_s == law.quantile(0.5) == sc.topology.links[0].link.bandwidth_bytes_per_s
    with_law = run_json(*sets(series_set(DIURNAL)))
    plain = run_json(*sets(f"link.bandwidth={law.quantile(0.5)!r}B/s"))
    assert "robustness" in with_law and "robustness" not in plain
    for key in ("threshold_tokens", "n_prfaas", "n_p", "n_d", "lambda_max_rps", "egress_bytes_per_s"):
        assert with_law["best"][key] == plain["best"][key], key
    assert with_law["link"] == plain["link"]


@pytest.mark.parametrize("scenario", ["paper-case-study", "two-regions"])
def test_plain_scenarios_have_no_law_and_no_robustness(scenario):
    sc = case(scenario=scenario)
    assert all(lk.link.bandwidth_law is None for lk in sc.topology.links)
    assert not robust.has_law(sc)
    assert "robustness" not in run_json(scenario)


def test_a_scenario_file_names_its_series_relative_to_its_folder(tmp_path, monkeypatch):
    folder = tmp_path / "scen"
    folder.mkdir()
    (folder / "bw.csv").write_text(DIURNAL.read_text())
    data = yaml.safe_load(CASE.read_text())
    data["link"]["bandwidth"] = {"kind": "series", "file": "bw.csv"}
    (folder / "s.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)  # elsewhere: the scenario's folder decides
    out = run_json(str(folder / "s.yaml"))
    assert out["robustness"]["links"]["prfaas->local"]["source"] == str(folder / "bw.csv")
    # named by an option, a file is relative to the working folder (not the catalog scenario's)
    monkeypatch.chdir(folder)
    out = run_json(*sets("link.bandwidth={kind: series, file: bw.csv}"))
    assert Path(out["robustness"]["links"]["prfaas->local"]["source"]).resolve() == (folder / "bw.csv").resolve()


# --- bad input: one line, exit 2, the file, the line and the field


@pytest.mark.parametrize(("text", "kind", "where", "words"), [
    ("time_s,bandwidth\n0,10\n60,20\n60,30\n", "series", "line 4 time_s", "increase strictly"),
    ("time_s,bandwidth\n0,10\n60,20\n30,30\n", "series", "line 4 time_s", "increase strictly"),
    ("time_s,bandwidth\n0,10\n60,-2\n", "series", "line 3 bandwidth", "negative"),
    ("time_s,bandwidth\n0,10\n60,fast\n", "series", "line 3 bandwidth", "'fast'"),
    ("time_s,bandwidth\n0,10\nsoon,20\n", "series", "line 3 time_s", "'soon'"),
    ("time_s,bandwidth\n0,10\n60,20,1\n", "series", "line 3", "3 columns"),
    ("10\n20\n12Gbsp\n", "empirical", "line 3 bandwidth", "'12Gbsp'"),
    ("10\nnan\n", "empirical", "line 2 bandwidth", "finite"),
    ("0\n0\n5\n", "empirical", "", "median bandwidth is 0"),
    ("\n", "empirical", "", "empty"),
    ("bandwidth\n# nothing\n", "empirical", "", "no bandwidth samples"),
    ("time_s,bandwidth\n0,10\n", "series", "line 2", "at least two rows"),
])
def test_bad_files_are_one_line_naming_file_line_and_field(tmp_path, text, kind, where, words):
    f = tmp_path / "bw.csv"
    f.write_text(text)
    line = error_line("optimize", "--set", f"link.bandwidth={{kind: {kind}, file: {json.dumps(str(f))}}}")
    assert f"{f}: {where}" in line, line
    assert words in line, line


@pytest.mark.parametrize(("value", "field", "words"), [
    ("{kind: weekly, file: x.csv}", "link.bandwidth.kind", "'weekly'"),
    ("{file: x.csv}", "link.bandwidth.kind", "missing"),
    ("{kind: quantiles, p50: 10Gbps, p10: 12Gbps}", "link.bandwidth.p10", "above p50"),
    ("{kind: quantiles, p50: 10Gbps, p10: 8Gbps, p1: 9Gbps}", "link.bandwidth.p1", "above p10"),
    ("{kind: quantiles, p10: 8Gbps}", "link.bandwidth.p50", "missing"),
    ("{kind: quantiles, p50: 10Gbps, p10: -1Gbps}", "link.bandwidth.p10", "negative"),
    ("{kind: series, file: x.csv, unit: furlongs}", "link.bandwidth.unit", "not a bandwidth unit"),
    ("{kind: series, file: nowhere.csv}", "nowhere.csv", "not found"),
])
def test_bad_laws_are_one_line_naming_the_field(value, field, words):
    line = error_line("optimize", "--set", f"link.bandwidth={value}")
    assert field in line and words in line, line


def test_a_bad_file_named_in_a_scenario_names_the_file(tmp_path):
    (tmp_path / "bw.csv").write_text("time_s,bandwidth\n0,10\n60,x\n")
    data = yaml.safe_load(CASE.read_text())
    data["link"]["bandwidth"] = {"kind": "series", "file": "bw.csv"}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    line = error_line("optimize", str(tmp_path / "s.yaml"))
    assert f"{tmp_path / 'bw.csv'}: line 3 bandwidth" in line, line


@pytest.mark.parametrize(("args", "words"), [
    (["--plan-at", "p10"], "the scenario has none"),
    ([*sets(law_set(QUANTILES)), "--plan-at", "10"], "not a percentile"),
    ([*sets(law_set(QUANTILES)), "--plan-at", "p100"], "not a percentile"),
    ([*sets(law_set(QUANTILES)), "--plan-at", "p-5"], "not a percentile"),
    ([*sets(law_set("{kind: quantiles, p50: 10Gbps, p10: 0Gbps}")), "--plan-at", "p10"], "is down"),
])
def test_plan_at_errors_name_the_option(args, words):
    line = error_line("optimize", *args)
    assert "--plan-at" in line and words in line, line


# --- robustness: the held configuration at each percentile, and over the law


def _fixed_point_at(over: list[str], scenario: str | None, conf: list[tuple[float, int]], n_prfaas: float):
    """Lambda_max of a fixed configuration in the scenario loaded with ``over``, by core.joint.point."""
    sc = case(*over, scenario=scenario)
    models, _ = site_models(sc)
    m = Method(sc.search.method)
    cands = [joint.at(md, [t], n_p, m) for md, (t, n_p) in zip(models, conf, strict=True)]
    return joint.point(models, cands, [0] * len(models), n_prfaas).lambda_max_rps


@pytest.mark.slow
@pytest.mark.parametrize(("scenario", "keys"), [
    (None, ["link.bandwidth"]),
    ("two-regions", ["links[0].bandwidth", "links[1].bandwidth"]),
])
def test_lambda_at_p10_is_the_fixed_configuration_at_that_bandwidth(scenario, keys, tmp_path):
    over = [series_set(DIURNAL, keys[0])]
    if len(keys) > 1:
        over.append(law_set(QUANTILES, keys[1]))
    sc = case(*over, scenario=scenario)
    rb = optimize(sc, ttft_slo=False).result.robustness
    assert rb is not None and rb.comonotone == (len(keys) > 1)
    p10 = robust.bandwidths(sc, 0.10)
    for plan in rb.plans:
        conf = [(s.threshold_tokens, s.n_p) for s in plan.sites]
        for label, q in (("p10", 0.10), ("p1", 0.01), ("p50", 0.5)):
            bws = robust.bandwidths(sc, q)
            at = [f"{k}={b!r}B/s" for k, b in zip(keys, bws, strict=True)]
            assert plan.lambda_at(label) == _fixed_point_at(at, scenario, conf, plan.n_prfaas), (plan.name, label)
    # the nominal plan at its own bandwidth is optimize's Lambda_max
    nominal = rb.plans[0]
    assert nominal.name == "nominal" and nominal.headline
    assert nominal.lambda_at("p50") == pytest.approx(optimize(sc, ttft_slo=False).result.head.best.lambda_max_rps,
                                                     rel=1e-12)
    assert p10[0] < sc.topology.links[0].link.bandwidth_bytes_per_s


def test_plan_at_p10_is_optimize_at_the_p10_bandwidth():
    sc = case(series_set(DIURNAL), "link.share_cap=0.2")
    p10 = sc.link.bandwidth_law.quantile(0.1)
    at = run_json(*sets(series_set(DIURNAL), "link.share_cap=0.2"), "--plan-at", "p10")
    plain = run_json(*sets(f"link.bandwidth={p10!r}B/s", "link.share_cap=0.2"))
    for key in ("threshold_tokens", "n_prfaas", "n_p", "n_d", "lambda_max_rps", "p_offload"):
        assert at["best"][key] == plain["best"][key], key
    assert at["methods"]["exact"]["best"]["lambda_max_rps"] == plain["methods"]["exact"]["best"]["lambda_max_rps"]
    rb = at["robustness"]
    assert rb["plan_at"] == "p10" and rb["plans"]["safe"]["headline"] and not rb["plans"]["nominal"]["headline"]
    safe = rb["plans"]["safe"]["sites"]["local"]
    assert (safe["threshold_tokens"], safe["n_p"]) == (at["best"]["threshold_tokens"], at["best"]["n_p"])
    # the safe plan gives up some Lambda at the median for more of it at P10
    nominal = rb["plans"]["nominal"]
    assert rb["plans"]["safe"]["lambda_max_rps"]["p10"] > nominal["lambda_max_rps"]["p10"]
    assert rb["plans"]["safe"]["lambda_max_rps"]["p50"] < nominal["lambda_max_rps"]["p50"]
    # another level adds its own plan, the headline
    p25 = run_json(*sets(series_set(DIURNAL), "link.share_cap=0.2"), "--plan-at", "p25")["robustness"]
    assert p25["percentiles"] == ["p50", "p25", "p10", "p1"] and p25["plans"]["plan-at"]["headline"]


def test_the_served_rate_expectation_by_hand_on_a_three_value_law():
    """p50 14.7, p10 8, p1 2 Gbps: 14.7 half the time, 8 for 40%, 2 for 10% (the step law)."""
    for extra, rate_source in (((), "0.8 x"), (("workload.rate_rps=2",), "workload.rate_rps")):
        sc = case(law_set(QUANTILES), *extra)
        rb = optimize(sc, ttft_slo=False).result.robustness
        assert rb.rate_source.startswith(rate_source) and rb.states == 3
        nominal = rb.plans[0]
        conf = [(s.threshold_tokens, s.n_p) for s in nominal.sites]
        lam = {g: _fixed_point_at([f"link.bandwidth={g}Gbps", *extra], None, conf, nominal.n_prfaas)
               for g in (14.7, 8, 2)}
        rate = 2.0 if extra else 0.8 * lam[14.7]
        assert rb.rate_rps == pytest.approx(rate, rel=1e-15)
        want = 0.5 * min(rate, lam[14.7]) + 0.4 * min(rate, lam[8]) + 0.1 * min(rate, lam[2])
        assert nominal.expected_served_rps == pytest.approx(want, rel=1e-12)
        fits = sum(w for w, g in ((0.5, 14.7), (0.4, 8), (0.1, 2)) if lam[g] >= rate)
        assert nominal.fits_fraction == pytest.approx(fits, abs=1e-12)
        assert 0 < nominal.served_fraction <= 1


def test_a_link_that_is_down_serves_nothing_it_carries(tmp_path):
    f = tmp_path / "s.csv"
    f.write_text("time_s,bandwidth\n0,100\n60,0\n120,100\n180,100\n")
    sc = case(series_set(f))
    rb = optimize(sc, ttft_slo=False).result.robustness
    assert rb.links[0].down_fraction == pytest.approx(0.25)
    nominal = rb.plans[0]
    assert nominal.sites[0].p_offload > 0
    assert nominal.fits_fraction == pytest.approx(0.75)
    assert nominal.expected_served_rps == pytest.approx(0.75 * rb.rate_rps, rel=1e-12)
    assert all(math.isfinite(a.lambda_max_rps) for p in rb.plans for a in p.at)


def test_the_table_says_what_it_weighs():
    res = runner.invoke(app, ["optimize", "two-regions", *sets(series_set(DIURNAL, "links[0].bandwidth"),
                                                                law_set(QUANTILES, "links[1].bandwidth"))])
    assert res.exit_code == 0, res.output
    text = res.stdout
    assert "Bandwidth that varies" in text and "comonotone" in text and "0.8 x the nominal plan's Lambda_max" in text
    assert "safe (P10)" in text and "nominal (P50) *" in text and "diurnal.csv, 1,440 rows" in text


def test_the_bundled_series_is_what_its_script_writes(tmp_path):
    out = tmp_path / "diurnal.csv"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_bandwidth_series.py"), "--output", str(out)],
                   check=True, capture_output=True)
    assert out.read_text() == DIURNAL.read_text()
    law = read_series(DIURNAL)
    assert law.samples == 1440 and law.times_s[-1] == 86_340 and law.duration_s == 86_400
    assert max(law.values_bytes_per_s) <= 100 * GBPS and law.down_fraction == pytest.approx(3 / 1440)
