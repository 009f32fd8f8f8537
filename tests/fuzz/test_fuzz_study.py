"""Fuzzing `study` and `study-report` through the console script: mutated study files, junk results.

Each run must end 0, 1 (some points failed: their rows say why) or 2 (bad input, one line naming the
study file, an option or a field), never a traceback. A study that runs is at most a few points.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz import strategies as fz
from tests.fuzz.harness import check, run

CI = bool(os.environ.get("CI"))
SCALE = float(os.environ.get("PRFAAS_FUZZ_SCALE", "1"))
BASE = {"scenario": "paper-case-study", "command": "optimize",
        "axes": {"link.bandwidth": ["10Gbps", "100Gbps"], "clusters.prfaas.instances": [2, 4]},
        "zip": [{"clusters.prfaas.hardware": ["H200", "B200"], "clusters.local.hardware": ["H20", "H20"]}],
        "samples": 3, "seed": 1}


def fuzz(cases: int):
    return settings(max_examples=max(1, round(cases * SCALE)), deadline=None, derandomize=CI, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _folder() -> Path:
    return Path(tempfile.mkdtemp(prefix="prfaas-fuzz-study-"))


@st.composite
def study_file(draw) -> dict:
    study = draw(fz.mutated_json(BASE))
    if draw(st.booleans()):  # an axis of junk values, or a field the scenario does not have
        key = draw(st.sampled_from(["link.bandwidth", "link.usable_fraction", "clusters.local.instances",
                                    "slo.decode_tokens_per_s", "model", "link.bandwith", "workload.output_tokens"]))
        values = draw(st.lists(st.one_of(fz.quantity, st.integers(-3, 20), st.sampled_from(["H200", "", "nope"])),
                               min_size=0, max_size=3))
        axes = study.get("axes")
        study["axes"] = {**(axes if isinstance(axes, dict) else {}), key: values}
    return study


@fuzz(40)
@given(study_file())
def test_mutated_study_files(study):
    folder = _folder()
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump(study), encoding="utf-8")
    r = run(["study", str(path), "-o", str(folder / "r.parquet"), "--workers", "1"])
    check(r, names=(str(path), "study.yaml", "-o", "--scheduler"))


@fuzz(20)
@given(st.binary(max_size=400), st.sampled_from(["r.parquet", "r.csv"]))
def test_junk_results_for_study_report(data, name):
    path = _folder() / name
    path.write_bytes(data)
    check(run(["study-report", str(path)]), names=(str(path), name))


_CELL = st.one_of(st.sampled_from(["", "ok", "error", "1", "-1", "0.5", "abc", "1e400", "nan", "10Gbps"]),
                  st.floats(allow_nan=True, allow_infinity=True).map(str))


@fuzz(30)
@given(st.lists(st.lists(_CELL, min_size=8, max_size=8), min_size=0, max_size=6))
def test_study_report_on_results_with_junk_cells(cells):
    head = "point,model,link.bandwidth,link.bandwidth.si,status,error,lambda_max_rps,prfaas_vs_homogeneous"
    path = _folder() / "r.csv"
    path.write_text("\n".join([head, *(",".join(r) for r in cells)]) + "\n", encoding="utf-8")
    check(run(["study-report", str(path)]), names=(str(path), "r.csv"))
