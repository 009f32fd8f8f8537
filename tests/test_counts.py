"""Instance counts are whole numbers in every output: a count key of any JSON a command writes
holds an int (or null), never 8.0 (issue 26: `"n_prfaas": 8.0` in optimize on two sites)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.conftest import FIXTURES
from tests.fuzz.harness import counts

runner = CliRunner()
QUANTILE = "link.bandwidth={kind: quantiles, p50: 100Gbps, p10: 20Gbps}"


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["optimize"], ["optimize", "two-regions"], ["optimize", "--set", QUANTILE],
    ["size"], ["size", "two-regions"], ["latency", "two-regions", "--rate", "1"],
    ["degrade", "two-regions"], ["thresholds", "two-regions", "--loads", "1"],
    ["latency", "three-models", "--rate", "1"], ["latency", str(FIXTURES / "fleet-two-regions.yaml"), "--rate", "1"],
])
def test_every_count_is_an_int(args):
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    found = counts(json.loads(res.stdout))
    assert found  # the walk saw counts: it can fail
    bad = [(p, v) for p, v in found if not (v is None or type(v) is int)]
    assert not bad, bad[:5]


def test_two_regions_prefill_site_is_8_instances():
    d = json.loads(runner.invoke(app, ["optimize", "two-regions", "--format", "json"]).stdout)
    assert d["best"]["n_prfaas"] == 8 and type(d["best"]["n_prfaas"]) is int
    assert '"n_prfaas": 8.0' not in runner.invoke(app, ["optimize", "two-regions", "--format", "json"]).stdout
