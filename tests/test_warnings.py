"""A Python warning never reaches the user as Python prints it (file:line, the source line): the
causes found are fixed (`replay --plot` without slo.ttft: matplotlib's empty-legend warning), and
any other is one `warning:` line (issue 26)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan.cli import app

runner = CliRunner()
FIXTURES = Path(__file__).resolve().parent / "fixtures"
DIURNAL = FIXTURES / "bandwidth" / "diurnal.csv"


@pytest.mark.slow
@pytest.mark.parametrize("args", [
    ["replay", "--series", str(DIURNAL), "--duration", "1200", "--policies", "static,table", "--plot", "{}/r.png"],
    ["replay", "--series", str(DIURNAL), "--duration", "1200", "--set", "slo.ttft=8s", "--plot", "{}/r.svg"],
    ["optimize", "--plot", "{}/o.png"],
    ["optimize", "two-regions"],
    ["size", "--plot", "{}/s.png"],
    ["simulate", "--load", "1.5", "--requests", "300", "--plot", "{}/m.png"],
    ["trace", "stats", str(FIXTURES / "mooncake_300.jsonl"), "--plot", "{}/t.png"],
    ["latency", "two-regions", "--load", "1.2"],
    ["sweep", "--set", "link.bandwidth=1bps..1Tbps:3", "--log", "--plot", "{}/w.png"],
])
def test_commands_raise_no_warning(args, tmp_path):
    """As `python -W error`: a warning would fail the command."""
    args = [a.replace("{}", str(tmp_path)) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = runner.invoke(app, args)
    assert res.exit_code == 0, (res.output, res.exception)
    assert "Warning" not in res.stderr and not any(x.startswith("warning:") for x in res.stderr.splitlines())


def test_a_warning_is_one_line(monkeypatch):
    import prfaas_plan.api.optimize as api

    real = api.optimize

    def noisy(*a, **k):
        warnings.warn("overflow in the widget\n  widget = huge * huge", RuntimeWarning, stacklevel=1)
        warnings.warn("overflow in the widget\n  widget = huge * huge", RuntimeWarning, stacklevel=1)
        return real(*a, **k)

    monkeypatch.setattr(api, "optimize", noisy)
    res = runner.invoke(app, ["optimize"])
    assert res.exit_code == 0
    assert res.stderr == "warning: overflow in the widget\n"
