"""The report in a real browser: headless Chromium loads it with no console error, fetches nothing,
draws every figure at a non-zero size, and its screenshot is not blank.

Needs Debian's chromium and chromium-driver. ``.ci/run`` installs them and sets
PRFAAS_BROWSER_REQUIRED, so in CI a missing browser fails the test rather than skipping it.
"""

from __future__ import annotations

import importlib.util
import os
import sys

import pytest
from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.cli import app
from tests.conftest import ROOT
from tests.report_units import without_units

pytestmark = pytest.mark.slow  # a browser launch

_spec = importlib.util.spec_from_file_location("report_screenshot", ROOT / "scripts" / "report_screenshot.py")
shot = importlib.util.module_from_spec(_spec)
sys.modules["report_screenshot"] = shot
_spec.loader.exec_module(shot)

if shot.binaries() is None:
    if os.environ.get("PRFAAS_BROWSER_REQUIRED"):
        raise RuntimeError("CI must run the browser test: .ci/run installs chromium and chromium-driver")
    pytest.skip("chromium and chromedriver are not installed", allow_module_level=True)


@pytest.fixture(scope="module")
def seen(tmp_path_factory):
    """Each bundled scenario's report, as Chromium shows it (one browser start per report)."""
    out = {}
    for name in ("paper-case-study", "two-regions"):
        html = tmp_path_factory.mktemp("report") / f"{name}.html"
        res = CliRunner().invoke(app, ["report", name, "-o", str(html)])
        assert res.exit_code == 0, res.output
        out[name] = shot.inspect(html, height=1000)
    return out


@pytest.mark.parametrize("name", ["paper-case-study", "two-regions"])
def test_the_report_loads_without_console_errors_or_fetches(seen, name):
    s = seen[name]
    assert [m for m in s.console if m["level"] in ("SEVERE", "WARNING")] == []
    assert s.resources == []  # self-contained: no image, font, style or script from anywhere


@pytest.mark.parametrize("name", ["paper-case-study", "two-regions"])
def test_every_figure_has_a_rendered_size(seen, name):
    figures = seen[name].figures
    assert len(figures) >= 3  # Figure 5, the link sweep, the TTFT CDF at least
    for f in figures:
        assert f["kind"] in ("svg", "img"), f
        assert f["width"] >= 200 and f["height"] >= 100, f
        assert f["caption"].strip(), f


@pytest.mark.parametrize("name", ["paper-case-study", "two-regions"])
def test_the_screenshot_is_not_blank(seen, name):
    s = seen[name]
    assert s.png[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.blank_fraction(s.png) < 0.97  # a blank page is 1.0; a page of text and figures far below
    assert s.page_height > 3000  # every section, not a stub


def _json(*args: str) -> dict:
    import json

    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("name", ["paper-case-study", "two-regions"])
def test_the_first_screen_holds_the_plan_gain_and_cost(seen, name):
    """Before any evidence, in the first 1000 px a reader sees: t, the split, Lambda_max, the gain
    over homogeneous PD and the cost, as optimize computes them."""
    screen = seen[name].screen
    rows = {k["key"]: k for k in screen["keys"]}
    for key in ("t", "split", "lambda", "gain", "cost"):
        assert key in rows, key
        assert rows[key]["top"] >= 0 and rows[key]["bottom"] <= screen["height"], rows[key]
    plan = _json("optimize", name)
    best = plan["best"]
    if name == "paper-case-study":
        assert rows["t"]["text"].startswith(f"{units.format_threshold(best['threshold_tokens'])} tokens")
        assert rows["split"]["text"].startswith(f"{best['n_prfaas']} / {best['n_p']} / {best['n_d']}")
    else:
        for site, s in best["sites"].items():
            if s["role"] == "pd":
                assert f"{site} {units.format_threshold(s['threshold_tokens'])} tokens" in rows["t"]["text"]
                assert f"{site} N_p / N_d {s['n_p']} / {s['n_d']}" in rows["split"]["text"]
    assert rows["lambda"]["text"].startswith(f"{best['lambda_max_rps']:.3f} req/s")
    assert rows["gain"]["text"].startswith(f"{plan['ratios']['prfaas_vs_homogeneous']:.2f}x homogeneous PD")
    assert rows["cost"]["text"].startswith(f"${best['cost_per_million_requests']:,.0f} per 1M requests")


@pytest.mark.parametrize("name", ["paper-case-study", "two-regions"])
def test_every_table_header_carries_a_unit_or_is_unitless_by_name(seen, name):
    headers = seen[name].screen["headers"]
    assert len(headers) > 100
    assert without_units(headers) == []


def test_a_blank_page_is_seen_as_blank(tmp_path):
    """The blank check itself can fail: an empty page's screenshot is one colour."""
    page = tmp_path / "blank.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>x</title></head><body></body></html>")
    s = shot.inspect(page, width=400, height=300)
    assert shot.blank_fraction(s.png) == 1.0
    assert s.figures == [] and s.resources == []


def test_a_console_error_and_a_fetch_are_seen(tmp_path):
    """The other checks can fail too: a script error and an outside resource are both caught."""
    page = tmp_path / "bad.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>x</title>"
                    "<link rel='stylesheet' href='https://cdn.invalid/style.css'></head>"
                    "<body><script>console.error('broken')</script></body></html>")
    s = shot.inspect(page, width=400, height=300)
    assert any("broken" in m["message"] for m in s.console if m["level"] == "SEVERE")
    assert s.resources == ["https://cdn.invalid/style.css"]
