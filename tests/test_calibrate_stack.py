"""`calibrate` into a serving-stack profile: benchmark outputs and the public set's CSV -> a stack
YAML that `--stack` then uses; the Lambda_max interval of `optimize`; which profile every output names."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.io.load import load_stack
from tests.conftest import FIXTURES

runner = CliRunner()
BENCH = FIXTURES / "bench"
SAMPLE = FIXTURES / "measurements" / "public_sample.csv"


def _run(*args: str):
    return runner.invoke(app, list(args))


def _json(*args: str) -> dict:
    res = _run(*args, "-f", "json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_a_profile_fitted_on_the_public_sample_reproduces_it(tmp_path):
    out = tmp_path / "cat" / "stacks" / "repro.yaml"
    out.parent.mkdir(parents=True)
    d = _json("calibrate", str(SAMPLE), "--name", "repro", "-o", str(out))
    assert d["name"] == "repro" and d["base"] == "open-engines"
    assert len(d["rows"]) == 9 and d["fitted"][0] == "prefill_overhead_s"
    # every row's residual is the fit's: predicted / measured - 1
    for row in d["rows"]:
        assert row["rel_error"] == pytest.approx(row["predicted_s"] / row["measured_s"] - 1)
    assert d["median_abs_rel_error"] < 0.10
    doc = yaml.safe_load(out.read_text())
    assert doc["name"] == "repro" and doc["points"] == 9 and doc["sources"] == 2
    assert "no source was held out" in doc["band_from"]  # two files' worth of sources: in-sample band
    # the written profile is a catalog stack: kv-rate uses it and names it
    k = _json("kv-rate", "Qwen2.5-72B", "--hardware", "H100", "--gpus", "8", "--lengths", "1K",
              "--catalog", str(tmp_path / "cat"), "--stack", "repro")
    assert k["stack"]["name"] == "repro"
    assert k["sources"][0]["detail"].startswith("H100 efficiency: stack repro: calibrated on public_sample.csv")
    measured = next(r for r in d["rows"] if r["model"] == "Qwen2.5-72B" and r["tokens"] == 1024)
    # a TTFT row is the engine's prefill (what kv-rate shows) plus a client's request overhead
    client = doc["parameters"]["request_overhead_ms"] / 1e3
    assert k["rows"][0]["prefill_s"] + client == pytest.approx(measured["predicted_s"], rel=1e-3)


@pytest.mark.parametrize("name", ["sglang_bench_one_batch.jsonl", "vllm_bench_serve.json", "sglang_bench_serving.jsonl",
                                  "genai_perf_profile_export_genai_perf.json", "aiperf_profile_export_aiperf.json",
                                  "prfaas_phase1_phi_kv.jsonl"])
def test_each_benchmark_format_fits_a_profile(name):
    d = _json("calibrate", str(BENCH / name), "--hardware", "H100", "--gpus", "8", "--model", "Llama-3.1-70B")
    assert d["rows"] and all(r["instance"] == "8xH100" and r["model"] == "Llama-3.1-70B" for r in d["rows"])
    assert yaml.safe_load(d["stack_yaml"])["parameters"]["source"].startswith(f"calibrated on {name}")


@pytest.mark.parametrize(("args", "needle"), [
    (["calibrate", str(BENCH / "vllm_bench_serve.json"), "--model", "Llama-3.1-70B"], "give --hardware and --gpus"),
    (["calibrate", str(BENCH / "vllm_bench_serve.json"), "--hardware", "H100", "--gpus", "8"],
     "give --model"),
    (["calibrate", str(BENCH / "vllm_bench_serve.json"), "--hardware", "H100", "--gpus", "8", "--model", "Nope"],
     "--model: unknown model 'Nope'"),
    (["calibrate", str(SAMPLE), "--hold", "compute=0.5"], "--hold"),
    (["calibrate", str(SAMPLE), "--stack", "nope"], "--stack: unknown stack 'nope'"),
    (["calibrate", "benchmarks/data/paper_table3_h200.csv", "--model", "Llama-3.1-70B"], "--model"),
])
def test_a_bad_calibration_is_one_line(args, needle):
    res = _run(*args)
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.stderr


def test_the_lambda_interval_brackets_the_plan_and_names_what_dominates():
    d = _json("optimize", "qwen35-b200-h200")
    iv, lam = d["lambda_interval"], d["best"]["lambda_max_rps"]
    assert iv["lambda_max_rps_p10"] < lam < iv["lambda_max_rps_p90"]
    assert iv["cost_per_million_requests_p10"] < d["cost_per_million_requests"] < iv["cost_per_million_requests_p90"] \
        if "cost_per_million_requests" in d else True
    st = load_stack("open-engines")
    assert iv["prefill_band"] == pytest.approx(list(st.prefill_band)) and iv["decode_band"] == pytest.approx(
        list(st.decode_band))
    assert iv["dominant"] in ("prefill time", "decode step")
    # the low end is the plan with every modelled time at its P90 factor: the same as a scenario whose
    # times are slower by that factor
    from dataclasses import replace

    from prfaas_plan.api.plan import plan
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.scenario import load_scenario

    sc = load_scenario("qwen35-b200-h200", Catalog.default())
    slow = plan(replace(sc, time_scale=(st.prefill_band[1], st.decode_band[1])),
                methods=("exact",)).result.head.best.lambda_max_rps
    assert iv["lambda_max_rps_p10"] == pytest.approx(slow, rel=1e-12)


def test_a_plan_on_measurements_alone_has_a_point_interval():
    d = _json("optimize")
    iv = d["lambda_interval"]
    assert iv["lambda_max_rps_p10"] == iv["lambda_max_rps_p90"] == d["best"]["lambda_max_rps"]
    assert iv["dominant"] == "none" and iv["prefill_band"] is None and iv["decode_band"] is None
    assert "Lambda_max P10-P90: a point" in _run("optimize").stdout
    assert d["sources"]["stack"] == "paper-table3"


def test_perf_names_its_stack_and_bands_its_times():
    d = _json("perf", "Llama-3.1-70B", "--hardware", "H100", "--lengths", "1K", "--batches", "1")
    assert d["stack"]["name"] == "open-engines"
    p, s = d["prefill"][0], d["decode"][0]
    st = load_stack("open-engines")
    assert p["prefill_s_p10"] == pytest.approx(p["prefill_s"] * st.prefill_band[0])
    assert s["step_s_p90"] == pytest.approx(s["step_s"] * st.decode_band[1])
