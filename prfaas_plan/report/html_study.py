"""`study-report` as one self-contained HTML page, on the report's template (``html.page``)."""

from __future__ import annotations

from typing import Any

from prfaas_plan.report.html import Section, inline_svg, page
from prfaas_plan.report.render import collect, table
from prfaas_plan.report.views_study import emit_study_report

MAX_ROWS = 500  # rows of the points table; a larger study's rows are in its Parquet file


def _points(r: Any) -> Any:
    cols = [c for c in r.rows[0] if not c.endswith(".si") and c != "error"]
    rows = [[("-" if row[c] is None else f"{row[c]:.4g}" if isinstance(row[c], float) else str(row[c]))
             for c in cols] for row in r.rows[:MAX_ROWS]]
    more = len(r.rows) - MAX_ROWS
    return table(f"The points{f' (the first {MAX_ROWS:,})' if more > 0 else ''}", cols, rows,
                 caption=f"{more:,} more rows are in the results file." if more > 0 else None)


def render(r: Any, command: str, version: str) -> str:
    from prfaas_plan.report import plots_study
    from prfaas_plan.report.plots import to_svg

    f = r.figures
    items = collect(emit_study_report, r)
    count = 0

    def fig(s: Section, caption: str, draw: Any) -> None:
        nonlocal count
        count += 1
        prefix = f"fig{count}"
        s.figure(inline_svg(to_svg(draw, f), prefix), f"Figure {count}. {caption}")
        s.blocks[-1]["id"] = prefix

    out = []
    s = Section("study", "The study")
    s.intro.append(f"`{command}`: {len(r.rows):,} points of `{r.command}` read from {r.source}.")
    s.add(items[:1])
    out.append(s)
    s = Section("gain", "Gain over homogeneous PD")
    if f.x_key is not None and any(p.series for row in f.gain for p in row):
        s.intro.append("Lambda_max of PrfaaS-PD over that of homogeneous PD on the local GPU, against the link's "
                       "bandwidth: above 1, offloading the long prefills pays.")
        fig(s, "Gain over homogeneous PD against bandwidth"
               + (f" (each line its best over {', '.join(f.aggregated)})" if f.aggregated else "") + ".",
            plots_study.gain_figure)
        fig(s, "Where PrfaaS-PD stops paying: the lowest bandwidth at which it serves more than homogeneous PD.",
            plots_study.breakeven_figure)
        s.add(items[1:2])
    else:
        s.note("The study has no bandwidth axis or no gain over homogeneous PD to plot.")
    out.append(s)
    s = Section("cost", "Cost")
    if any(se.x for se in f.cost):
        fig(s, f"{f.cost_y_label} against {f.cost_x_label}, every feasible point.", plots_study.cost_figure)
    s.add(items[2:])
    out.append(s)
    s = Section("points", "Points")
    s.add([_points(r)])
    out.append(s)
    models = sorted({str(row["model"]) for row in r.rows if row.get("model") is not None}) or ["the scenario's"]
    return page(title=f"prfaas-plan study report: {r.source}", scenario=r.source, model=", ".join(models),
                version=version, command=command, sections=out)
