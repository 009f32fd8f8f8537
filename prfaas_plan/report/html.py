"""The report as one self-contained HTML page (``api.report`` computes what it shows).

The page opens with the decision (``html_decision``), then the evidence: each command's tables,
collected from its own view rather than printed (``render.collect``), so the page holds the
numbers the terminal shows (``html_sections``). Figures are the plot functions' SVG, inlined (their
element ids prefixed per figure, so that no two figures share one). Nothing is fetched: no CDN, no
font, no image file; the page's policy (``Content-Security-Policy``) forbids any request, and its
one script sorts tables. The same inputs give the same bytes: no date, no timing, no local path.
"""

from __future__ import annotations

import re
from typing import Any

from prfaas_plan.report.html_blocks import Section, inline_svg
from prfaas_plan.report.html_figures import Figures
from prfaas_plan.report.html_sections import sections
from prfaas_plan.report.report_data import ReportData

__all__ = ["Section", "inline_svg", "page", "render", "sections"]


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
