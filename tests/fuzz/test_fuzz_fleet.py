"""Scenarios of several models (``models:``), mutated, through `optimize`, `simulate`, `size` and `latency` (the
properties of ``tests/fuzz/test_fuzz_cli.py``: exit code in {0, 1, 2}, one named line on error,
no NaN, inf or traceback)."""

from __future__ import annotations

import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import FIXTURES, ROOT
from tests.fuzz import strategies as fz
from tests.fuzz.harness import check, run
from tests.fuzz.test_fuzz_cli import FORMATS, _tmp, fuzz

FLEETS = [ROOT / "scenarios" / "three-models.yaml", FIXTURES / "fleet-two-regions.yaml"]


def _echoed(scenario: dict) -> tuple[str, ...]:
    """Names the output repeats as given: the scenario's, its sites', its models' labels."""
    sites = scenario.get("sites") if isinstance(scenario.get("sites"), dict) else {}
    models = scenario.get("models") if isinstance(scenario.get("models"), list) else []
    out = [scenario.get("name"), *sites,
           *(m.get(k) for m in models if isinstance(m, dict) for k in ("name", "model"))]
    return tuple(x for x in out if isinstance(x, str))


@fuzz(60)
@given(st.data(), st.sampled_from(["optimize", "simulate", "size", "degrade", "latency"]), FORMATS)
def test_mutated_fleets(data, command, fmt):
    base = data.draw(st.sampled_from(FLEETS))
    scenario = data.draw(fz.mutated_json(yaml.safe_load(base.read_text())))
    path = _tmp(base.name, yaml.safe_dump(scenario))
    extra = {"simulate": ["--requests", "300"], "degrade": ["--levels", "50%,0"],
             "latency": ["--load", "0.6"]}.get(command, [])
    check(run([command, str(path), *extra, "--format", fmt]), names=(path.name,), echoed=_echoed(scenario))
