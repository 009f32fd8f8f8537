"""`study`: points, patches against full loads, engines that agree, resume after a kill, bad input."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from prfaas_plan.api import study as api_study
from prfaas_plan.api.plan import plan
from prfaas_plan.cli import app
from prfaas_plan.io.load import Catalog
from prfaas_plan.io.scenario import load_scenario
from prfaas_plan.io.study import load_study
from prfaas_plan.report.plan_json import plan_json
from prfaas_plan.specs.study import sample_cells

runner = CliRunner()
BIN = Path(sys.executable).parent / "prfaas-plan"

SMALL = """scenario: paper-case-study
command: optimize
axes:
  link.bandwidth: [10Gbps, 40Gbps, 100Gbps]
  clusters.prfaas.instances: [2, 4]
"""


def _write(tmp_path: Path, text: str, name: str = "study.yaml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


@pytest.mark.slow
def test_the_issue_example_runs_and_each_row_is_optimize_at_that_point(tmp_path):
    study = _write(tmp_path, SMALL)
    out = tmp_path / "r.parquet"
    res = runner.invoke(app, ["study", str(study), "-o", str(out), "--workers", "1"])
    assert res.exit_code == 0, res.output
    assert "6 points of optimize" in res.output and "0 failed" in res.output
    rows = _rows(out)
    assert [r["point"] for r in rows] == list(range(6))
    cat = Catalog.default()
    for r, (bw, n) in zip(rows, itertools.product(["10Gbps", "40Gbps", "100Gbps"], [2, 4]), strict=True):
        assert (r["link.bandwidth"], r["clusters.prfaas.instances"]) == (bw, str(n))
        assert r["link.bandwidth.si"] == pytest.approx(float(bw[:-4]) * 1e9 / 8)
        sc = load_scenario(None, cat, overrides=[f"link.bandwidth={bw}", f"clusters.prfaas.instances={n}"])
        p = plan_json(plan(sc, methods=(sc.search.method,)).result)
        b = p["best"]
        assert r["status"] == "ok" and r["error"] is None
        for k in ("lambda_max_rps", "threshold_tokens", "n_prfaas", "n_p", "n_d", "binding", "p_offload"):
            assert r[k] == b[k], k
        assert r["prfaas_vs_homogeneous"] == p["ratios"]["prfaas_vs_homogeneous"]
    # the case study itself (100 Gbps, 4 PrfaaS instances) is the paper's 3.30 req/s
    assert rows[5]["lambda_max_rps"] == pytest.approx(3.30, abs=0.01)


@pytest.mark.slow
def test_patched_points_equal_full_loads_across_catalog_and_zipped_axes(tmp_path):
    """Model and hardware axes reload; bandwidth and instances patch: every row equals a full load."""
    study = _write(tmp_path, """scenario: paper-case-study
axes:
  model: [internal-1t, MiniMax-M2.5]
  link.bandwidth: 5Gbps..200Gbps:3:log
zip:
  - {clusters.prfaas.hardware: [H200, B200], clusters.prfaas.instances: [4, 2]}
""")
    st_, _ = load_study(study)
    assert st_.size == 12
    w = api_study.Worker(st_)
    cat = Catalog.default()
    for pt in st_.points():
        got = w.row(pt)
        sets = [f"{k}={v}" for k, v in pt.values]
        sc = load_scenario(None, cat, overrides=sets)
        b = plan_json(plan(sc, methods=(sc.search.method,)).result)["best"]
        assert got["status"] == "ok", got
        assert (got["lambda_max_rps"], got["threshold_tokens"], got["n_p"]) == \
            (b["lambda_max_rps"], b["threshold_tokens"], b["n_p"]), sets


@pytest.mark.slow
def test_the_process_pool_and_a_dask_local_cluster_equal_the_serial_run(tmp_path):
    study = _write(tmp_path, """scenario: paper-case-study
axes:
  link.bandwidth: 1Gbps..400Gbps:12:log
  clusters.prfaas.instances: 1..6:6
""")
    outs = {}
    for name, extra in (("serial", ["--workers", "1"]), ("pool", ["--workers", "2"]),
                        ("dask", ["--workers", "2", "--scheduler", "local"])):
        outs[name] = tmp_path / f"{name}.parquet"
        res = runner.invoke(app, ["study", str(study), "-o", str(outs[name]), *extra])
        assert res.exit_code == 0, res.output
    assert "process pool, 2 workers" in runner.invoke(
        app, ["study", str(study), "-o", str(tmp_path / "again.parquet"), "--workers", "2"]).output
    serial = pq.read_table(outs["serial"])
    assert serial.num_rows == 72
    assert pq.read_table(outs["pool"]).equals(serial)
    assert pq.read_table(outs["dask"]).equals(serial)


@pytest.mark.slow
def test_resume_after_a_kill_runs_only_the_missing_points(tmp_path):
    study = _write(tmp_path, """scenario: paper-case-study
axes:
  link.bandwidth: 1Gbps..400Gbps:40:log
  clusters.prfaas.instances: 1..4:4
""")
    out = tmp_path / "r.parquet"
    parts = tmp_path / "r.parquet.parts"
    proc = subprocess.Popen([str(BIN), "study", str(study), "-o", str(out), "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(parts.glob("part-*.parquet"))) < 2:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    written = sum(pq.read_table(p).num_rows for p in parts.glob("part-*.parquet"))
    assert 0 < written < 160 and not out.exists()
    res = subprocess.run([str(BIN), "study", str(study), "-o", str(out), "--workers", "1", "--resume"],
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert f"{160 - written:,} run in" in res.stdout and f"{written:,} finished before" in res.stdout
    assert not parts.exists()
    full = tmp_path / "full.parquet"
    assert runner.invoke(app, ["study", str(study), "-o", str(full), "--workers", "1"]).exit_code == 0
    assert pq.read_table(out).equals(pq.read_table(full))


def test_resume_refuses_parts_of_another_study(tmp_path):
    out = tmp_path / "r.parquet"
    st_, _ = load_study(_write(tmp_path, SMALL))
    from prfaas_plan.io import study_results

    study_results.write_part(out, 1, [], api_study.columns(st_), "another-study")
    res = runner.invoke(app, ["study", str(tmp_path / "study.yaml"), "-o", str(out), "--resume"])
    assert res.exit_code == 2
    assert "comes from another study" in res.output


def test_a_failing_point_is_recorded_and_the_study_exits_1(tmp_path):
    study = _write(tmp_path, """scenario: paper-case-study
axes:
  clusters.local.instances: [1, 8]
""")
    out = tmp_path / "r.csv"
    res = runner.invoke(app, ["study", str(study), "-o", str(out)])
    assert res.exit_code == 1
    assert "1 of 2 points failed" in res.output
    text = out.read_text().splitlines()
    assert text[0].startswith('"point","clusters.local.instances"')
    assert '"error"' in text[1] and ',"ok",' in text[2]


def test_samples_are_seeded_distinct_and_from_the_cross_product(tmp_path):
    study = _write(tmp_path, """scenario: paper-case-study
samples: 7
seed: 3
axes:
  link.bandwidth: 1Gbps..400Gbps:20:log
  clusters.prfaas.instances: 1..8:8
""")
    a, _ = load_study(study)
    b, _ = load_study(study)
    assert a.cells() == b.cells() and len(set(a.cells())) == 7
    full = {p.values for p in replace(a, samples=None).points()}
    assert all(p.values in full for p in a.points())
    assert [p.index for p in a.points()] == list(range(7))


@settings(max_examples=60, deadline=None)
@given(space=st.integers(1, 500), data=st.data())
def test_sample_cells_are_n_distinct_cells_in_range(space, data):
    n = data.draw(st.integers(1, space))
    seed = data.draw(st.integers(0, 2**32))
    cells = sample_cells(space, n, seed)
    assert len(cells) == n == len(set(cells)) and cells == sorted(cells)
    assert all(0 <= c < space for c in cells)
    assert cells == sample_cells(space, n, seed)


@pytest.mark.slow
@pytest.mark.parametrize(("text", "field"), [
    ("axes: {link.bandwdth: [1Gbps]}", "axes.link.bandwdth: unknown key 'bandwdth'"),
    ("axes: {link.bandwidth: []}", "axes.link.bandwidth: an axis needs at least one value"),
    ("samples: 0\naxes: {link.bandwidth: [1Gbps]}", "samples: must be >= 1, got 0"),
    ("samples: -3\naxes: {link.bandwidth: [1Gbps]}", "samples: must be >= 1, got -3"),
    ("samples: 5\naxes: {link.bandwidth: [1Gbps, 2Gbps]}", "samples: asks for 5 distinct points of a study of 2"),
    ("axes: {}", "axes: a study needs at least one axis"),
    ("command: plan\naxes: {link.bandwidth: [1Gbps]}", "command: must be one of"),
    ("scenario: nope\naxes: {link.bandwidth: [1Gbps]}", "scenario: unknown scenario 'nope'"),
    ("set: {link.bandwidth: -1}\naxes: {clusters.prfaas.instances: [2]}", "set.link.bandwidth:"),
    ("zip: [{link.bandwidth: [1Gbps, 2Gbps], clusters.prfaas.instances: [1]}]", "zip[0]: zipped axes advance"),
    ("axes: {link.bandwidth: 1Gbps..2Gbps:1}", "axes.link.bandwidth: '1Gbps..2Gbps:1': a range takes 2"),
    ("axes: {link.bandwidth: [1Gbps, 1Gbps]}", "the same value twice"),
    ("axes: {link.bandwidth: [1Gbps]}\nbogus: 1", "bogus: unknown key"),
    ("options: {load: 0.5}\naxes: {link.bandwidth: [1Gbps]}", "options.load: not an option of optimize"),
    # a value no other axis can mend: refused before any point runs
    ("axes: {link.bandwidth: [10Gbps, 1Gbits]}",
     "axes.link.bandwidth: value 2, '1Gbits': unknown bandwidth unit 'Gbits'"),
    ("axes: {link.bandwidth: 1K..128K:4}", "axes.link.bandwidth: value 1, '1K': unknown bandwidth unit 'K'"),
    ("axes: {link.bandwidth: [.nan]}", "axes.link.bandwidth: value 1, nan is not a finite number"),
    ("axes: {clusters.prfaas.instances: [2, 1.5]}", "axes.clusters.prfaas.instances: value 2, 1.5: Input should be a "
                                                    "valid integer"),
    ("axes: {model: [internal-1t, nosuch-model]}", "axes.model: value 2, unknown model 'nosuch-model'"),
    ("axes: {clusters.prfaas.hardware: [H200, H9000]}", "axes.clusters.prfaas.hardware: value 2, unknown hardware "
                                                        "'H9000'"),
    ("axes: {search.method: [paper, exakt]}", "axes.search.method: value 2, Input should be 'paper' or 'exact'"),
    ("axes:\n  workload.input:\n    a: {kind: lognormal, mu: 9, sigma: 1, min: 128, max: 1K}\n"
     "    b: {kind: gamma, shape: 0, scale: 1, min: 1, max: 1K}",
     "axes.workload.input.shape: value 2, b: shape must be > 0"),
    ("axes: {workload.input.sigma: [1, -1]}", "axes.workload.input.sigma: value 2, sigma must be > 0, got -1.0"),
    ("axes: {workload.input.min: [1K, 200K]}", "axes.workload.input.min: value 2, '200K': min must be < max"),
    ("command: simulate\noptions: {load: -1}\naxes: {link.bandwidth: [1Gbps]}",
     "options.load: must be a finite, positive fraction of capacity, got -1"),
    ("command: simulate\noptions: {load: 0.5, rate: 1}\naxes: {link.bandwidth: [1Gbps]}",
     "options.rate: give rate or load, not both"),
    ("command: latency\noptions: {load: abc}\naxes: {link.bandwidth: [1Gbps]}", "options.load: expected a number"),
])
def test_bad_study_files_exit_2_with_one_line(tmp_path, text, field):
    study = _write(tmp_path, text)
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.parquet")])
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {study}: ") and field in lines[0], lines


@pytest.mark.parametrize(("args", "message"), [
    (["--workers", "0"], "--workers: must be >= 1, got 0"),
    (["--workers", "two"], "--workers: expected a whole number"),
    (["-o", "r.txt"], "writes .parquet or .csv"),
    (["--scheduler", "nowhere"], "--scheduler: a scheduler address is local or a URL"),
])
def test_bad_options_exit_2(tmp_path, args, message):
    study = _write(tmp_path, SMALL)
    res = runner.invoke(app, ["study", str(study), *args])
    assert res.exit_code == 2 and message in res.output, res.output


@pytest.mark.parametrize(("address", "message"), [
    ("tcp://127.0.0.1:9", "cannot reach the Dask scheduler"),
    ("foo://x", "not a Dask scheduler address: unknown address scheme 'foo'"),
    ("tcp://", "not a Dask scheduler address: missing port number"),
])
@pytest.mark.slow
def test_an_unreachable_scheduler_exits_2(tmp_path, address, message):
    study = _write(tmp_path, SMALL)
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.parquet"), "--scheduler", address])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --scheduler {address}: {message}"), lines


def test_values_are_checked_before_a_point_runs_a_range_by_its_ends(tmp_path, monkeypatch):
    """Every value of a list axis, a range's two ends (its values are made alike from them), each
    once; a value refused only for the scenario it makes is left to its point's row."""
    from prfaas_plan.api import study as api_study
    from prfaas_plan.api import study_check

    checked = []
    real = study_check.check_value
    monkeypatch.setattr(study_check, "check_value", lambda ref, cat, fixed, key, v, **kw: checked.append((key, v))
                        or real(ref, cat, fixed, key, v, **kw))
    study = _write(tmp_path, """scenario: paper-case-study
axes:
  link.bandwidth: 1Gbps..400Gbps:500:log
  clusters.local.instances: [1, 8, 12]
""")
    s, _ = load_study(study)
    api_study.check(s)
    assert checked == [("link.bandwidth", "1Gbps"), ("link.bandwidth", "400Gbps"),
                       ("clusters.local.instances", 1), ("clusters.local.instances", 8),
                       ("clusters.local.instances", 12)]


def test_a_zipped_group_may_repeat_a_value_but_not_a_combination(tmp_path):
    ok = _write(tmp_path, "zip: [{clusters.prfaas.hardware: [H200, B200, B200], "
                          "clusters.local.hardware: [H20, H20, H200]}]\n")
    st_, _ = load_study(ok)
    assert st_.size == 3
    assert [dict(p.values)["clusters.local.hardware"] for p in st_.points()] == ["H20", "H20", "H200"]
    bad = _write(tmp_path, "zip: [{clusters.prfaas.hardware: [H200, H200], clusters.local.hardware: [H20, H20]}]\n",
                 "bad.yaml")
    res = runner.invoke(app, ["study", str(bad), "-o", str(tmp_path / "r.parquet")])
    assert res.exit_code == 2 and "zip[0]: lists the same combination of values twice" in res.output


@pytest.mark.slow
def test_the_bundled_fleet_study_is_216_points_that_all_plan(tmp_path):
    from tests.conftest import ROOT

    st_, _ = load_study(ROOT / "scenarios" / "studies" / "fleet.yaml")
    assert st_.size == 216 == 3 * 4 * 6 * 3
    assert [len(g[0].values) for g in st_.groups] == [3, 6, 3, 4]
    assert st_.groups[2][0].labels == ("chat", "paper", "long-context")
    w = api_study.Worker(st_)
    for p in st_.points()[::18]:  # one point of each (model, tier) pair, every GPU pair and workload among them
        r = w.row(p)
        assert r["status"] == "ok", r
        assert r["lambda_max_rps"] > 0 and r["homogeneous_lambda_max_rps"] > 0


def test_the_fleet_studys_readme_frontier_holds_where_it_crosses():
    """README: with B200 in front of H200, internal-1t pays from 25 Gbps, Qwen3.5-397B from 100 Gbps,
    MiniMax-M2.5 only at 400 Gbps; the tier below each does not pay."""
    from tests.conftest import ROOT

    st_, _ = load_study(ROOT / "scenarios" / "studies" / "fleet.yaml")
    w = api_study.Worker(st_)
    want = {("internal-1t", "10Gbps"): False, ("internal-1t", "25Gbps"): True,
            ("Qwen3.5-397B-A17B", "25Gbps"): False, ("Qwen3.5-397B-A17B", "100Gbps"): True,
            ("MiniMax-M2.5", "100Gbps"): False, ("MiniMax-M2.5", "400Gbps"): True}
    seen = {}
    for p in st_.points():
        v = dict(p.values)
        key = (v["model"], v["link.bandwidth"])
        if key in want and v["clusters.prfaas.hardware"] == "B200" and v["clusters.local.hardware"] == "H200" \
                and p.labels[2] == "paper":
            seen[key] = w.row(p)["prfaas_vs_homogeneous"] > 1.001
    assert seen == want


@pytest.mark.slow
@pytest.mark.parametrize(("command", "options", "column"), [
    ("size", "options: {demand: 3rps}", "cost_per_hour"),
    ("latency", "options: {load: 0.7}", "ttft_p90_s"),
    ("simulate", "options: {load: 0.7, requests: 2000}", "ttft_p90_s"),
])
def test_each_command_fills_its_columns_as_the_command_prints_them(tmp_path, command, options, column):
    import json

    study = _write(tmp_path, f"scenario: paper-case-study\ncommand: {command}\n{options}\n"
                             "axes:\n  link.bandwidth: [10Gbps, 100Gbps]\n")
    out = tmp_path / "r.parquet"
    assert runner.invoke(app, ["study", str(study), "-o", str(out)]).exit_code == 0
    rows = _rows(out)
    extra = {"size": ["--demand", "3rps"], "latency": ["--load", "0.7"],
             "simulate": ["--load", "0.7", "--requests", "2000"]}[command]
    for r in rows:
        assert r["status"] == "ok", r
        res = runner.invoke(app, [command, "--set", f"link.bandwidth={r['link.bandwidth']}", *extra, "--format",
                                  "json"])
        d = json.loads(res.stdout)
        want = d["best"]["cost"]["per_hour"] if command == "size" else d["systems"]["prfaas"][column]
        assert r[column] == want


def test_a_topology_row_names_its_busiest_link_and_each_site(tmp_path):
    study = _write(tmp_path, "scenario: two-regions\naxes:\n  links[0].bandwidth: [10Gbps, 100Gbps]\n")
    out = tmp_path / "r.parquet"
    assert runner.invoke(app, ["study", str(study), "-o", str(out)]).exit_code == 0
    for r in _rows(out):
        bw = r["links[0].bandwidth"]
        sc = load_scenario("two-regions", Catalog.default(), overrides=[f"links[0].bandwidth={bw}"])
        b = plan_json(plan(sc, methods=(sc.search.method,)).result)["best"]
        assert r["lambda_max_rps"] == b["lambda_max_rps"]
        assert r["link_utilization"] == max(lk["utilization"] for lk in b["links"].values())
        assert r["splits"].startswith("region-a t=") and "; region-b t=" in r["splits"]


def test_axes_that_combine_are_left_to_their_points(tmp_path):
    """200K is refused as a min alone (the scenario's max is 128K) but not beside a max axis that
    could mend it: the points run, and the one the scenario refuses says why in its row."""
    study = _write(tmp_path, "axes:\n  workload.input.min: [1K, 200K]\n  workload.input.max: [256K]\n")
    out = tmp_path / "r.csv"
    res = runner.invoke(app, ["study", str(study), "-o", str(out)])
    assert res.exit_code == 1 and "1 of 2 points failed" in res.output
    rows = out.read_text().splitlines()
    assert ',"ok",' in rows[1] and "threshold range 128..131072 lies outside the workload's lengths" in rows[2]


@pytest.mark.parametrize("ref", ["paper-case-study", "two-regions"])
def test_a_size_row_is_what_size_prints(ref):
    """A study's size row (read from the typed result) against `size --format json` read by key."""
    import json

    from typer.testing import CliRunner

    from prfaas_plan.api.study_rows import size_row
    from prfaas_plan.cli import app

    d = json.loads(CliRunner().invoke(app, ["size", ref, "--format", "json"]).stdout)
    row = size_row(load_scenario(ref, Catalog.default()))
    b = d["best"]
    homs = {k: v for k, v in d["homogeneous"].items() if "cost" in v}
    hk = min(homs, key=lambda k: homs[k]["cost"]["per_hour"])
    assert row["cost_per_hour"] == b["cost"]["per_hour"] and row["gpus"] == b["gpus"] and row["kind"] == b["kind"]
    assert row["prefill_instances"] == b["prefill_service"]["instances"]
    assert (row["homogeneous_hardware"], row["homogeneous_cost_per_hour"]) == (hk, homs[hk]["cost"]["per_hour"])
    assert row["saving_vs_homogeneous"] == d["savings"]["vs_best_homogeneous"]["fraction"]
    assert row["splits"].count("N_p/N_d=") == len(b["sites"])
