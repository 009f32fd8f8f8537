"""`kv-rate`: docs/sources.md#table-5 and Eq. 2 through the CLI; bad input."""

import json

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app

runner = CliRunner()


def kv_rate(*args):
    res = runner.invoke(app, ["kv-rate", *args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.paper
def test_table5_internal_1t_on_8xh200():
    d = kv_rate("internal-1t", "--hardware", "H200", "--gpus", "8")
    rows = d["rows"]
    assert [r["length_tokens"] for r in rows] == [1024, 8192, 32768, 131072]
    # docs/sources.md#table-5, Phi_kv in Gbps, within 1%
    for row, gbps in zip(rows, (3.61, 3.59, 3.19, 2.62), strict=True):
        assert row["kv_gbps"] == pytest.approx(gbps, rel=0.01)
        assert row["source"] == "measured" and row["kv_source"] == "measured"
    assert rows[2]["kv_bytes"] == pytest.approx(701.3 * 2**20)
    assert rows[2]["prefill_s"] == pytest.approx(1.84)
    assert "interpol" in d["sources"][0]["detail"] or "fit" in d["sources"][0]["detail"]


def test_eq2_egress_of_64_instances():
    d = kv_rate("internal-1t", "--instances", "64", "--lengths", "32K")
    (row,) = d["rows"]
    assert row["egress_gbps"] == pytest.approx(64 * row["kv_gbps"], rel=1e-12)
    assert row["egress_gbps"] == pytest.approx(64 * 701.3 * 2**20 * 8 / 1.84 / 1e9, rel=1e-9)


def test_between_profile_points_is_interpolated_and_monotone():
    d = kv_rate("internal-1t", "--lengths", "8K,16K,24K,32K")
    t = [r["prefill_s"] for r in d["rows"]]
    assert t == sorted(t) and 0.72 < t[1] < t[2] < 1.84


def test_source_column_says_where_each_time_comes_from():
    rows = kv_rate("internal-1t", "--lengths", "512,1K,4K,128K,200K")["rows"]
    assert [r["basis"] for r in rows] == ["extrapolated", "measured", "interpolated", "measured", "extrapolated"]
    assert [r["source"] for r in rows] == ["extrapolated (below the measured 1K)", "measured", "interpolated",
                                           "measured", "extrapolated (beyond the measured 128K)"]
    assert [r["kv_source"] for r in rows] == [r["basis"] for r in rows]  # KV from the same profile
    assert not any(r["beyond_context"] for r in rows)  # internal-1t: 262,144 tokens


def test_table_labels_extrapolation():
    res = runner.invoke(app, ["kv-rate", "internal-1t", "--lengths", "4K,200K"])
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert next(line for line in lines if line.strip().startswith("4K")).endswith("interpolated")
    assert next(line for line in lines if line.strip().startswith("200K")).endswith(
        "extrapolated (beyond the measured 128K)")
    assert "outside the measured 1K..128K" in res.stdout


@pytest.mark.parametrize(("model", "lengths", "shown", "limit"), [
    ("internal-1t", "1K,10M", "10240K (10,485,760 tokens)", "262,144"),
    ("Llama-3.1-8B", "8K,129K", "129K (132,096 tokens)", "131,072"),
    ("Qwen3-235B-A22B", "1K,8K,32K,128K", "128K (131,072 tokens)", "40,960"),
])
def test_lengths_past_the_context_are_refused(model, lengths, shown, limit):
    res = runner.invoke(app, ["kv-rate", model, "--lengths", lengths])
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("error: --lengths: ") and shown in line and f"context of {limit} tokens" in line
    assert "--allow-beyond-context" in line


def test_allow_beyond_context_labels_measured_and_analytic_rows():
    d = kv_rate("internal-1t", "--lengths", "128K,300K", "--source", "both", "--allow-beyond-context")
    measured, analytic = d["rows"][:2], d["rows"][2:]
    assert [r["basis"] for r in measured] == ["measured", "extrapolated"]
    assert measured[1]["source"] == "extrapolated (beyond the measured 128K, beyond the 256K context)"
    assert [r["source"] for r in analytic] == ["analytic", "extrapolated (analytic, beyond the 256K context)"]
    assert [r["beyond_context"] for r in d["rows"]] == [False, True, False, True]
    # the 10M case of the issue: now allowed, and named as such
    (row,) = kv_rate("internal-1t", "--lengths", "10M", "--allow-beyond-context")["rows"]
    assert row["basis"] == "extrapolated" and row["prefill_s"] > 7.40


def test_fp8_kv_uses_the_kv_engine():
    d = kv_rate("internal-1t", "--kv-dtype", "fp8", "--lengths", "32K")
    (row,) = d["rows"]
    assert row["kv_source"] == "kv engine"
    assert row["kv_bytes"] == pytest.approx(182_353_920 + 8640 * 32768)  # MLA at 1 B per element


@pytest.mark.parametrize(("args", "needle"), [
    (["internal-1t", "--lengths", "abc"], "--lengths"),
    (["internal-1t", "--lengths", "-5"], "--lengths"),
    (["internal-1t", "--lengths", "0"], "--lengths"),
    (["internal-1x"], "did you mean 'internal-1t'"),
    (["internal-1t", "--hardware", "H2000"], "unknown hardware"),
    (["internal-1t", "--gpus", "0"], "--gpus"),
    (["internal-1t", "--instances", "0"], "--instances"),
    (["internal-1t", "--kv-dtype", "int3"], "--kv-dtype"),
    (["internal-1t", "--source", "guess"], "--source"),
    (["internal-1t", "--gpus", "4", "--source", "measured"], "no measured profile"),
    (["no/such/model.yaml"], "file not found"),
])
def test_bad_input_exit_2_one_line(args, needle):
    res = runner.invoke(app, ["kv-rate", *args])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0]


def test_config_json_that_is_not_json(tmp_path):
    f = tmp_path / "config.json"
    f.write_text("{not json")
    res = runner.invoke(app, ["kv-rate", str(f)])
    assert res.exit_code == 2 and "not JSON" in res.stderr


def test_help_lists_every_command():
    res = runner.invoke(app, ["--help"])
    for cmd in ("models", "hardware", "model", "kv-rate", "optimize", "sweep", "latency"):
        assert cmd in res.stdout


@pytest.mark.parametrize(("args", "shown"), [
    (["--set", "workload.input.max=300K"], "--set workload.input.max: the longest input, 307,200 tokens, is beyond "
                                           "internal-1t's context of 262,144 tokens"),
    (["--set", "model=Qwen3-32B"], "workload.input.max: the longest input, 131,072 tokens, is beyond Qwen3-32B's "
                                   "context of 40,960 tokens"),
])
def test_scenario_workload_past_the_context_is_refused(args, shown):
    res = runner.invoke(app, ["optimize", *args])
    assert res.exit_code == 2, res.output
    (line,) = res.stderr.strip().splitlines()
    assert shown in line and "(max_position_embeddings)" in line


@pytest.mark.parametrize("command", [["kv-rate"], ["perf", "--hardware", "H200", "--gpus", "8"]])
def test_default_lengths_stop_at_the_models_context(command):
    """Qwen3-32B's context is 40,960 tokens: without --lengths the rows are 1K, 8K, 32K and the
    context itself, not a refusal of a 128K nobody asked for; asking for 128K is still refused."""
    res = runner.invoke(app, [command[0], "Qwen3-32B", *command[1:], "--format", "json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rows" if command[0] == "kv-rate" else "prefill"]
    assert [r["length_tokens"] for r in rows] == [1024, 8192, 32768, 40960]
    res = runner.invoke(app, [command[0], "Qwen3-32B", *command[1:], "--lengths", "128K"])
    assert res.exit_code == 2 and "beyond Qwen3-32B's context of 40,960 tokens" in res.stderr
    res = runner.invoke(app, [command[0], "internal-1t", *command[1:], "--format", "json"])
    rows = json.loads(res.stdout)["rows" if command[0] == "kv-rate" else "prefill"]
    assert [r["length_tokens"] for r in rows] == [1024, 8192, 32768, 131072]
