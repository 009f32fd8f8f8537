"""A study checked whole before any point runs: an axis that can never apply, a range that steps
off a whole-number field, and a study too large to finish in a day are one line and exit 2; a
long study says how long it takes at once."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.api import study as api_study
from prfaas_plan.api.study_worker import Worker
from prfaas_plan.cli import app
from prfaas_plan.errors import SpecError
from prfaas_plan.io.study import load_study

runner = CliRunner()
BIN = Path(sys.executable).parent / "prfaas-plan"


def _write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "study.yaml"
    p.write_text(text)
    return p


def _one_line(res) -> str:
    lines = res.output.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


# --- 5. a range on an instance count steps in whole numbers -----------------------------------------


def test_a_fractional_step_on_an_instance_count_is_refused_before_any_point(tmp_path):
    study = _write(tmp_path, "scenario: paper-case-study\naxes:\n  clusters.prfaas.instances: 1..4:3\n")
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.parquet")])
    assert res.exit_code == 2
    assert _one_line(res) == (
        f"error: {study}: axes.clusters.prfaas.instances: value 2, Input should be a valid integer, unable to parse "
        "string as an integer (got '2.5') (the range steps by 1.5; this field takes whole numbers: 1..4:4 steps "
        "by 1)")
    assert not (tmp_path / "r.parquet.parts").exists()


def test_a_log_range_off_whole_numbers_is_refused_and_whole_ranges_run(tmp_path):
    study = _write(tmp_path, "scenario: paper-case-study\naxes:\n  clusters.prfaas.instances: 2..12:4:log\n")
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.parquet")])
    assert res.exit_code == 2 and "(got '3.634') (this field takes whole numbers: list them" in res.output
    study = _write(tmp_path, "scenario: paper-case-study\naxes:\n  clusters.prfaas.instances: 1..4:4\n"
                             "  link.bandwidth: 1..4:3\n")  # 2.5 Gbps is a bandwidth: a fractional step is fine
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.parquet"), "--workers", "1"])
    assert res.exit_code == 0, res.output


def test_a_point_no_patch_serves_is_loaded_in_full_not_an_internal_error(tmp_path):
    """Unchecked (the library's Worker alone), the 2.5-instance point is the loader's own error."""
    st, _ = load_study(_write(tmp_path, "scenario: paper-case-study\naxes:\n  clusters.prfaas.instances: 1..4:3\n"))
    w = Worker(st)
    rows = [w.row(p) for p in st.points()]
    assert [r["status"] for r in rows] == ["ok", "error", "ok"]
    assert "internal error" not in rows[1]["error"] and "valid integer" in rows[1]["error"]
    assert rows[2]["lambda_max_rps"] == pytest.approx(3.30, abs=0.01)


# --- 6. an axis that can never apply ------------------------------------------------------------------


@pytest.mark.parametrize(("scenario", "axis", "message"), [
    ("two-regions", "link.bandwidth: [10Gbps, 100Gbps]",
     "axes.link.bandwidth: never applies to scenario two-regions: at each value the scenario fails at link: give "
     "clusters and link, or sites and links, not both"),
    ("two-regions", "clusters.prfaas.instances: [2, 4]",
     "axes.clusters.prfaas.instances: never applies to scenario two-regions: at each value the scenario fails at "
     "clusters.prfaas.hardware: required key is missing"),
    ("paper-case-study", "links[0].bandwidth: 1Gbps..10Gbps:5",
     "axes.links[0].bandwidth: never applies to scenario paper-case-study: at each value the scenario fails at "
     "links: "),
    ("paper-case-study", "sites.a.instances: [2, 4]",
     "axes.sites.a.instances: never applies to scenario paper-case-study: at each value the scenario fails at "
     "sites.a.instances: the scenario gives clusters and link, no sites: set clusters.prfaas.instances or "
     "clusters.local.instances"),
])
def test_an_axis_that_can_never_apply_is_refused_up_front(tmp_path, scenario, axis, message):
    study = _write(tmp_path, f"scenario: {scenario}\naxes:\n  {axis}\n")
    t0 = time.perf_counter()
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.parquet")])
    assert res.exit_code == 2
    assert _one_line(res).startswith(f"error: {study}: {message}")
    assert not (tmp_path / "r.parquet.parts").exists() and time.perf_counter() - t0 < 30


def test_an_axis_another_axis_could_complete_is_left_to_its_points(tmp_path):
    """clusters.prfaas.instances beside a clusters.prfaas.hardware axis: not refused whole (the rows say why)."""
    study = _write(tmp_path, "scenario: two-regions\naxes:\n  clusters.prfaas.instances: [2]\n"
                             "  clusters.prfaas.hardware: [H200]\n")
    res = runner.invoke(app, ["study", str(study), "-o", str(tmp_path / "r.csv"), "--workers", "1"])
    assert res.exit_code == 1 and "1 of 1 points failed" in res.output


# --- 6. a study weighed before it runs ----------------------------------------------------------------


class _Engine:
    name, workers = "process pool", 2


@pytest.mark.parametrize(("points", "per_point", "refused", "text"), [
    (8_064_000, 0.05, True, "about 2.3 days at 0.05 s a point"),  # 8,064,000 x 0.05 / 2 = 201,600 s
    (3_000_000, 0.05, False, "about 20.8 h at 0.05 s a point"),  # 75,000 s: under a day
    (1_000, 0.05, False, None),  # 25 s: said
    (100, 0.05, False, ""),  # 2.5 s: nothing said
])
def test_weigh_refuses_more_than_a_day_and_says_how_long(tmp_path, points, per_point, refused, text):
    st, _ = load_study(_write(tmp_path, "axes:\n  link.bandwidth: [1Gbps]\n"))
    said: list[str] = []
    if refused:
        with pytest.raises(SpecError) as e:
            api_study.weigh(st, points, per_point, 4, _Engine(), tmp_path / "r.parquet", confirm=False,
                            notice=said.append)
        assert str(e.value) == (f"{st.source}: 1 points of optimize on 2 workers (process pool): {text} "
                                "(measured on 4), more than a day: give --yes to run it, or fewer points (samples: N)")
    api_study.weigh(st, points, per_point, 4, _Engine(), tmp_path / "r.parquet", confirm=True, notice=said.append)
    if text == "":
        assert said == []
    else:
        assert len(said) == 1 and "on 2 workers (process pool): about" in said[0]
        assert text is None or text in said[0]
        assert said[0].endswith(f"rows go to {tmp_path / 'r.parquet.parts'} as they finish, --resume continues "
                                "after a stop")


@pytest.mark.parametrize(("seconds", "text"), [(45, "45 s"), (720, "12 min"), (12_240, "3.4 h"),
                                               (201_600, "2.3 days")])
def test_duration_text(seconds, text):
    assert api_study.duration_text(seconds) == text


@pytest.mark.slow
def test_an_eight_million_point_study_is_refused_at_once_without_yes(tmp_path):
    """The issue's 8,064,000 points: refused in seconds (a few points measured), naming the points,
    the time and --yes; nothing written, and memory never holds the points."""
    # simulate (~0.2 s a point here): refused on a machine many times faster too, where optimize's few
    # ms a point would fit in a day on one that is 3x faster
    study = _write(tmp_path, "scenario: paper-case-study\ncommand: simulate\noptions: {load: 0.7, requests: 2000}\n"
                             "axes:\n  link.bandwidth: 1Gbps..400Gbps:2000:log\n"
                             "  clusters.prfaas.instances: 1..16:16\n  workload.output_tokens: 1..252:252\n")
    t0 = time.perf_counter()
    # one worker, in its process: nothing left behind if a far faster machine took it
    res = subprocess.run([str(BIN), "study", str(study), "-o", str(tmp_path / "r.parquet"), "--workers", "1"],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and time.perf_counter() - t0 < 60
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {study}: 8,064,000 points of simulate on 1 worker "
                                                   "(serial): about "), lines
    assert re.search(r"about [\d.,]+ (h|days) at [\d.e-]+ s a point \(measured on 4\), more than a day: give --yes "
                     r"to run it, or fewer points \(samples: N\)$", lines[0]), lines
    assert not (tmp_path / "r.parquet").exists() and not (tmp_path / "r.parquet.parts").exists()
