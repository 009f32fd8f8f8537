"""`study-report`: the frontiers cut from a study's rows, hand-built and from a real study."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.api.study_report import figures, study_report
from prfaas_plan.cli import app
from prfaas_plan.io import study_results

runner = CliRunner()
G = 1e9 / 8  # bytes/s in 1 Gbps

COLS = [("point", "int"), ("model", "str"), ("link.bandwidth", "str"), ("link.bandwidth.si", "float"),
        ("clusters.prfaas.hardware", "str"), ("clusters.local.hardware", "str"),
        ("baselines.homogeneous.hardware", "str"), ("status", "str"), ("error", "str"),
        ("lambda_max_rps", "float"), ("prfaas_vs_homogeneous", "float"), ("cost_per_million_requests", "float")]


def _rows() -> list[dict]:
    """Two models x two zipped GPU pairs x three bandwidths, with gains chosen by hand."""
    gains = {("m1", "H200"): [0.7, 1.2, 1.3],  # pays from 10 Gbps
             ("m1", "B200"): [1.1, 1.1, 1.1],  # pays at every tier
             ("m2", "H200"): [0.5, 0.9, 1.0],  # equal at best: never pays
             ("m2", "B200"): [0.6, 0.8, 1.05]}  # pays from 100 Gbps
    rows, i = [], 0
    for m in ("m1", "m2"):
        for bw in (1, 10, 100):
            for hw, local in (("H200", "H20"), ("B200", "H200")):
                g = gains[(m, hw)][(1, 10, 100).index(bw)]
                rows.append({"point": i, "model": m, "link.bandwidth": f"{bw}Gbps", "link.bandwidth.si": bw * G,
                             "clusters.prfaas.hardware": hw, "clusters.local.hardware": local,
                             "baselines.homogeneous.hardware": local, "status": "ok", "error": None,
                             "lambda_max_rps": 3.0 * g, "prfaas_vs_homogeneous": g,
                             "cost_per_million_requests": 100.0 / g})
                i += 1
    rows[-1] |= {"status": "infeasible", "error": "link: too small", "lambda_max_rps": None,
                 "prfaas_vs_homogeneous": None, "cost_per_million_requests": None}
    return rows


def test_breakeven_is_the_lowest_bandwidth_with_a_gain_above_one():
    f = figures(_rows(), "optimize", "t")
    assert f.x_key == "link.bandwidth"
    assert f.columns == ("m1", "m2")
    # the zipped pair reads as one axis; the baseline equal to local hardware is dropped from the label
    labels = {(b.panel, b.label): b for b in f.breakeven}
    assert set(labels) == {(m, f"prfaas {hw} / local {lo}") for m in ("m1", "m2")
                           for hw, lo in (("H200", "H20"), ("B200", "H200"))}
    b = labels[("m1", "prfaas H200 / local H20")]
    assert (b.from_bytes_per_s, b.always, b.best_gain, b.best_at_bytes_per_s) == (10 * G, False, 1.3, 100 * G)
    b = labels[("m1", "prfaas B200 / local H200")]
    assert (b.from_bytes_per_s, b.always) == (1 * G, True)
    b = labels[("m2", "prfaas H200 / local H20")]
    assert (b.from_bytes_per_s, b.best_gain) == (None, 1.0)  # equal is not paying
    b = labels[("m2", "prfaas B200 / local H200")]  # its 100 Gbps point is infeasible: 10 Gbps is its best
    assert (b.from_bytes_per_s, b.best_gain) == (None, 0.8)
    series = {s.label: s for p in f.gain[0] for s in p.series}
    assert series["prfaas H200 / local H20"].x == (1 * G, 10 * G, 100 * G)
    assert sum(len(s.x) for s in f.cost) == 11  # every feasible point once


def test_lines_beyond_eight_take_their_best_over_the_folded_axes():
    rows = []
    for i in range(40):
        g = 0.5 + (i % 10) / 10
        rows.append({"point": i, "link.bandwidth": "1Gbps" if i < 20 else "2Gbps",
                     "link.bandwidth.si": G if i < 20 else 2 * G, "a": str(i % 10), "b": str(i % 2),
                     "status": "ok", "error": None, "lambda_max_rps": g, "prfaas_vs_homogeneous": g,
                     "cost_per_million_requests": 1.0})
    f = figures(rows, "optimize", "t")
    assert len(f.gain[0][0].series) <= 8 and f.aggregated


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("study")
    study = tmp / "s.yaml"
    study.write_text("scenario: paper-case-study\naxes:\n  link.bandwidth: [1Gbps, 10Gbps, 100Gbps]\n"
                     "zip:\n  - {clusters.prfaas.hardware: [H200, B200], clusters.prfaas.instances: [4, 3]}\n")
    out = tmp / "r.parquet"
    assert runner.invoke(app, ["study", str(study), "-o", str(out), "--workers", "1"]).exit_code == 0
    return out


def test_study_report_in_the_terminal_and_as_json(results):
    res = runner.invoke(app, ["study-report", str(results)])
    assert res.exit_code == 0, res.output
    assert "6 points of optimize" in res.output and "Where PrfaaS-PD stops paying" in res.output
    r = study_report(results)
    rows = r.rows
    b = {x.label: x for x in r.figures.breakeven}
    for label, x in b.items():  # each line's break-even is its lowest bandwidth with a gain above 1
        hw = label.split(" / ")[0].split()[-1]
        mine = sorted((row["link.bandwidth.si"], row["prfaas_vs_homogeneous"]) for row in rows
                      if row["clusters.prfaas.hardware"] == hw)
        pays = [bw for bw, g in mine if g > 1.001]
        assert x.from_bytes_per_s == (pays[0] if pays else None)
    js = runner.invoke(app, ["study-report", str(results), "--format", "json"])
    assert js.exit_code == 0 and '"breakeven"' in js.output and "NaN" not in js.output


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.refs: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.refs += [v for k, v in attrs if k in ("src", "href") and v]


@pytest.mark.slow
def test_study_report_html_is_self_contained_with_its_figures(results, tmp_path):
    out = tmp_path / "s.html"
    res = runner.invoke(app, ["study-report", str(results), "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    p = _Tags()
    p.feed(text)
    assert p.tags.count("figure") == 3 and p.tags.count("svg") == 3
    assert not [r for r in p.refs if re.match(r"(https?:)?//", r)]
    assert "Where PrfaaS-PD stops paying" in text and "prfaas-plan study-report" in text


@pytest.mark.parametrize(("args", "message"), [
    (["nope.parquet"], "nope.parquet: file not found"),
    (["{bad}"], "not a study's results"),
    (["{res}", "-o", "x.txt"], "--output: the page is HTML: give a path ending in .html"),
])
def test_study_report_bad_input_exits_2(results, tmp_path, args, message):
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    args = [a.replace("{bad}", str(bad)).replace("{res}", str(results)) for a in args]
    res = runner.invoke(app, ["study-report", *args])
    assert res.exit_code == 2 and message in res.output, res.output
    assert len(res.output.strip().splitlines()) == 1


def test_results_written_as_csv_read_back_the_same(tmp_path):
    rows = _rows()
    t = study_results.table(rows, COLS, "k")
    out = tmp_path / "r.csv"
    study_results.finish(out, [t], COLS, "k")
    back = study_results.read(out)
    assert [r["prfaas_vs_homogeneous"] for r in back] == [r["prfaas_vs_homogeneous"] for r in rows]


def test_an_empty_cell_of_a_best_row_shows_a_dash(tmp_path):
    """A results file whose best row left its axis value and binding empty: the table shows "-",
    never "None". Found by the fuzz suite at PRFAAS_FUZZ_SCALE=3."""
    path = tmp_path / "r.csv"
    path.write_text("point,links[0].bandwidth,links[0].bandwidth.si,status,error,lambda_max_rps,threshold_tokens,n_p,"
                    "binding,prfaas_vs_homogeneous,splits\n1,,,ok,,,,,,1,\n", encoding="utf-8")
    r = runner.invoke(app, ["study-report", str(path)])
    assert r.exit_code == 0, r.output
    row = next(line for line in r.output.splitlines() if line.strip().startswith("all"))
    assert row.split() == ["all", "-", "-", "1.000x", "-", "-"] and "None" not in r.output
