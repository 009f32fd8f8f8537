"""Instance counts are whole numbers in every output: a count key of any JSON a command writes
holds an int (or null), never 8.0 (issue 26: `"n_prfaas": 8.0` in optimize on two sites)."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app

runner = CliRunner()
# n_prfaas, n_p, n_d, instances, extra_instances, max_prfaas_instances, ...; not *_busy (a mean of busy instances)
COUNT = re.compile(r"^(n_[a-z_]*|([a-z_]*_)?instances)$")
QUANTILE = "link.bandwidth={kind: quantiles, p50: 100Gbps, p10: 20Gbps}"


def counts(obj: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every (path, value) under a count key."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str) and COUNT.match(k) and not isinstance(v, dict | list):
                out.append((f"{path}.{k}", v))
            out += counts(v, f"{path}.{k}")
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += counts(v, f"{path}[{i}]")
    return out


@pytest.mark.parametrize("args", [
    ["optimize"], ["optimize", "two-regions"], ["optimize", "--set", QUANTILE],
    ["size"], ["size", "two-regions"], ["latency", "two-regions", "--rate", "1"],
    ["degrade", "two-regions"], ["thresholds", "two-regions", "--loads", "1"],
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
