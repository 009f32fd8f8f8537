"""`kv-rate`: PAPER.md Table 5 and Eq. 2 through the CLI; bad input."""

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
    # PAPER.md Table 5, Phi_kv in Gbps, within 1%
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
