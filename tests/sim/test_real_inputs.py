"""Real inputs through optimize / latency / simulate (issue 8): no crash, no wrong number, one clear line."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
T300 = FIXTURES / "mooncake_300.jsonl"  # the first 300 requests of the Mooncake synthetic trace
SMALL = FIXTURES / "mooncake_small.jsonl"

runner = CliRunner()


def _strict(text: str) -> dict:
    """JSON with no NaN / Infinity anywhere (json.loads accepts them unless told otherwise)."""

    def refuse(name: str):
        raise AssertionError(f"{name} in the JSON output")

    return json.loads(text, parse_constant=refuse)


def _run(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.stderr
    return _strict(res.stdout)


def _one_line_error(args: list[str], code: int = 2) -> str:
    res = runner.invoke(app, args)
    assert res.exit_code == code, res.stdout + res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in res.stderr and "Error:" not in lines[0].replace("error:", "")
    return lines[0]


def _rewrite(src: Path, dst: Path, **fields) -> Path:
    with dst.open("w") as f:
        for line in src.read_text().splitlines():
            f.write(json.dumps(json.loads(line) | fields) + "\n")
    return dst


# ---------------------------------------------------------------- naive heterogeneous on a trace


def test_300_line_trace_optimize_naive_heterogeneous_is_served():
    d = _run("optimize", "--trace", str(T300))
    for m in d["methods"].values():
        nv = m["baselines"]["naive_heterogeneous"]
        # all prefill on PrfaaS: p = 1 exactly, so PD-P (no instance, no traffic) does not bind
        assert nv["lambda_max_rps"] > 1.0 and nv["binding"] != "pd-prefill"
        assert m["ratios"]["naive_vs_homogeneous"] > 0.5


def test_300_line_trace_latency_and_simulate_run():
    d = _run("latency", "--trace", str(T300), "--rate", "1")
    naive = d["systems"]["naive_heterogeneous"]
    assert naive["p_offload"] == 1.0 and naive["stable"] and naive["capacity_rps"] > 1.0
    assert naive["load"] == pytest.approx(1.0 / naive["capacity_rps"], rel=1e-12)
    s = _run("simulate", "--trace", str(T300))
    for name, sys in s["systems"].items():
        assert sys["requests"] == 300 and sys["completed"] == 270, name
        assert sys["throughput_rps"] > 0


# ---------------------------------------------------------------- 0 output tokens


def test_zero_output_trace_counts_one_output_token(tmp_path):
    zero = _rewrite(SMALL, tmp_path / "zero.jsonl", output_length=0)
    d = _run("optimize", "--trace", str(zero))
    assert d["workload"]["output_tokens"] == 1.0
    # Eq. 5 with L_out = 1: BS_max / (T_decode x 1) = 20 / 0.025 per decode instance
    assert d["decode"]["rps_per_instance"] == pytest.approx(20 / 0.025)
    s = _run("simulate", "--trace", str(zero))
    for sys in s["systems"].values():
        assert sys["completed"] == 45 and sys["throughput_rps"] > 0


# ---------------------------------------------------------------- at capacity, infinite rates


def test_simulate_refuses_an_infinite_load_or_rate():
    assert "--load" in _one_line_error(["simulate", "--load", "inf"])
    assert "--rate" in _one_line_error(["simulate", "--rate", "inf"])


# ---------------------------------------------------------------- measured throughput


def test_two_requests_have_a_measured_throughput():
    d = _run("simulate", "--requests", "2")
    for name, s in d["systems"].items():
        # 2 admissions over [first arrival, last admission]: a positive span holding a TTFT
        assert s["completed"] == 2 and s["span_s"] > 0, name
        assert s["throughput_rps"] == pytest.approx(2 / s["span_s"], rel=1e-12)


def test_trace_at_a_huge_rate_measures_the_saturated_throughput():
    d = _run("simulate", "--trace", str(T300), "--rate", "1e9")
    for name, s in d["systems"].items():
        # every request arrives at once: what is measured is the rate the system drains them at
        assert 0.3 * s["capacity_rps"] < s["throughput_rps"] < 1.5 * s["capacity_rps"], name
        # over the same window the pools are busy draining them (it was 0.0% link busy over ~0 s)
        assert all(u > 0.8 for path, u in s["utilization"].items() if path != "decode"), name
    assert d["systems"]["prfaas"]["link_utilization"] > 0.05


# ---------------------------------------------------------------- prefix hit rate


def test_optimize_and_simulate_report_the_same_prefix_hit_rate():
    opt = _run("optimize", "--trace", str(T300))["workload"]["prefix_hit_rate"]
    sim = _run("simulate", "--trace", str(T300))
    assert 0 < opt < 1
    assert sim["prefix_hit_rate"] == opt  # the same replay: PD cluster's cache, every request
    for s in sim["systems"].values():
        assert s["prefix_hit_rate"] == opt
        assert 0 <= s["recompute_avoided_rate"] < 1
    res = runner.invoke(app, ["simulate", "--trace", str(T300)])
    assert "as optimize counts it" in res.stdout and "not prefilled" in res.stdout


# ---------------------------------------------------------------- --requests and --seed with a trace


def test_trace_requests_takes_the_first_n_and_refuses_more_than_it_holds():
    d = _run("simulate", "--trace", str(T300), "--requests", "40")
    assert all(s["requests"] == 40 and s["completed"] == 36 for s in d["systems"].values())
    assert "300" in _one_line_error(["simulate", "--trace", str(T300), "--requests", "301"])


def test_seed_is_refused_with_a_trace_and_matters_without():
    assert "--seed" in _one_line_error(["simulate", "--trace", str(T300), "--seed", "3"])
    assert _run("simulate", "--trace", str(T300))["sim"]["seed"] is None
    a = _run("simulate", "--requests", "300", "--seed", "1")
    b = _run("simulate", "--requests", "300", "--seed", "2")
    assert a["sim"]["seed"] == 1 and a["ttft_mean_s"] != b["ttft_mean_s"]


# ---------------------------------------------------------------- threshold range vs the workload


def test_trace_shorter_than_the_bundled_threshold_range_is_searched(tmp_path):
    short = tmp_path / "short.jsonl"
    short.write_text("".join(json.dumps({"timestamp": 500 * i, "input_length": 40 + i, "output_length": 10,
                                         "hash_ids": [1000 + i]}) + "\n" for i in range(40)))
    # the bundled scenario's 128..128K was written for its own workload; --trace replaced it
    d = _run("optimize", "--trace", str(short))
    assert 40 <= d["best"]["threshold_tokens"] < 79 and math.isfinite(d["best"]["lambda_max_rps"])
    # a range the user sets is used as given, and the error names the option
    line = _one_line_error(["optimize", "--trace", str(short), "--set", "search.threshold.min=128"])
    assert "--set search.threshold.min" in line and "40..79" in line


# ---------------------------------------------------------------- a trace with no time span


@pytest.mark.parametrize(("opts", "asked"), [
    (["--load", "0.6"], "at --load 0.6;"),
    (["--rate", "2"], "at --rate 2 req/s;"),
    ([], "at the default --load 0.8;"),
])
def test_simulate_a_trace_at_one_instant_is_refused_naming_the_file_and_the_option(tmp_path, opts, asked):
    """Every timestamp equal: no arrival rate to scale to, so simulate refuses (a burst would
    ignore the rate asked for), naming the file, the count, the option given and what to do."""
    flat = _rewrite(SMALL, tmp_path / "flat.jsonl", timestamp=5)
    n = len(SMALL.read_text().splitlines())
    line = _one_line_error(["simulate", "--trace", str(flat), *opts])
    assert line.startswith(f"error: {flat}: timestamp: all {n:,} requests arrive at 5 ms: no time span to replay ")
    assert asked in line and "--rate:" not in line
    assert "give the requests their arrival times" in line and "prfaas-plan latency" in line


def test_simulate_a_one_request_trace_is_refused(tmp_path):
    one = tmp_path / "one.jsonl"
    one.write_text(SMALL.read_text().splitlines()[0] + "\n")
    line = _one_line_error(["simulate", "--trace", str(one), "--rate", "1"])
    assert f"{one}: timestamp: one request (at " in line and "at --rate 1 req/s;" in line


def test_latency_and_optimize_do_not_need_the_time_span(tmp_path):
    """A trace at one instant has no arrival process to measure: the analytic commands take Poisson
    arrivals at the rate given. This trace's 50 arrivals measure no departure from Poisson (one rate
    throughout, its gaps' SCV 0.97 shrunk to 1 by its sampling noise: core.arrivals), so the two
    give the same numbers."""
    flat = _rewrite(SMALL, tmp_path / "flat.jsonl", timestamp=5)
    for cmd in (["latency", "--load", "0.6"], ["latency", "--rate", "1"], ["optimize"]):
        got, want = _run(*cmd, "--trace", str(flat)), _run(*cmd, "--trace", str(SMALL))
        for d in (got, want):
            d.pop("search", None)  # wall-clock search_s
            for m in d.get("methods", {}).values():
                m.pop("search_s")
            if "workload" in d:
                assert d["workload"]["distribution"].pop("file") in (str(flat), str(SMALL))
        if cmd[0] == "latency":  # the spread trace is also replayed in the simulator; the flat one cannot be
            assert "trace_check" not in got and want.pop("trace_check")["requests"] == 50
        assert got == want


def test_a_run_past_ten_million_requests_is_refused_naming_the_option():
    """`--duration 1e30` ran for ever; the bound is 10,000,000 requests per system."""
    from typer.testing import CliRunner

    from prfaas_plan.cli import app

    res = CliRunner().invoke(app, ["simulate", "--duration", "1e30", "--rate", "2"])
    assert res.exit_code == 2
    assert res.stderr.strip() == ("error: --duration: 1e+30 s at 2 req/s is about 2e+30 requests per system; a run "
                                  "takes at most 10,000,000 (--duration <= 5e+06 s here)")
    res = CliRunner().invoke(app, ["simulate", "--requests", "10000001"])
    assert res.exit_code == 2 and "at most 10,000,000 requests per system, got 10,000,001" in res.stderr
