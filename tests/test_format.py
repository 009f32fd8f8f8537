"""Numbers at the edge: tables, CSV, JSON and figures (report/render.py, report/views*.py, report/plots.py)."""

import json
import re

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from prfaas_plan.report import plots, render, views_plan
from prfaas_plan.specs.sweep import SweepPoint, SweepResult

runner = CliRunner()


def invoke(*args):
    res = runner.invoke(app, list(args))
    return res


# --- render.num, CSV, JSON -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("x", "digits", "text"), [
    (1e30, 2, "1e+30"), (1.3255668956164218e29, 2, "1.326e+29"), (123456.789, 2, "123,456.79"),
    (999_999_999_999_999.0, 0, "999,999,999,999,999"), (1e15, 0, "1e+15"), (-2.5e20, 1, "-2.5e+20"),
    (3.3, 3, "3.300"), (None, 2, "-"), (float("inf"), 2, "unbounded"), (float("nan"), 2, "n/a"),
])
def test_num(x, digits, text):
    assert render.num(x, digits) == text


def test_csv_has_no_binary_round_off_and_no_31_digit_integers():
    rows = [{"a": 2039000000000.0002, "b": 0.1 + 0.2, "c": 1e30, "d": 19194.79171720651, "e": 3, "f": "x,y",
             "g": None, "h": 2.25e15}]
    assert render.to_csv(rows) == 'a,b,c,d,e,f,g,h\n2039000000000.0,0.3,1e+30,19194.7917172,3,"x,y",,2.25e+15\n'


def test_json_is_complete_and_refuses_non_finite_naming_the_key():
    assert json.loads(render.to_json({"x": 19194.79171720651})) == {"x": 19194.79171720651}  # full precision
    with pytest.raises(RuntimeError, match=r"^internal error: best\.rows\[1\] is nan, refusing to print it$"):
        render.to_json({"best": {"rows": [1.0, float("nan")]}})


@pytest.mark.parametrize(("tokens", "text"), [(1, "1"), (1023.4, "1,023"), (1024, "1,024 (1.0K)"),
                                              (19194.79, "19,195 (18.7K)"), (1e30, "1e+30"), (None, "-")])
def test_token_cells(tokens, text):
    assert views_plan._tok(tokens) == text  # the issue: l_short 1 printed as "1 (0.0K)"


# --- through the CLI -------------------------------------------------------------------------------------------

def test_huge_bandwidth_prints_in_scientific_form():
    res = invoke("optimize", "--set", "link.bandwidth=1e30")
    assert res.exit_code == 0, res.output
    assert "1e+30 Gbps usable link" in res.stdout
    assert "link 1.326e+29 req/s" in res.stdout
    assert not re.search(r"\d[\d,]{20,}", res.stdout)  # no 16+ digit integers, with or without commas


def test_hardware_table_fits_120_columns_with_provenance_notes():
    res = invoke("hardware")
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert max(len(line) for line in lines) <= 120
    h200 = next(line for line in lines if line.lstrip().startswith("H200 "))
    note = re.search(r"\[(\d+)\]$", h200)
    assert note is not None  # the row points at a numbered note ...
    assert any(line.startswith(f"[{note.group(1)}] ") for line in lines)  # ... printed under the table


def test_hardware_csv_prints_datasheet_numbers_without_noise():
    res = invoke("hardware", "--format", "csv")
    assert res.exit_code == 0, res.output
    a100 = next(line for line in res.stdout.splitlines() if line.startswith("A100-80GB,"))
    assert ",2039000000000.0," in a100  # 2.039 TB/s; was 2039000000000.0002
    assert "0002" not in res.stdout and "9999999" not in res.stdout
    res = invoke("hardware", "--format", "json")
    a100 = next(h for h in json.loads(res.stdout)["hardware"] if h["name"] == "A100-80GB")
    assert a100["hbm_bytes_per_s"] == 2039e9


@pytest.mark.parametrize(("bandwidth", "gbps"), [("100Gb/s", 100), ("100Gbit/s", 100), ("12.5GB/s", 100),
                                                 ("100GBps", 800), ("100gbps", 100), ("100", 100),
                                                 ("10000Mbps", 10)])
def test_link_bandwidth_spellings_through_the_cli(bandwidth, gbps):
    res = invoke("optimize", "--set", f"link.bandwidth={bandwidth}", "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["link"]["bandwidth_gbps"] == pytest.approx(gbps, rel=1e-12)


def _one_line_error(res, code=2):
    assert res.exit_code == code, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert "Traceback" not in res.output and "Error:" not in lines[0].split(" ", 1)[1]
    return lines[0]


@pytest.mark.parametrize(("value", "expected"), [
    ("100GBPS", "did you mean Gbps (bits) or GB/s (bytes)?"),
    ("inf", "'inf' is not a finite number"),
    ("0", "0 is not a positive bandwidth"),
])
def test_bad_bandwidth_is_one_line(value, expected):
    line = _one_line_error(invoke("optimize", "--set", f"link.bandwidth={value}"))
    assert "link.bandwidth" in line and expected in line
    assert "(got" not in line


def test_scientific_token_lengths_through_the_cli():
    res = invoke("kv-rate", "internal-1t", "--lengths", "1e3,1.5e4,8K", "--format", "json")
    assert res.exit_code == 0, res.output
    assert [r["length_tokens"] for r in json.loads(res.stdout)["rows"]] == [1000, 15000, 8192]
    line = _one_line_error(invoke("kv-rate", "internal-1t", "--lengths", "1K,100.5"))
    assert line == "error: --lengths: '100.5' is 100.5 tokens, not a whole number: write 100 or 101"


def test_sweep_points_are_bounded():
    line = _one_line_error(invoke("sweep", "--set", "link.bandwidth=1..100:100000"))
    assert line == "error: --set link.bandwidth: '1..100:100000': a range takes 2 to 2,000 points, not 100,000"
    line = _one_line_error(invoke("sweep", "--set", "link.bandwidth=1..100:2001"))
    assert "2 to 2,000 points" in line


def test_sweep_ends_in_two_units_of_one_kind():
    res = invoke("sweep", "--set", "link.bandwidth=1Gb/s..10GB/s:3", "--format", "json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)["rows"]
    assert [r["value_text"] for r in rows] == ["1Gb/s", "40.5Gb/s", "80Gb/s"]
    assert [r["value"] for r in rows] == [1.0, 40.5, 80.0]
    line = _one_line_error(invoke("sweep", "--set", "link.bandwidth=1Gbps..10ms:3"))
    assert "different units 'Gbps' and 'ms'" in line


# --- figures ---------------------------------------------------------------------------------------------------

@pytest.fixture
def figures(monkeypatch):
    """Keep the figures a command draws instead of writing them."""
    kept = []
    monkeypatch.setattr(plots, "save_figure", lambda fig, path: kept.append(fig))
    yield kept
    import matplotlib.pyplot as plt

    plt.close("all")


def test_figure5_optimum_is_in_the_legend_not_on_the_curves(figures, tmp_path):
    res = invoke("optimize", "--plot", str(tmp_path / "f5.png"))
    assert res.exit_code == 0, res.output
    (fig,) = figures
    ax2 = fig.axes[1]
    assert len(ax2.texts) == 0  # no free-floating label for a curve to run through
    legend = ax2.get_legend()
    assert "t* = 18.7K, Lambda_max = 3.30" in [t.get_text() for t in legend.get_texts()]
    fig.canvas.draw()
    box = legend.get_window_extent()
    for line in ax2.get_lines():  # no drawn point of a curve inside the legend
        xy = line.get_transform().transform(line.get_xydata())
        shown = ax2.get_window_extent()
        inside = [(x, y) for x, y in xy if shown.contains(x, y) and box.contains(x, y)]
        assert inside == [], line.get_label()


def test_sweep_figure_labels(figures, tmp_path):
    res = invoke("sweep", "--set", "link.bandwidth=1..100:12", "--plot", str(tmp_path / "sw.png"))
    assert res.exit_code == 0, res.output
    (fig,) = figures
    ax1, ax2 = fig.axes
    assert ax1.get_xlabel() == ax2.get_xlabel() == "link.bandwidth (Gbps)"
    assert ax2.get_title() != "" and ax1.get_title() != ""
    labels = [t.get_text() for t in ax1.get_legend().get_texts()]
    assert "the link binds (bound by: link)" in labels  # the red marker (10 Gbps is link-bound)
    red = next(line for line in ax1.get_lines() if line.get_label() == "the link binds (bound by: link)")
    assert list(red.get_xdata()) == [10.0]


@pytest.mark.parametrize(("key", "texts", "label"), [
    ("link.bandwidth", ["1", "2"], "link.bandwidth (Gbps)"),
    ("link.bandwidth", ["1GB/s", "2GB/s"], "link.bandwidth (GB/s)"),
    ("link.rtt", ["1ms", "2ms"], "link.rtt (ms)"),
    ("workload.input.max", ["1K", "33536"], "workload.input.max (K tokens, K = 1024)"),
    ("workload.input.max", ["1000", "2000"], "workload.input.max (tokens)"),
    ("clusters.local.instances", ["4", "8"], "clusters.local.instances"),
])
def test_sweep_axis_label(key, texts, label):
    result = SweepResult(key=key, scale="linear", method=None, prefill_site="prfaas", sites=("local",),
                         points=tuple(SweepPoint(value=float(i), value_text=t) for i, t in enumerate(texts)))
    assert plots.sweep_axis_label(result) == label


def test_calibrate_hold_refuses_non_finite_numbers(tmp_path):
    # --hold prefill_overhead_ms=inf ended in a least-squares traceback
    path = tmp_path / "m.csv"
    path.write_text("model,length,prefill_s\ninternal-1t,32768,1.84\ninternal-1t,131072,7.4\n")
    line = _one_line_error(invoke("calibrate", str(path), "--hold", "prefill_overhead_ms=inf"))
    assert line == "error: --hold: 'prefill_overhead_ms=inf': 'inf' is not a finite number"


def test_a_vanishing_bandwidth_prints_no_infinite_cost():
    """2.2e-308 Gbps: naive PD serves ~1e-300 req/s and its cost per million requests passes the
    largest float; it prints as unknown (null), never inf (a fuzz find)."""
    res = invoke("optimize", "--set", "link.bandwidth=2.2250738585072014e-308", "--format", "json")
    assert res.exit_code == 0, res.output
    naive = json.loads(res.stdout)["baselines"]["naive_heterogeneous"]
    assert naive["lambda_max_rps"] > 0 and naive["cost_per_million_requests"] is None
