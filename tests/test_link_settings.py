"""A link's bandwidth set by a command at a point of its grid (degrade's levels, thresholds' and
replay's bandwidths, report's parts): on the key the scenario's form spells (``link`` or
``links[i]``, one PD site under ``sites:`` included), and replacing a law given by ``--set`` as
one given in the file (issue 26)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.io.load import PACKAGED_CATALOG

runner = CliRunner()
CASE = PACKAGED_CATALOG / "scenarios" / "paper-case-study.yaml"
LAW = {"kind": "quantiles", "p50": "100Gbps", "p10": "20Gbps"}
LAW_SET = "link.bandwidth={kind: quantiles, p50: 100Gbps, p10: 20Gbps}"


def run_json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _case() -> dict:
    data = yaml.safe_load(CASE.read_text())
    data.pop("description", None)
    return data


def _forms(tmp_path: Path) -> tuple[Path, Path]:
    """The case study with an 8xH200 prefill service as two clusters and as one site under ``sites:``."""
    two = _case()
    two["clusters"]["prfaas"]["instances"] = 8
    one = {k: v for k, v in two.items() if k not in ("clusters", "link", "baselines")}
    one["sites"] = {"east": {"role": "prfaas", **two["clusters"]["prfaas"]},
                    "west": {"role": "pd", **two["clusters"]["local"]}}
    one["links"] = [{"from": "east", "to": "west", **two["link"]}]
    one["baselines"] = {"naive_heterogeneous": True}
    two["baselines"] = {"naive_heterogeneous": True}
    paths = tmp_path / "two.yaml", tmp_path / "one.yaml"
    for p, d in zip(paths, (two, one), strict=True):
        p.write_text(yaml.safe_dump(d, sort_keys=False))
    return paths


def _numbers(d: dict) -> list:
    """Every level's capacities and plan, without the site and link names."""
    (link,) = d["links"].values()
    return [(r["level"], r["static"]["lambda_max_rps"], r["replanned"]["lambda_max_rps"], r["replanned"]["n_prfaas"],
             [tuple(s.values()) for s in r["replanned"]["sites"].values()]) for r in link["levels"]]


def test_degrade_on_one_site_under_sites_is_the_two_cluster_answer(tmp_path):
    two, one = _forms(tmp_path)
    a, b = run_json("degrade", str(two)), run_json("degrade", str(one))
    assert _numbers(a) == _numbers(b)
    assert a["nominal_lambda_max_rps"] == b["nominal_lambda_max_rps"]
    assert [r["level"] for r in next(iter(b["links"].values()))["levels"]] == [1.0, 0.5, 0.1, 0.0]


def test_a_size_plan_of_one_site_degrades_and_gives_its_thresholds(tmp_path):
    _, one = _forms(tmp_path)
    plan = tmp_path / "plan.yaml"
    res = runner.invoke(app, ["size", str(one), "-o", str(plan)])
    assert res.exit_code == 0, res.output
    assert yaml.safe_load(plan.read_text())["links"]  # the plan is in the sites form
    d = run_json("degrade", str(plan))
    assert next(iter(d["links"].values()))["levels"][0]["level"] == 1.0
    t = run_json("thresholds", str(plan), "--loads", "1")
    assert t["bandwidths"] == ["1Gbps", "1.931Gbps", "3.728Gbps", "7.197Gbps", "13.89Gbps", "26.83Gbps", "51.79Gbps",
                               "100Gbps"]
    assert set(t["sites"]) == {"west"}


@pytest.mark.slow
@pytest.mark.parametrize("command", [["degrade"], ["thresholds", "--loads", "0.5,1"]])
def test_a_law_by_set_is_the_law_in_the_file(tmp_path, command):
    data = _case()
    data["link"]["bandwidth"] = LAW
    f = tmp_path / "law.yaml"
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    by_file = run_json(command[0], str(f), *command[1:])
    by_set = run_json(command[0], str(CASE), *command[1:], "--set", LAW_SET)
    by_file.pop("scenario", None)
    by_set.pop("scenario", None)
    assert by_set == by_file


@pytest.mark.slow
def test_replay_and_report_take_a_law_by_set(tmp_path):
    series = tmp_path / "s.csv"
    series.write_text("time_s,bandwidth\n0,100Gbps\n60,20Gbps\n120,80Gbps\n")
    data = _case()
    data["link"]["bandwidth"] = {"kind": "series", "file": str(series)}
    f = tmp_path / "law.yaml"
    f.write_text(yaml.safe_dump(data, sort_keys=False))
    law = f"link.bandwidth={{kind: series, file: {json.dumps(str(series))}}}"
    args = ["--duration", "120", "--policies", "static,table"]
    a, b = run_json("replay", "--set", law, *args), run_json("replay", str(f), *args)
    a.pop("scenario", None)
    b.pop("scenario", None)
    assert a == b
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", "--set", LAW_SET, "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert "given twice" not in out.read_text()
