"""A study's columns hold what the commands print: a value with a unit read once, as the scenario
reads it (``.si``); every result column filled for a topology as for two clusters; t shown as
``optimize`` shows it; ``study-report`` on any study's results, table and HTML."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.cli import app

runner = CliRunner()


def _study(tmp_path: Path, text: str, out: str = "r.parquet") -> list[dict]:
    study = tmp_path / "study.yaml"
    study.write_text(text)
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / out), "--workers", "1"])
    assert res.exit_code == 0, res.output
    return pq.read_table(tmp_path / out).to_pylist() if out.endswith(".parquet") else []


def _optimize_json(*args: str) -> dict:
    res = runner.invoke(app, ["optimize", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


# --- 1. a study value with a unit: read once, by the field's own reader ------------------------------


def test_a_bare_bandwidth_is_gbps_in_the_si_column_as_set_reads_it(tmp_path):
    """20.5 on link.bandwidth is 20.5 Gbps (as --set link.bandwidth=20.5 reads it): 2.5625e9 B/s,
    not 20.5 B/s; the row's plan is --set's, and study-report says Gbps, not 1.64e-07."""
    rows = _study(tmp_path, "scenario: paper-case-study\naxes:\n  link.bandwidth: [10, 20.5, 100Gbps]\n")
    assert [r["link.bandwidth.si"] for r in rows] == [1.25e9, 20.5 * 1e9 / 8, 1.25e10]
    for r, text in zip(rows, ["10", "20.5", "100Gbps"], strict=True):
        b = _optimize_json("--set", f"link.bandwidth={text}")["best"]
        assert r["lambda_max_rps"] == b["lambda_max_rps"] and r["link_utilization"] == b["link_utilization"]
    res = runner.invoke(app, ["study-report", str(tmp_path / "r.parquet")])
    assert res.exit_code == 0, res.output
    assert "1.64e-07" not in res.output and re.search(r"every tier\s+1\.564x\s+20\.5\n", res.output), res.output


@pytest.mark.slow
@pytest.mark.parametrize(("key", "values", "want"), [
    ("link.rtt", "[5ms, 0.03]", [0.005, 0.03]),  # a bare duration is seconds
    ("link.max_window", "[4MiB, 1000]", [4 * 2**20, 1000.0]),  # a bare size is bytes
    ("workload.input.max", "[64K, 100000]", [65536.0, 100000.0]),  # tokens, K = 1024
    ("links[0].bandwidth", "[10Gbps, 2.5]", [1.25e9, 2.5e9 / 8]),
    ("clusters.prfaas.instances", "2..6:3", [2.0, 4.0, 6.0]),
    ("link.bandwidth", "1..4:4", [1.25e8, 2.5e8, 3.75e8, 5e8]),  # a bare range: Gbps too
    ("link.bandwidth", "500Mbps..2Gbps:4", [6.25e7, 1.25e8, 1.875e8, 2.5e8]),
])
def test_every_field_reads_its_values_with_its_own_unit(tmp_path, key, values, want):
    scenario = "two-regions" if key.startswith("links") else "paper-case-study"
    rows = _study(tmp_path, f"scenario: {scenario}\naxes:\n  {key}: {values}\n")
    assert [r[f"{key}.si"] for r in rows] == pytest.approx(want, rel=1e-12)


def test_a_name_or_a_section_has_no_si_column(tmp_path):
    rows = _study(tmp_path, "scenario: paper-case-study\naxes:\n  search.method: [paper, exact]\n"
                            "  workload.input:\n    a: {kind: lognormal, mu: 9, sigma: 1, min: 128, max: 128K}\n")
    assert "search.method.si" not in rows[0] and "workload.input.si" not in rows[0]


# --- 2. every result column filled for every topology ------------------------------------------------


def test_a_two_regions_row_fills_every_column_optimize_prints(tmp_path):
    rows = _study(tmp_path, "scenario: two-regions\naxes:\n  links[0].bandwidth: [100Gbps]\n")
    r = rows[0]
    d = _optimize_json("two-regions")
    # what optimize prints for two-regions: $512/h, $19,757 per 1M requests, naive 5.452, 1.38x at equal cost
    assert r["price_per_hour"] == d["best"]["price_per_hour"] == 512.0
    assert r["cost_per_million_requests"] == d["best"]["cost_per_million_requests"] == pytest.approx(19756.72, abs=0.01)
    assert r["naive_lambda_max_rps"] == d["baselines"]["naive_heterogeneous"]["lambda_max_rps"]
    assert r["naive_lambda_max_rps"] == pytest.approx(5.452, abs=5e-4)
    assert r["prfaas_vs_homogeneous_equal_cost"] == d["ratios"]["prfaas_vs_homogeneous_equal_cost"]
    assert r["prfaas_vs_homogeneous_equal_cost"] == pytest.approx(1.382, abs=5e-4)
    # a topology's plan in one row: N_p 2 + 4, N_d 6 + 4, egress 18.96 + 6.17 Gbps, the share offloaded
    # weighted by each site's rate: (0.6761 x 4.319 + 0.2556 x 2.879) / 7.199 = 0.5079
    assert (r["n_p"], r["n_d"], r["n_prfaas"]) == (6, 10, 8)
    assert r["egress_gbps"] == pytest.approx(18.963246 + 6.172423, rel=1e-6)
    assert r["p_offload"] == pytest.approx(0.50789, abs=1e-5)
    assert r["link_utilization"] == pytest.approx(0.30862, abs=1e-5)  # the busiest link, region-b's
    empty = [k for k, v in r.items() if v is None and k not in ("error", "threshold_tokens")]
    assert not empty, empty  # t is one per site: in splits
    assert r["splits"] == "region-a t=12,285 N_p/N_d=2/6; region-b t=26,241 N_p/N_d=4/4"


@pytest.mark.slow
@pytest.mark.parametrize(("command", "options", "extra"), [
    ("latency", "{load: 0.7}", ["--load", "0.7"]),
    ("simulate", "{load: 0.7, requests: 2000}", ["--load", "0.7", "--requests", "2000"]),
])
def test_a_two_regions_ttft_row_fills_every_column(tmp_path, command, options, extra):
    rows = _study(tmp_path, f"scenario: two-regions\ncommand: {command}\noptions: {options}\n"
                            "axes:\n  links[0].bandwidth: [100Gbps]\n")
    r = rows[0]
    assert not [k for k, v in r.items() if v is None and k != "error"], r
    res = runner.invoke(app, [command, "two-regions", *extra, "--format", "json"])
    d = json.loads(res.stdout)["systems"]["prfaas"]
    assert r["ttft_p90_s"] == d["ttft_p90_s"]
    # the busiest link, as an optimize row: region-b's 20 Gbps
    assert r["link_utilization"] == max(s["link_utilization"] for s in d["sites"].values())
    assert r["link_utilization"] == d["sites"]["region-b"]["link_utilization"]


# --- 3. one conversion of t for display --------------------------------------------------------------


def test_t_is_rounded_down_once_for_every_command():
    assert units.shown_threshold(19194.79171720651) == 19194 and units.format_threshold(26241.84) == "26,241"
    assert units.shown_threshold(127.0) == 127 and units.format_threshold(1e6 - 1e-9) == "999,999"


def test_study_report_prints_t_as_optimize_does(tmp_path):
    rows = _study(tmp_path, "scenario: paper-case-study\naxes:\n  link.bandwidth: [100Gbps]\n")
    assert rows[0]["threshold_tokens"] == pytest.approx(19194.79, abs=0.01)
    assert rows[0]["splits"].startswith("t=19,194 ")
    opt = runner.invoke(app, ["optimize"]).output
    assert "19,194 (18.7K)" in opt and "19,195" not in opt
    rep = runner.invoke(app, ["study-report", str(tmp_path / "r.parquet")]).output
    assert " 19,194 " in rep and "19,195" not in rep
    two = runner.invoke(app, ["optimize", "two-regions"]).output
    assert "26,241 (25.6K)" in two  # and the study's splits above say 26,241 too


# --- study-report on any study's results -------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["table", "json", "html"])
def test_study_report_on_a_two_regions_study(tmp_path, fmt):
    _study(tmp_path, "scenario: two-regions\naxes:\n  links[0].bandwidth: [10Gbps, 100Gbps]\n")
    args = ["-o", str(tmp_path / "r.html")] if fmt == "html" else ["--format", fmt]
    res = runner.invoke(app, ["study-report", str(tmp_path / "r.parquet"), *args])
    assert res.exit_code == 0, res.output
    if fmt == "table":
        assert "region-a t=12,285 N_p/N_d=2/6; region-b t=26,241 N_p/N_d=4/4" in res.output
        assert "1.843x" in res.output
    if fmt == "html":
        assert "region-b t=26,241" in (tmp_path / "r.html").read_text()


@pytest.mark.parametrize(("cell", "column", "message"), [
    ("abc", "lambda_max_rps", "'abc' is not a number"),
    ("abc", "prfaas_vs_homogeneous", "'abc' is not a number"),
    ("abc", "link.bandwidth.si", "'abc' is not a number"),
    ("2.5", "n_p", "2.5 is not a whole number"),
])
def test_a_result_cell_of_the_wrong_type_is_one_line(tmp_path, cell, column, message):
    cols = ["point", "link.bandwidth", "link.bandwidth.si", "status", "error", "lambda_max_rps", "n_p",
            "prfaas_vs_homogeneous"]
    vals = {"point": "0", "link.bandwidth": "10Gbps", "link.bandwidth.si": "1.25e9", "status": "ok", "error": "",
            "lambda_max_rps": "3.3", "n_p": "3", "prfaas_vs_homogeneous": "1.5", column: cell}
    path = tmp_path / "r.csv"
    path.write_text(",".join(cols) + "\n" + ",".join(vals[c] for c in cols) + "\n")
    res = runner.invoke(app, ["study-report", str(path)])
    assert res.exit_code == 2
    assert res.output.strip() == f"error: {path}: line 2, column {column}: not a study's results: {message}"
