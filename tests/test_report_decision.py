"""The report decides (issue 23, part 4): its first screen is the answer with its reason, read from
the commands' own JSON; the page explains what would puzzle a reader (a cheapest plan that
offloads everything, two S_kv for one length), has a glossary, a trace section with --trace, names
the file and source of every GPU, model and profile, carries a unit in every table header, holds
no local path, and two runs write the same bytes."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan import units
from prfaas_plan.cli import app
from prfaas_plan.report.glossary import GLOSSARY
from tests.conftest import ROOT
from tests.report_units import without_units

pytestmark = pytest.mark.slow  # each page is a report run
runner = CliRunner()
TRACE = "tests/fixtures/traces/mooncake_synthetic_trace.jsonl"


def _write(folder: Path, *args: str) -> str:
    """The report of ``args`` written as ``report.html`` from inside ``folder`` (a relative -o, as a
    user types it), so the page's reproduce line names no local path."""
    here = Path.cwd()
    trace = [str(ROOT / a) if a == TRACE else a for a in args]
    os.chdir(folder)
    try:
        res = runner.invoke(app, ["report", *trace, "-o", "report.html"])
    finally:
        os.chdir(here)
    assert res.exit_code == 0, res.output
    return (folder / "report.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("case"))


@pytest.fixture(scope="module")
def regions(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("regions"), "two-regions")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("trace"), "--trace", TRACE)


def _json(*args: str) -> dict:
    res = runner.invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _text(fragment: str) -> str:
    from html import unescape

    return " ".join(unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def first_screen(html: str) -> dict[str, str]:
    """The decision's rows, key -> text; the decision is the page's first section."""
    assert re.findall(r'<section id="([^"]+)"', html)[0] == "decision"
    body = html[html.index('<section id="decision"'):]
    body = body[:body.index("</section>")]
    return {k: _text(v) for k, v in re.findall(r'<dd data-key="([^"]+)">(.*?)</dd>', body, re.S)}


def section(html: str, sid: str) -> str:
    body = html[html.index(f'<section id="{sid}"'):]
    return body[:body.index("</section>")]


def headers(html: str) -> list[str]:
    return [_text(h) for h in re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)]


def test_the_first_screen_holds_the_plan_its_gains_and_cost(case):
    rows = first_screen(case)
    plan = _json("optimize")
    best, ratios = plan["best"], plan["ratios"]
    assert rows["t"].startswith(f"{units.format_threshold(best['threshold_tokens'])} tokens")  # 19,194
    assert f"the {best['p_offload'] * 100:.1f}% of requests longer than it" in rows["t"]
    assert rows["split"].startswith(f"{best['n_prfaas']} / {best['n_p']} / {best['n_d']}")  # 4 / 3 / 5
    assert rows["lambda"].startswith(f"{best['lambda_max_rps']:.3f} req/s")  # 3.300
    assert "P10-P90 a point" in rows["lambda"]  # measured prefill, pinned decode
    assert rows["gain"].startswith(f"{ratios['prfaas_vs_homogeneous']:.2f}x homogeneous PD")  # 1.56x
    naive = plan["baselines"]["naive_heterogeneous"]["lambda_max_rps"]
    assert f"{best['lambda_max_rps'] / naive:.2f}x naive heterogeneous PD" in rows["gain"]
    assert rows["cost"].startswith(f"${best['cost_per_million_requests']:,.0f} per 1M requests")  # $21,547
    assert f"the fleet costs ${best['price_per_hour']:,.2f}/h" in rows["cost"]
    assert "balanced (Eq. 7)" in rows["binds"] and "12.45 Gbps" in rows["binds"]
    assert {"buy", "risk"} <= set(rows)
    degrade = _json("degrade")["links"]["prfaas->local"]
    assert f"survives it up to {degrade['failure']['survivable_load'] * 100:.1f}% load" in rows["risk"]


def test_two_regions_first_screen_is_per_site(regions):
    rows = first_screen(regions)
    plan = _json("optimize", "two-regions")
    best = plan["best"]
    pd = {name: s for name, s in best["sites"].items() if s["role"] == "pd"}
    assert sorted(pd) == ["region-a", "region-b"]
    for name, s in pd.items():
        assert f"{name} {units.format_threshold(s['threshold_tokens'])} tokens" in rows["t"]
        assert f"{name} N_p / N_d {s['n_p']} / {s['n_d']}" in rows["split"]
    assert rows["lambda"].startswith(f"{best['lambda_max_rps']:.3f} req/s in total")
    assert "x independent planning" in rows["gain"]
    assert "5 x 8xB200 (prefill service)" in rows["buy"]  # what the cheapest plan buys


def test_a_plan_that_offloads_everything_says_so_why_and_what_splits(case):
    buy = first_screen(case)["buy"]
    size = _json("size")
    best = size["best"]
    assert all(s["p_offload"] == 1.0 for s in best["sites"].values())
    assert "It offloads every request: it is naive heterogeneous PD." in buy
    assert "on 8xH200" in buy and "$32.00/h" in buy and "on 8xH20" in buy and "$16.00/h" in buy  # the prices
    spent = float(re.search(r"splits the traffic \(.*?\) costs \$([\d,.]+)/h", buy).group(1).replace(",", ""))
    assert spent > best["cost"]["per_hour"]
    # no plan that splits at one link tier is cheaper than the cheapest plan that splits at any tier
    split_tiers = [t["plan"]["cost"]["per_hour"] for t in size["link_tiers"] if t.get("plan")
                   and all(0 < s["p_offload"] < 1 for s in t["plan"]["sites"].values())]
    assert split_tiers and spent <= min(split_tiers) + 1e-9
    assert "sizing minimises what a fleet costs" in buy


def test_two_s_kv_for_one_length_are_explained(case):
    model = _json("model", "show", "internal-1t")
    kv = _json("kv-rate", "internal-1t", "--stack", "paper-table3")
    arch = {s["length_tokens"]: s["kv_bytes"] for s in model["s_kv"]}
    worst = max(kv["rows"], key=lambda r: abs(arch[r["length_tokens"]] / r["kv_bytes"] - 1))
    note = _text(section(case, "scenario"))
    assert "Two S_kv for one length" in note
    assert f"{arch[worst['length_tokens']] / 2**20:,.1f} MiB" in note  # 713.3, the architecture's at 32K
    assert f"{worst['kv_bytes'] / 2**20:,.1f} MiB" in note  # 701.3, Table 5's


def test_the_glossary_is_on_the_page_and_in_the_docs(case):
    docs = (ROOT / "docs" / "model.md").read_text()
    symbols = docs[docs.index("## Symbols"):]
    symbols = symbols[:symbols.index("\n## ", 3)]
    page = _text(section(case, "glossary"))
    for symbol, meaning, _ in GLOSSARY:
        assert f"| {symbol} |" in symbols, symbol
        assert f"{symbol} {meaning.split(',')[0]}" in page, symbol


def test_provenance_names_every_gpu_model_and_profile(regions, case):
    table = _text(section(regions, "provenance"))
    for kind, name, file in (("GPU", "B200", "hardware/B200.yaml"), ("GPU", "H200", "hardware/H200.yaml"),
                             ("GPU", "H20", "hardware/H20.yaml"), ("model", "internal-1t", "models/internal-1t.yaml"),
                             ("serving stack", "paper-table3", "stacks/paper-table3.yaml")):
        assert f"{kind} {name} {file} (bundled with prfaas-plan)" in table, name
    assert "https://www.nvidia.com/en-us/data-center/hgx/" in table  # B200's datasheet, bought by the plan
    assert "bought by the cheapest plan" in table
    assert "measured profile 8xH20 scenarios/paper-case-study.yaml" in _text(section(case, "provenance"))


def test_every_table_header_names_its_unit(case, regions, traced):
    for html in (case, regions, traced):
        assert without_units(headers(html)) == []
    assert without_units(["threshold", "mean input", "bound s", "PrfaaS busy"]) == ["PrfaaS busy", "mean input",
                                                                                    "threshold"]  # it can fail


def test_the_docs_the_page_cites_exist(case, regions, traced):
    from tests.test_doc_links import broken, outside

    for html in (case, regions, traced):
        assert "docs/model.md#symbols" in html
        assert broken(html) == [] and outside(html) == []


def test_the_page_holds_no_local_path(case, regions, traced):
    for html in (case, regions):
        assert str(ROOT) not in html and "/tmp/" not in html
        assert "scenarios/" in html and "(bundled with prfaas-plan)" in html
        assert "-o report.html" in html
    assert str(ROOT) not in traced.replace(str(ROOT / TRACE), "")  # the one path is the trace the user named


def test_the_trace_section(traced):
    assert re.findall(r'<section id="([^"]+)"', traced).index("trace") == 4  # after the latency
    stats = _json("trace", "stats", TRACE)
    text = _text(section(traced, "trace"))
    assert f"mean rate {stats['mean_rate_rps']:.3f} req/s" in text  # 3.906
    assert "span 17.03 min" in text and "peak-to-mean" in text and "hit rate %" in text
    assert f"{stats['prefix_reuse']['hit_rate_unbounded'] * 100:.1f}%" in text  # 65.1%
    assert "Figure 4. The trace" in text and "What the planner takes from the trace" in text


def test_figures_label_their_lines_and_write_money_as_money(case):
    cdf = next(f for f in re.findall(r"<figure.*?</figure>", case, re.S) if "TTFT CDF" in f)
    for q in ("P50", "P90", "P99"):
        assert f">{q}<" in cdf, q  # each quantile line is labelled where it is drawn
    sizing = section(case, "sizing")
    ticks = re.findall(r">(\$[\d,]+(?:\.\d+)?)<", sizing)
    assert "$1,000" in ticks and "$320" in ticks, ticks
    assert "10^" not in sizing and "\\times" not in sizing and "e+0" not in sizing


def test_two_runs_give_the_same_bytes(tmp_path):
    for args in ((), ("--trace", TRACE)):
        a, b = tmp_path / f"a{len(args)}", tmp_path / f"b{len(args)}"
        a.mkdir(), b.mkdir()
        _write(a, *args), _write(b, *args)
        assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir()) == ["report.html"]
        for p in a.iterdir():
            assert p.read_bytes() == (b / p.name).read_bytes(), p.name
