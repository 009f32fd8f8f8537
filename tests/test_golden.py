"""The bundled scenarios' `optimize --format json` stays what it was before the topology
redesign (tests/fixtures/golden, written by the two-cluster planner at 297b263; two-regions by
the first topology planner): every number within 1e-9 relative, every other value equal; only
timings may differ, and keys may be added."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.conftest import FIXTURES

RTOL = 1e-9


def _leaves(d, path=""):
    if isinstance(d, dict):
        for k, v in d.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(d, list):
        for i, v in enumerate(d):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, d


def _timing(key: str) -> bool:
    return any(part.startswith("search_s") or part.endswith("seconds") for part in key.split("."))


@pytest.mark.parametrize("scenario", ["paper-case-study", "qwen35-b200-h200", "two-regions"])
def test_optimize_json_equals_the_two_cluster_planner(scenario: str) -> None:
    res = CliRunner().invoke(app, ["optimize", scenario, "--format", "json"])
    assert res.exit_code == 0, res.output
    now = dict(_leaves(json.loads(res.stdout)))
    gold = dict(_leaves(json.loads((FIXTURES / "golden" / f"optimize-{scenario}.json").read_text())))
    missing = sorted(k for k in gold if k not in now)
    assert not missing, missing
    for key, want in gold.items():
        if _timing(key):
            continue
        got = now[key]
        if isinstance(want, float) and isinstance(got, int | float) and not isinstance(got, bool):
            assert math.isclose(got, want, rel_tol=RTOL, abs_tol=1e-300), (key, got, want)
        else:
            assert got == want, (key, got, want)
