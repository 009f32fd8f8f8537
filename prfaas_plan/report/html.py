"""The report as one self-contained HTML page (``api.report`` computes what it shows).

Each command's tables come from its own view, collected rather than printed (``render.collect``),
so the page holds the numbers the terminal shows; each ``render.Table`` becomes a ``<table>``.
Figures are the plot functions' SVG, inlined (their element ids prefixed per figure, so that no
two figures share one). Nothing is fetched: no CDN, no font, no image file; the page's policy
(``Content-Security-Policy``) forbids any request, and its one script sorts tables.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from prfaas_plan.report import views, views_degrade, views_latency, views_plan, views_sim, views_size, views_topology
from prfaas_plan.report.html_figures import Figures
from prfaas_plan.report.html_glance import glance, provenance
from prfaas_plan.report.render import Table, collect
from prfaas_plan.report.report_data import ReportData


@dataclass
class Section:
    id: str
    title: str
    intro: list[str] = field(default_factory=list)
    blocks: list[dict[str, Any]] = field(default_factory=list)

    def add(self, items: list[Any]) -> None:
        """A command's items: each Table a table; consecutive lines of text one block, preformatted
        where the text output indents them."""
        lines: list[str] = []
        for item in [*items, None]:
            if isinstance(item, str):
                lines += item.splitlines() or [""]
                continue
            if any(ln.startswith(" ") for ln in lines):
                self.blocks.append({"kind": "pre", "text": "\n".join(lines).strip("\n")})
            else:
                self.blocks += [{"kind": "text", "text": ln} for ln in lines if ln.strip()]
            lines = []
            if isinstance(item, Table):
                self.blocks.append(_table(item))

    def figure(self, svg: str, caption: str) -> None:
        self.blocks.append({"kind": "figure", "svg": svg, "caption": caption})

    def note(self, text: str) -> None:
        self.blocks.append({"kind": "note", "text": text})


_NUMBER = re.compile(r"^[-+$]?\d")


def _numeric(cells: list[str]) -> bool:
    filled = [c for c in cells if c.strip() not in ("", "-")]
    return bool(filled) and sum(bool(_NUMBER.match(c.strip())) for c in filled) * 2 >= len(filled)


def _table(t: Table) -> dict[str, Any]:
    """A Table's cells with their alignment: the first column left, numbers right, other text left."""
    cols = len(t.columns)
    rows = [r + [""] * (cols - len(r)) for r in t.rows]
    align = ["r" if i not in t.left and _numeric([r[i] for r in rows]) else "l" for i in range(cols)]
    return {"kind": "table", "title": t.title, "columns": list(zip(t.columns, align, strict=True)),
            "rows": [list(zip(r, align, strict=True)) for r in rows], "caption": t.caption}


_DROP = (re.compile(r"<metadata>.*?</metadata>\s*", re.S), re.compile(r"<!--.*?-->\s*", re.S),
         re.compile(r'\s+xmlns(:\w+)?="[^"]*"'))


def inline_svg(svg: str, prefix: str) -> str:
    """matplotlib's SVG document as an element of the page: no prolog, metadata or comments, and
    every id (and reference to one) prefixed, since ids are unique across the whole page."""
    svg = svg[svg.index("<svg"):]
    for pattern in _DROP:
        svg = pattern.sub("", svg)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    return svg.replace("<svg", f'<svg role="img" aria-labelledby="{prefix}-caption"', 1)


class _Numbered:
    """Figures numbered in page order, their SVG from ``Figures`` (drawn ahead, or here)."""

    def __init__(self, figures: Figures) -> None:
        self.figures, self.count = figures, 0

    def __call__(self, section: Section, caption: str, key: str, draw: Any, *args: Any) -> None:
        self.count += 1
        prefix = f"fig{self.count}"
        section.figure(inline_svg(self.figures.svg(key, draw, *args), prefix), f"Figure {self.count}. {caption}")
        section.blocks[-1]["id"] = prefix


def sections(d: ReportData, figures: Figures | None = None) -> list[Section]:
    """The page's sections in order; ``figures``: SVG drawn ahead (``html_figures``), else drawn here."""
    from prfaas_plan.report import plots, plots_report, plots_sim, plots_size

    fig = _Numbered(figures if figures is not None else Figures(parallel=False))
    sc = d.scenario
    multi = sc.multi_site
    out = []

    s = Section("scenario", "Scenario at a glance")
    s.add(glance(d))
    if d.model is not None:
        s.intro.append(f"The model's KV story (`prfaas-plan model show {sc.model.name}`) and its KV throughput on "
                       f"the prefill instance (`prfaas-plan kv-rate`).")
        s.add(collect(views.emit_model, d.model))
        s.add(collect(views.emit_kv_rate, d.kv_rate))
    out.append(s)

    s = Section("plan", "The plan")
    s.intro.append("`prfaas-plan optimize`: the best threshold t and split, what binds, and the systems side by side.")
    s.add(collect(views_topology.emit_topology if multi else views_plan.emit_plan, d.plan, d.plan_payload))
    if d.figure5 is not None:
        fig(s, "The paper's Figure 5: (a) Lambda against N_p at the best t, (b) the two prefill bounds against t "
               "with their crossing.", "figure5", plots.figure5, d.figure5)
    if not multi:
        for sw in d.sweeps:
            s.blocks.append({"kind": "h3", "text": "Link sweep"})
            s.note(f"`sweep --set {sw.setting}`: the link bandwidth from 1/100 to 4x the scenario's, "
                   f"{len(sw.result['rows'])} log-spaced points, every other input held.")
            s.add(collect(views_plan.emit_sweep, sw.result))
            _sweep_figure(fig, s, sw, plots)
    out.append(s)

    s = Section("latency", "Latency")
    if d.latency is not None:
        s.intro.append(f"`prfaas-plan latency --load {d.latency_load:g}`: analytic TTFT at {d.latency_load:.0%} of "
                       "the smallest capacity among the systems (the rate `simulate` runs at by default).")
        if multi:
            s.add(collect(views_topology.emit_topology_latency, d.latency, d.latency_payload))
        else:
            s.add(collect(views_latency.emit_latency, d.latency, d.latency_payload))
    if d.cdf is not None and d.cdf.curves:
        fig(s, "Analytic TTFT CDF of each system at the latency table's rate (dotted: P50, P90, P99).",
            "cdf", plots_report.ttft_cdf_figure, d.cdf)
    if d.simulation is not None:
        n = "the whole trace" if d.simulation_requests is None else f"{d.simulation_requests:,} requests a system"
        s.blocks.append({"kind": "h3", "text": "Simulated"})
        s.note(f"`prfaas-plan simulate` at its defaults: load 0.8, {n}, seed 0.")
        if multi:
            s.add(collect(views_topology.emit_topology_sim, d.simulation, d.simulation_payload))
        else:
            s.add(collect(views_sim.emit_sim, d.simulation.result, d.simulation.payload))
            fig(s, "Simulated TTFT CDF of each system and the link's utilisation over time.",
                "simulation", plots_sim.sim_figure, d.simulation)
    elif d.latency is not None:
        s.note("The simulated TTFT (`prfaas-plan simulate`) is left out: add --simulate.")
    out.append(s)

    if multi:
        s = Section("topology", "Topology")
        s.intro.append(f"One prefill service ({sc.topology.prefill.name}) for {len(sc.topology.sites)} PD sites. "
                       "Per link, how the joint plan moves as that link's bandwidth varies (the others held).")
        for sw in d.sweeps:
            s.blocks.append({"kind": "h3", "text": f"Link {sw.link}"})
            s.note(f"`sweep --set {sw.setting}`: 1/100 to 4x the link's bandwidth, "
                   f"{len(sw.result['rows'])} log-spaced points.")
            s.add(collect(views_topology.emit_topology_sweep, sw.result))
            _sweep_figure(fig, s, sw, plots)
        out.append(s)
    s = Section("sizing", "Sizing")
    if d.sizing is not None:
        s.intro.append("`prfaas-plan size`: the cheapest fleet and link tiers for the scenario's sizing: section.")
        s.add(collect(views_size.emit_size, d.sizing, d.sizing_payload))
        fig(s, "Cost against demand, and the link-versus-GPU trade (or cost against the TTFT bound).",
            "sizing", plots_size.size_figure, d.sizing)
    elif sc.sizing is None:
        s.note("The cheapest fleet (`prfaas-plan size`) is left out: the scenario has no sizing: section (the demand, "
               "headroom, candidate instances and link tiers it weighs; see scenarios/paper-case-study.yaml).")
    out.append(s)  # the section is there even without its tables: the page says why (the notes below)
    if d.degrade is not None or d.notes.get("robustness"):
        s = Section("robustness", "Link robustness")
        if d.degrade is not None:
            s.intro.append("`prfaas-plan degrade`: each link at 50%, 10% and down, the plan held and re-planned.")
            s.add(collect(views_degrade.emit_degrade, d.degrade))
        ref = shlex.quote(sc.path or sc.name)
        s.note(f"The router's threshold table (`prfaas-plan thresholds {ref}`) is not run here: it takes tens of "
               "seconds.")
        out.append(s)

    s = Section("provenance", "Provenance")
    s.intro.append("Where every input comes from, and the command that reproduces this report.")
    s.add(provenance(d))
    out.append(s)
    for sec in out:
        for text in d.notes.get(sec.id, []) + (d.notes.get("sweep", []) if sec.id == "plan" else []):
            sec.note(text)
    return out


def _sweep_figure(fig: _Numbered, s: Section, sw: Any, plots: Any) -> None:
    if any(r["feasible"] for r in sw.result["rows"]):
        fig(s, f"Lambda_max and the best threshold t against the bandwidth of {sw.link} (circled: the link binds).",
            f"sweep:{sw.setting}", plots.sweep_figure, sw.result)


def render(d: ReportData, figures: Figures | None = None) -> str:
    """The page: a table of contents, then each section's tables, figures and notes."""
    sc = d.scenario
    return page(title=f"prfaas-plan report: {sc.name}", scenario=sc.name, model=sc.model.name, version=d.version,
                command=d.command, sections=sections(d, figures))


def page(*, title: str, scenario: str, model: str, version: str, command: str, sections: list[Section]) -> str:
    """The template filled: ``report`` and ``study-report`` share it."""
    import jinja2

    env = jinja2.Environment(loader=jinja2.PackageLoader("prfaas_plan.report", "templates"),
                             autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["ticks"] = _ticks
    return env.get_template("report.html.j2").render(title=title, scenario=scenario, model=model, version=version,
                                                     command=command, sections=sections)


def _ticks(text: str) -> Any:
    """Escaped text with `code spans` in ``<code>``."""
    from markupsafe import Markup, escape

    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))
