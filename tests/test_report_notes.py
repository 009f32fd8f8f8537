"""A report says in the page, in the user's terms, why a section is absent (issue 26): the sizing
section is there without its tables, with the reason (no sizing: section, or no fleet serves the
demand), and a reason never names an option the report passed itself."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from prfaas_plan.api.report import left_out
from prfaas_plan.cli import app
from prfaas_plan.errors import InfeasibleError, SpecError

runner = CliRunner()


def _sizing_text(tmp_path, *args: str) -> tuple[list[str], str]:
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", *args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    html = out.read_text()
    sections = re.findall(r'<section id="([^"]+)"', html)
    body = html[html.index('<section id="sizing"'):]
    body = body[:body.index("</section>")]
    return sections, re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


@pytest.mark.slow
def test_no_sizing_section_says_so(tmp_path):
    sections, text = _sizing_text(tmp_path, "qwen35-b200-h200")
    assert sections == ["decision", "scenario", "plan", "latency", "sizing", "robustness", "glossary", "provenance"]
    assert "The cheapest fleet ( prfaas-plan size ) is left out: the scenario has no sizing: section" in text
    html = (tmp_path / "r.html").read_text()
    buy = re.search(r'<dd data-key="buy">(.*?)</dd>', html, re.S).group(1)
    assert buy.startswith("not sized here: the scenario has no sizing: section")  # the first screen says so too


@pytest.mark.slow
def test_an_infeasible_sizing_says_why_in_the_page(tmp_path):
    _, text = _sizing_text(tmp_path, "--set", "sizing.prfaas.gpus_per_instance=[1]")
    assert ("The cheapest fleet ( prfaas-plan size ) is left out: no plan meets the constraints: prefill service: "
            "no candidate holds the model (1xH200 cannot hold internal-1t") in text
    assert "size: size:" not in text
    buy = re.search(r'<dd data-key="buy">(.*?)</dd>', (tmp_path / "r.html").read_text(), re.S).group(1)
    assert buy.startswith("not sized here: The cheapest fleet (<code>prfaas-plan size</code>) is left out: no plan "
                          "meets the constraints: prefill service: no candidate holds the model")


@pytest.mark.parametrize(("exc", "given", "note"), [
    (SpecError("'1e-322Gbps' is below the smallest normal float", field="--levels link.bandwidth"), [],
     "X is left out: an input it refuses: link.bandwidth: '1e-322Gbps' is below the smallest normal float"),
    (SpecError("given twice (a mapping, then '50Gbps')", field="--set link.bandwidth"), [],
     "X is left out: an input it refuses: link.bandwidth: given twice (a mapping, then '50Gbps')"),
    (SpecError("must be positive", field="--set link.rtt"), ["link.rtt=-1s"],
     "X is left out: an input it refuses: --set link.rtt: must be positive"),
    (InfeasibleError("size: local: needs 9 instances"), [],
     "X is left out: no plan meets the constraints: local: needs 9 instances"),
])
def test_a_reason_names_only_what_the_user_gave(exc, given, note):
    assert left_out("X", exc, given) == note
