"""Every figure the README's commands draw, and every figure of the report, is readable: no two tick
labels overlap (their text extents as the renderer lays them out) and every line is labelled.
The checks themselves fail on a figure built to fail them."""

from __future__ import annotations

import shlex

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app
from tests.conftest import ROOT
from tests.figure_checks import checked_figures, overlapping_ticks, unlabelled_lines

runner = CliRunner()


def _figure():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def test_the_overlap_check_sees_overlapping_tick_labels():
    plt = _figure()
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.set_xticks([0.50, 0.52], ["a long tick label", "another long one"])  # 2% of the width apart
    assert ("a long tick label", "another long one") in overlapping_ticks(fig)
    ax.set_xticks([0.0, 1.0], ["0", "1"])
    assert overlapping_ticks(fig) == []
    plt.close(fig)


def test_the_overlap_check_sees_log_minor_labels_collide():
    """The sizing figure once drew 3x10^0 over 4x10^0 on a log axis of demands."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([1.5, 3, 6, 12, 24], [1, 2, 3, 4, 5], label="a line")
    ax.set_xscale("log")
    assert overlapping_ticks(fig) != []
    plt.close(fig)


def test_the_label_check_sees_an_unlabelled_line():
    plt = _figure()
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1], label="labelled")
    ax.axhline(0.5, ls=":")
    assert len(unlabelled_lines(fig)) == 1
    plt.close(fig)


# the README's commands that draw a figure (the README shows or names each), with a file in tmp
README_FIGURES = [
    "optimize --plot fig5.png",
    "sweep --set link.bandwidth=1Gbps..100Gbps:8 --log --plot sweep.png",
    "sweep two-regions --set links[1].bandwidth=2Gbps..8Gbps:7 --plot sweep2.png",
    "size --plot size.png",
    "size --set slo.ttft=4s --plot size-ttft.png",
    "size two-regions --plot size2.png",
    "simulate --plot sim.png",
    "trace stats tests/fixtures/traces/mooncake_synthetic_trace.jsonl --plot trace.png",
]


def _check(args: list[str]) -> list[dict]:
    with checked_figures() as seen:
        res = runner.invoke(app, args)
    assert res.exit_code == 0, res.output
    assert seen, "no figure was drawn"
    return seen


def _clean(seen: list[dict]) -> None:
    assert [(f["title"], f["overlaps"]) for f in seen if f["overlaps"]] == []
    assert [(f["title"], f["unlabelled"]) for f in seen if f["unlabelled"]] == []


@pytest.mark.slow
@pytest.mark.parametrize("command", README_FIGURES)
def test_readme_figures_are_readable(command, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    args = [str(tmp_path / a) if a.endswith(".png") else a for a in shlex.split(command)]
    _clean(_check(args))


@pytest.mark.slow
def test_the_replayed_day_is_readable(tmp_path, monkeypatch):
    """The README's `replay` over the example day (docs/replay-diurnal.png)."""
    monkeypatch.chdir(ROOT)
    _clean(_check(["replay", "--series", "tests/fixtures/bandwidth/diurnal.csv", "--set", "slo.ttft=8s", "--plot",
                   str(tmp_path / "replay.png")]))


@pytest.mark.slow
def test_the_study_report_is_readable(tmp_path):
    """The README's fleet study (216 points) and its report's figures."""
    out = tmp_path / "fleet.parquet"
    res = runner.invoke(app, ["study", str(ROOT / "scenarios" / "studies" / "fleet.yaml"), "-o", str(out),
                              "--workers", "2"])
    assert res.exit_code == 0, res.output
    seen = _check(["study-report", str(out), "-o", str(tmp_path / "fleet.html")])
    assert len(seen) == 3
    _clean(seen)


@pytest.mark.slow
@pytest.mark.parametrize("args", [["--simulate"], ["two-regions", "--simulate"],
                                  ["--trace", "tests/fixtures/traces/mooncake_synthetic_trace.jsonl"]],
                         ids=["case-study", "two-regions", "trace"])
def test_the_report_figures_are_readable(args, monkeypatch):
    """Drawn here, not in the report's figure process, so that every one is checked."""
    from prfaas_plan.api.report import report
    from prfaas_plan.cli.options import trace_arg
    from prfaas_plan.io.load import Catalog
    from prfaas_plan.report.html import render
    from prfaas_plan.report.html_figures import Figures

    monkeypatch.chdir(ROOT)
    trace = args[args.index("--trace") + 1] if "--trace" in args else None
    scenario = args[0] if not args[0].startswith("--") else None
    data = report(scenario, Catalog.default(), trace=trace_arg(trace, None, None), simulate="--simulate" in args)
    with checked_figures() as seen:
        render(data, Figures(parallel=False))
    assert len(seen) >= 4
    _clean(seen)
