"""Fuzzing `study` and `study-report` through the console script: mutated study files, junk results.

Each run must end 0, 1 (some points failed: their rows say why) or 2 (bad input, one line naming the
study file, an option or a field), never a traceback. A study that runs is at most a few points.
"""

from __future__ import annotations

import os
import re
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


# --- issue 26's classes ---------------------------------------------------------------------------
# each a property over drawn inputs: a value's number is its field's reader's; every column of a
# row is filled for every topology; t is shown as optimize shows it; a range on a whole-number
# field, a structural axis or a typed junk cell is one line, never an internal error in a row;
# the weighing refuses exactly the studies past a day.

_READERS = {"link.bandwidth": "parse_bandwidth", "link.rtt": "parse_duration", "link.max_window": "parse_size",
            "links[1].bandwidth": "parse_bandwidth", "workload.output_tokens": "parse_number"}


@fuzz(40)
@given(st.sampled_from(sorted(_READERS)), st.lists(st.one_of(fz.quantity, fz.NUMBERS), min_size=1, max_size=3))
def test_an_axis_number_is_what_its_field_reads(key, values):
    """Each value's ``.si`` is the number --set's reader gives that text (a bare bandwidth is Gbps,
    a bare time seconds, a bare size bytes), for every value the study accepts."""
    from prfaas_plan import units
    from prfaas_plan.api.study_check import check
    from prfaas_plan.errors import PrfaasError
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.io.study import load_study, with_numbers

    scenario = "two-regions" if key.startswith("links") else "paper-case-study"
    path = _folder() / "study.yaml"
    path.write_text(yaml.safe_dump({"scenario": scenario, "axes": {key: values}}), encoding="utf-8")
    try:
        study, _ = load_study(path)
        check(study)
    except PrfaasError:
        return  # refused up front: the CLI's one line, checked by the tests above
    axis = with_numbers(study, Catalog.default()).axes[0]
    reader = getattr(units, _READERS[key])
    for v, x in zip(axis.values, axis.numbers, strict=True):
        try:
            want = float(reader(v))
        except units.UnitError:  # not a finite quantity ('inf' passes a float field's schema): no number
            want = None
        assert x == want, (key, v, x)


@fuzz(8)
@given(st.sampled_from(["paper-case-study", "two-regions", "qwen35-b200-h200"]), st.sampled_from(
    ["5Gbps", "12.5", "40Gbps", "100Gbps", "2.5GB/s"]))
def test_an_optimize_row_fills_every_column_and_shows_t_as_optimize(scenario, bandwidth):
    import pyarrow.parquet as pq

    key = "links[0].bandwidth" if scenario == "two-regions" else "link.bandwidth"
    folder = _folder()
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({"scenario": scenario, "axes": {key: [bandwidth]}}), encoding="utf-8")
    r = run(["study", str(path), "-o", str(folder / "r.parquet"), "--workers", "1"])
    check(r, names=(str(path),))
    row = pq.read_table(folder / "r.parquet").to_pylist()[0]
    if row["status"] != "ok":
        return
    empty = {k for k, v in row.items() if v is None} - {"error", "threshold_tokens"}
    assert not empty, (scenario, bandwidth, empty)
    shown = run(["optimize", scenario, "--set", f"{key}={bandwidth}"]).stdout
    for t in re.findall(r"t=([\d,]+)", row["splits"]):  # each site's t, as optimize prints it
        assert f"{t} (" in shown, (t, row["splits"])


@fuzz(25)
@given(st.integers(-2, 12), st.integers(-2, 40), st.integers(1, 9), st.sampled_from(["", ":log", ":lin"]),
       st.sampled_from(["clusters.prfaas.instances", "clusters.local.instances", "decode.bs_max",
                        "baselines.homogeneous.instances"]))
def test_a_range_on_a_whole_number_field_never_breaks_a_row(a, b, n, step, key):
    import pyarrow.parquet as pq

    folder = _folder()
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({"scenario": "paper-case-study", "axes": {key: f"{a}..{b}:{n}{step}"}}),
                    encoding="utf-8")
    r = run(["study", str(path), "-o", str(folder / "r.parquet"), "--workers", "1"])
    check(r, names=(str(path),))
    if r.code in (0, 1):
        errors = [x["error"] or "" for x in pq.read_table(folder / "r.parquet").to_pylist()]
        assert not any("internal error" in e for e in errors), errors


_STRUCTURE = ["link.bandwidth", "link.rtt", "links[0].bandwidth", "links[1].rtt", "clusters.prfaas.instances",
              "clusters.local.hardware", "sites.region-a.instances", "sites.nowhere.instances",
              "sites.prefill-east.hardware", "workload.output_tokens"]


@fuzz(25)
@given(st.sampled_from(["paper-case-study", "two-regions"]), st.lists(st.sampled_from(_STRUCTURE), min_size=1,
                                                                     max_size=2, unique=True),
       st.sampled_from([["2", "4"], ["10Gbps"], ["H200", "H20"], ["1ms", "5"]]))
def test_an_axis_that_cannot_apply_is_refused_whole(scenario, keys, values):
    """A study that exits 1 with every point failing the same way at another field than its axis's
    should have been refused before any point ran."""
    import pyarrow.parquet as pq

    folder = _folder()
    path = folder / "study.yaml"
    path.write_text(yaml.safe_dump({"scenario": scenario, "axes": {k: values for k in keys}}), encoding="utf-8")
    r = run(["study", str(path), "-o", str(folder / "r.parquet"), "--workers", "1"])
    check(r, names=(str(path),))
    if r.code == 1 and len(keys) == 1:
        errors = {x["error"] for x in pq.read_table(folder / "r.parquet").to_pylist()}
        if len(errors) == 1 and None not in errors:
            (e,) = errors
            assert f"axes {keys[0]}" in e or any(str(v) in e for v in values), (keys, values, e)


_TYPED = st.one_of(_CELL, st.sampled_from(["region-a t=1 N_p/N_d=1/1", "true", "False", "3", "2.5"]))


@fuzz(30)
@given(st.lists(st.lists(_TYPED, min_size=11, max_size=11), min_size=1, max_size=5))
def test_study_report_on_typed_columns_with_junk(cells):
    head = ("point,links[0].bandwidth,links[0].bandwidth.si,status,error,lambda_max_rps,threshold_tokens,n_p,"
            "binding,prfaas_vs_homogeneous,splits")
    path = _folder() / "r.csv"
    path.write_text("\n".join([head, *(",".join(r) for r in cells)]) + "\n", encoding="utf-8")
    check(run(["study-report", str(path)]), names=(str(path), "r.csv"))


@fuzz(60)
@given(st.integers(1, 10_000_000), st.floats(1e-4, 30.0), st.integers(1, 64))
def test_weighing_refuses_exactly_past_a_day(points, per_point, workers):
    from prfaas_plan.api import study as api_study
    from prfaas_plan.errors import SpecError
    from prfaas_plan.io.study import load_study

    path = _folder() / "study.yaml"
    path.write_text("axes: {link.bandwidth: [1Gbps]}\n", encoding="utf-8")
    study, _ = load_study(path)
    engine = type("Engine", (), {"name": "process pool", "workers": workers})()
    said: list[str] = []
    eta = per_point * points / workers
    try:
        api_study.weigh(study, points, per_point, 4, engine, path.with_suffix(".parquet"), confirm=False,
                        notice=said.append)
        refused = False
    except SpecError as exc:
        refused = True
        assert "--yes" in str(exc) and "more than a day" in str(exc)
    assert refused == (eta > api_study.DAY_S)
    assert len(said) == (0 if refused or eta <= api_study.NOTICE_S else 1)
