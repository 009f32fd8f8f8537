"""`prfaas-plan report`: one self-contained HTML page holding the commands' own tables and figures.

The page is read back with the standard library's html.parser: it fetches nothing, every table a
command prints for the scenario is in it cell by cell, each scenario feature has its section, the
provenance names the inputs and the command that reproduces it, and user strings are escaped.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

from prfaas_plan import __version__
from prfaas_plan.cli import app
from prfaas_plan.report import render
from tests.test_cli_errors import error_line

runner = CliRunner()
VOID = {"meta", "link", "br", "img", "hr", "input", "wbr", "col", "source", "area", "base", "embed", "track"}
SVG_VOID_OK = {"path", "use", "rect", "circle", "line", "polyline", "polygon", "stop", "ellipse"}


class Page(HTMLParser):
    """Tags, attributes, text, tables (cells per row), figures and sections of one report."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.attrs: list[tuple[str, str, str]] = []  # (tag, attribute, value)
        self.ids: list[str] = []
        self.text: list[str] = []
        self.cells: list[str] = []  # every th / td text
        self.scripts: list[str] = []
        self.figures: list[dict] = []
        self.sections: list[str] = []
        self.errors: list[str] = []
        self._cell: list[str] | None = None
        self._in: dict[str, int] = {}
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
            if k == "id":
                self.ids.append(v)
        if tag == "section":
            self.sections.append(dict(attrs)["id"])
        if tag == "figure":
            self.figures.append({"svg": 0, "caption": "", "viewBox": False})
        if tag == "svg" and self.figures:
            self.figures[-1]["svg"] += 1
            self.figures[-1]["viewBox"] = "viewbox" in dict(attrs)
        if tag in ("td", "th"):
            self._cell = []
        self._in[tag] = self._in.get(tag, 0) + 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        for k, v in attrs:
            self.attrs.append((tag, k, v or ""))
            if k == "id":
                self.ids.append(v)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes <{self.stack[-1] if self.stack else None}>")
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()
        self._in[tag] -= 1
        if tag in ("td", "th") and self._cell is not None:
            self.cells.append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data):
        if self._in.get("script"):
            self.scripts.append(data)
            return
        if self._in.get("style"):
            return
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)
        if self._in.get("figcaption") and self.figures:
            self.figures[-1]["caption"] += data

    @property
    def plain(self) -> str:
        return " ".join(" ".join(self.text).split())


def _report(tmp: Path, *args: str, name: str = "report.html") -> tuple[str, Page, Path]:
    out = tmp / name
    res = runner.invoke(app, ["report", *args, "-o", str(out)])
    assert res.exit_code == 0, res.output
    assert res.stdout == ""  # the page goes to the file; stderr says where
    html = out.read_text(encoding="utf-8")
    return html, Page(html), out


@pytest.fixture(scope="module")
def case(tmp_path_factory):
    return _report(tmp_path_factory.mktemp("case"))


@pytest.fixture(scope="module")
def regions(tmp_path_factory):
    return _report(tmp_path_factory.mktemp("regions"), "two-regions")


def _stdout(*args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


TIMING = re.compile(r"\bin \d+\.\d+ s$")  # how long a search took: differs between runs


def _cells(text: str) -> list[str]:
    """Every cell and line of a command's text output (table cells are 2+ spaces apart), but timings."""
    out = []
    for line in text.splitlines():
        if not line.strip() or set(line.strip()) == {"-"}:
            continue
        out += [" ".join(c.split()) for c in re.split(r"\s{2,}", line.strip()) if c.strip()]
    return [c for c in out if not TIMING.search(c)]


@pytest.mark.slow
def test_the_page_parses_and_is_well_formed(case, regions):
    for _, page, _ in (case, regions):
        assert page.errors == [] and page.stack == []
        assert len(page.ids) == len(set(page.ids))  # figures' SVG ids are prefixed per figure
        assert len(page.scripts) == 1  # ours: the table sorting


@pytest.mark.slow
@pytest.mark.parametrize("which", ["case", "regions"])
def test_nothing_is_fetched(which, request):
    html, page, _ = request.getfixturevalue(which)
    refs = [(t, k, v) for t, k, v in page.attrs if k in ("src", "href", "xlink:href", "srcset", "action", "data")]
    assert all(v.startswith(("#", "data:")) for _, _, v in refs), refs
    assert not re.search(r"(src|href)\s*=\s*[\"']?\s*(https?:)?//", html)
    assert "@import" not in html and "url(http" not in html and "<iframe" not in html
    csp = [v for t, k, v in page.attrs if t == "meta" and k == "content" and "default-src 'none'" in v]
    assert csp  # and the browser is told to fetch nothing


@pytest.mark.slow
def test_every_figure_is_an_inline_svg_with_a_caption(case, regions):
    for _, page, _ in (case, regions):
        assert len(page.figures) >= 3
        for f in page.figures:
            assert f["svg"] == 1 and f["viewBox"] and f["caption"].startswith("Figure "), f
    assert len(case[1].figures) == 4  # Figure 5, the link sweep, the TTFT CDF, sizing
    assert len(regions[1].figures) == 4  # the TTFT CDF, a sweep per link, sizing


def test_sections_follow_the_scenario(case, regions):
    assert case[1].sections == ["decision", "scenario", "plan", "latency", "sizing", "robustness", "glossary",
                                "provenance"]
    assert regions[1].sections == ["decision", "scenario", "plan", "latency", "topology", "sizing", "robustness",
                                   "glossary", "provenance"]
    for html, _, _ in (case, regions):
        for sid in re.findall(r'<section id="([^"]+)"', html):
            assert f'href="#{sid}"' in html  # the table of contents links each one


# the commands whose tables the case-study report holds, with the options the report runs them at
CASE_COMMANDS = [
    ["optimize"],
    ["sweep", "--set", "link.bandwidth=1Gbps..400Gbps:12:log"],
    ["latency", "--load", "0.8"],
    ["size"],
    ["degrade"],
    ["model", "show", "internal-1t"],
    # the page's kv-rate is on the scenario's serving stack
    ["kv-rate", "internal-1t", "--hardware", "H200", "--gpus", "8", "--instances", "4", "--stack", "paper-table3"],
]


@pytest.mark.slow
@pytest.mark.parametrize("command", CASE_COMMANDS, ids=" ".join)
def test_the_case_study_holds_every_table_the_commands_print(case, command):
    _, page, _ = case
    cells, plain = set(page.cells), page.plain
    missing = [c for c in _cells(_stdout(*command)) if c not in cells and c not in plain]
    assert missing == []


REGION_COMMANDS = [
    ["optimize", "two-regions"],
    ["sweep", "two-regions", "--set", "links[1].bandwidth=0.2Gbps..80Gbps:12:log"],
    ["latency", "two-regions", "--load", "0.8"],
    ["degrade", "two-regions"],
]


@pytest.mark.slow
@pytest.mark.parametrize("command", REGION_COMMANDS, ids=" ".join)
def test_two_regions_holds_the_per_site_tables(regions, command):
    _, page, _ = regions
    cells, plain = set(page.cells), page.plain
    assert [c for c in _cells(_stdout(*command)) if c not in cells and c not in plain] == []


def test_the_headline_numbers_are_the_json_ones(case):
    _, page, _ = case
    plan = json.loads(_stdout("optimize", "--format", "json"))
    best = plan["best"]
    assert f"{best['lambda_max_rps']:.3f} req/s" in page.cells
    assert f"{best['n_prfaas']} / {best['n_p']} / {best['n_d']}" in page.cells
    size = json.loads(_stdout("size", "--format", "json"))
    assert f"${size['best']['cost']['per_hour']:,.2f}" in page.plain


@pytest.mark.slow
def test_provenance_names_the_inputs_and_the_command(case, tmp_path):
    _, page, out = case
    for row in ("scenario file", "model", "GPU H200 datasheet", "GPU H20 efficiency", "prefill 8xH200",
                "prefill 8xH20", "decode", "prfaas-plan version", "reproduce with"):
        assert row in page.cells, row
    assert __version__ in page.cells
    assert "paper-case-study.yaml" in page.plain
    assert f"prfaas-plan report -o {shlex.quote(str(out))}" in page.cells
    # the command is shell-quoted as given, and running it writes the same tables
    again = tmp_path / "again.html"
    first, page2, _ = _report(tmp_path, "--set", "link.bandwidth=50Gbps", "--method", "exact", name="again.html")
    cmd = next(c for c in page2.cells if c.startswith("prfaas-plan report "))
    argv = shlex.split(cmd)
    assert argv[2:] == ["--set", "link.bandwidth=50Gbps", "--method", "exact", "-o", str(again)]
    res = runner.invoke(app, argv[1:])
    assert res.exit_code == 0, res.output
    def untimed(html: str) -> str:  # size says how long its solve took
        return re.sub(r"in \d+\.\d+ s<", "in - s<", html)

    assert untimed(again.read_text(encoding="utf-8")) == untimed(first)  # no date, no random id


@pytest.mark.slow
def test_user_strings_are_escaped(tmp_path):
    evil = "<script>alert(1)</script>"
    html, page, _ = _report(tmp_path, "--set", f"name={evil}", "--set", "slo.ttft=8s")
    assert evil not in html
    assert len(page.scripts) == 1 and "alert" not in page.scripts[0]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert any(evil in c for c in page.cells)  # shown as text, in the scenario table and the command


@pytest.mark.slow
def test_simulate_adds_the_simulated_section(tmp_path):
    _, page, _ = _report(tmp_path, "--simulate", "--set", "workload.output_tokens=256")
    assert "simulated TTFT at" in page.plain
    assert any(c == "Throughput" for c in page.text) or "Throughput" in page.plain
    assert len(page.figures) == 5  # and its CDF / link-utilisation figure
    assert "--simulate" in next(c for c in page.cells if c.startswith("prfaas-plan report "))


def test_without_simulate_the_page_says_how_to_add_it(case):
    assert "add --simulate" in case[1].plain
    assert "simulated TTFT at" not in case[1].plain


@pytest.mark.parametrize(("args", "named"), [
    (["-o", "/nonexistent-folder/r.html"], "--output"),
    (["-o", "report.txt"], "--output"),
    (["--set", "link.bandwidth=fast", "-o", "r.html"], "--set link.bandwidth"),
    (["--set", "nosuch.key=1", "-o", "r.html"], "--set nosuch"),
    (["--method", "best", "-o", "r.html"], "--method"),
    (["missing-scenario.yaml", "-o", "r.html"], "missing-scenario.yaml"),
])
def test_bad_input_is_one_line_and_exit_2(args, named, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert named in error_line("report", *args)
    assert not (tmp_path / "r.html").exists()


def test_the_output_must_be_html_and_is_required():
    assert ".html" in error_line("report", "-o", "report.pdf")
    res = subprocess.run([sys.executable, "-m", "prfaas_plan", "report"], capture_output=True, text=True)
    assert res.returncode == 2 and res.stdout == ""
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith("error: Missing option '--output' / '-o'.")


def test_collect_prints_nothing_and_keeps_the_items(capsys):
    from prfaas_plan.io.load import Catalog, load_stack
    from prfaas_plan.report import views
    from prfaas_plan.specs.kv_rate import KvRateResult, KvRateRow, TimeSource

    row = KvRateRow(length_tokens=1024, kv_bytes=2**20, prefill_s=0.5, prefill_s_p10=0.4, prefill_s_p90=0.65,
                    kv_bytes_per_s=2**20 / 0.5, kv_bytes_per_s_p10=2**20 / 0.65, kv_bytes_per_s_p90=2**20 / 0.4,
                    source="analytic", basis="analytic", beyond_context=False, kv_source="kv engine",
                    egress_bytes_per_s=None)
    r = KvRateResult(model="m", instance="8xH200", instances=None, kv_dtype="bf16", state_dtype="fp32",
                     sources=(TimeSource(source="analytic", detail="d"),),
                     stack=load_stack("paper-table3", Catalog.default()), rows=(row,))
    items = render.collect(views.emit_kv_rate, r)
    assert capsys.readouterr().out == ""
    assert [type(i) for i in items] == [render.Table] and items[0].rows[0][:2] == ["1K", "1.0"]
    views.emit_kv_rate("table", r)  # and outside collect the text is as it always was
    assert capsys.readouterr().out == str(items[0]) + "\n"


def test_help_has_the_example():
    res = runner.invoke(app, ["report", "--help"])
    assert res.exit_code == 0
    assert "Example: prfaas-plan report -o report.html" in res.stdout


@pytest.mark.slow
def test_a_trace_in_another_format_reaches_the_page_and_its_command(tmp_path):
    out = tmp_path / "r.html"
    trace = "tests/fixtures/traces/burstgpt.csv"
    res = runner.invoke(app, ["report", "--trace", trace, "--trace-format", "burstgpt", "--model-filter", "GPT-4",
                              "-o", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert f"{Path(trace).resolve()} (format burstgpt, model filter GPT-4)" in text or \
        f"{trace} (format burstgpt, model filter GPT-4)" in text
    assert shlex.join(["--trace-format", "burstgpt", "--model-filter", "GPT-4"]) in text
    bad = runner.invoke(app, ["report", "--trace", trace, "--trace-format", "parquet", "-o", str(out)])
    assert bad.exit_code == 2 and "--trace-format" in bad.output
