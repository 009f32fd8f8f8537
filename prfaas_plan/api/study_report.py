"""Library API of `study-report`: a finished study's rows cut into the frontiers a reader wants.

The axes are the columns between ``point`` and ``status``; axes whose values move together
(a zipped group: prefill and local hardware) read as one, and one that repeats another is dropped.
Lines of the gain figure are the combinations of the categorical axes left after the panels take
the model (columns) and, when two or more axes remain, the next with at most 4 values (rows);
beyond 8 lines per panel, the last axes are folded: each line takes its best over them, and the
figure says which.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prfaas_plan.api import study_rows
from prfaas_plan.errors import SpecError
from prfaas_plan.io import study_results
from prfaas_plan.report.figures_study import Breakeven, Panel, Series, StudyFigures
from prfaas_plan.report.views_study import axis_name

MAX_LINES = 8
PAYS = 1e-3  # PrfaaS-PD pays where it serves more than 0.1% above homogeneous PD (equal is not paying)


@dataclass(frozen=True, slots=True, kw_only=True)
class StudyReport:
    source: str
    command: str
    rows: list[dict[str, Any]]
    axes: tuple[str, ...]
    counts: dict[str, int]  # by status
    figures: StudyFigures


def _axes(rows: list[dict[str, Any]]) -> list[str]:
    cols = list(rows[0])
    return [c for c in cols[1:cols.index("status")] if not c.endswith(".si")]


def _merged(rows: list[dict[str, Any]], keys: list[str]) -> list[tuple[str, ...]]:
    """Categorical axes grouped: those whose values determine each other are one group (zipped);
    a later axis equal to an earlier one of its group is dropped from the label."""
    groups: list[list[str]] = []
    for k in keys:
        for g in groups:
            pairs = {(r[g[0]], r[k]) for r in rows}
            if len(pairs) == len({a for a, _ in pairs}) == len({b for _, b in pairs}):
                if not any(all(r[k] == r[j] for r in rows) for j in g):
                    g.append(k)
                break
        else:
            groups.append([k])
    return [tuple(g) for g in groups]


def _label(r: dict[str, Any], group: tuple[str, ...]) -> str:
    return " / ".join(f"{axis_name(k)} {r[k]}".strip() for k in group)


def _name(group: tuple[str, ...]) -> str:
    return " / ".join(group)


def figures(rows: list[dict[str, Any]], command: str, title: str) -> StudyFigures:
    ok = [r for r in rows if r["status"] == "ok"]
    axes = _axes(rows)
    x_key = next((a for a in axes if a.endswith("bandwidth") and f"{a}.si" in rows[0]), None)
    cats = [a for a in axes if a != x_key]
    groups = _merged(rows, cats)
    col_g = next((g for g in groups if "model" in g), None)
    rest = [g for g in groups if g is not col_g]
    # a row of panels per value of the next short axis, when another axis is left for the lines
    row_g = next((g for g in rest if 1 < len({_label(r, g) for r in rows}) <= 4), None) if len(rest) > 1 else None
    lines = [g for g in rest if g is not row_g]
    folded: list[tuple[str, ...]] = []
    while lines and len({tuple(_label(r, g) for g in lines) for r in rows}) > MAX_LINES:
        folded.insert(0, lines.pop())

    def key(r: dict[str, Any], g: tuple[str, ...] | None) -> str:
        return _label(r, g) if g else ""

    columns = tuple(dict.fromkeys(key(r, col_g) for r in rows))
    prow = tuple(dict.fromkeys(key(r, row_g) for r in rows))
    gain: list[tuple[Panel, ...]] = []
    breakeven: list[Breakeven] = []
    for rv in prow:
        panels = []
        for cv in columns:
            best: dict[str, dict[float, float]] = defaultdict(dict)
            for r in ok:
                if key(r, row_g) != rv or key(r, col_g) != cv or x_key is None:
                    continue
                g, x = r.get("prfaas_vs_homogeneous"), r.get(f"{x_key}.si")
                if g is None or x is None:  # no gain, or a bandwidth without a number (a law)
                    continue
                label = " · ".join(_label(r, lg) for lg in lines) or "all"
                best[label][x] = max(g, best[label].get(x, g))
            series = tuple(Series(label=lb, x=tuple(sorted(pts)), y=tuple(pts[x] for x in sorted(pts)))
                           for lb, pts in best.items())
            panel_title = ", ".join(t for t in (cv, rv) if t) or title
            panels.append(Panel(title=panel_title, series=series))
            for s in series:
                pays = [x for x, y in zip(s.x, s.y, strict=True) if y > 1.0 + PAYS]
                i = max(range(len(s.y)), key=lambda j: s.y[j])
                breakeven.append(Breakeven(panel=panel_title, label=s.label,
                                           from_bytes_per_s=min(pays) if pays else None,
                                           always=bool(pays) and min(pays) == s.x[0], best_gain=s.y[i],
                                           best_at_bytes_per_s=s.x[i]))
        gain.append(tuple(panels))

    cost: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    xk, yk = ("demand_rps", "cost_per_hour") if command == "size" else ("lambda_max_rps", "cost_per_million_requests")
    for r in ok:
        if r.get(xk) is None or r.get(yk) is None:
            continue
        label = " · ".join(_label(r, g) for g in groups if g is not col_g and g is not row_g
                           and g not in folded) or "all"
        cost[label][0].append(float(r[xk]))
        cost[label][1].append(float(r[yk]))
    return StudyFigures(
        title=title, x_key=x_key, columns=columns, rows=prow, gain=tuple(gain),
        aggregated=tuple(_name(g) for g in folded),
        cost_x_label="demand (req/s)" if command == "size" else "Lambda_max (req/s)",
        cost_y_label="cost ($/h)" if command == "size" else "cost ($ per million requests)",
        cost=tuple(Series(label=k, x=tuple(v[0]), y=tuple(v[1])) for k, v in cost.items()),
        breakeven=tuple(breakeven))


def study_report(path: Path) -> StudyReport:
    kinds = {k: t for cols in study_rows.COLUMNS.values() for k, t in cols}
    rows = study_results.read(path, kinds)
    if not rows:
        raise SpecError("the study's results hold no rows", source=str(path))
    cols = set(rows[0])
    command = "size" if "cost_per_hour" in cols else "optimize" if "lambda_max_rps" in cols else \
        "simulate" if "throughput_rps" in cols else "latency"
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "infeasible", "error")}
    return StudyReport(source=str(path), command=command, rows=rows, axes=tuple(_axes(rows)), counts=counts,
                       figures=figures(rows, command, Path(path).name))
