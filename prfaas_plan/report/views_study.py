"""`study-report` in the terminal and in HTML: the study's outcome, where PrfaaS-PD stops paying, and
each model's best points. The HTML page (``html_study``) shows these tables beside the figures."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from prfaas_plan import units
from prfaas_plan.report.render import emit, num, table
from prfaas_plan.report.study_json import breakeven_rows, study_report_json


def axis_name(key: str) -> str:
    """How a label names an axis: the cluster or site for its hardware or instances
    (clusters.prfaas.hardware -> prfaas), nothing for a name that says itself (a model, a workload)."""
    parts = key.split(".")
    if len(parts) == 3 and parts[0] in ("clusters", "sites", "baselines"):
        return parts[1] if parts[2] == "hardware" else f"{parts[1]} {parts[2]}"
    return "" if key in ("model", "workload.input", "workload") else key


def _gbps(x: float | None) -> str:
    return "-" if x is None else f"{units.bytes_per_s_to_gbps(x):g}"


def _threshold(row: dict[str, Any]) -> str:
    """t as optimize prints it; a topology's, one per site, as its splits say."""
    t = row.get("threshold_tokens")
    return units.format_threshold(t) if t is not None else (row.get("splits") or "-")


def tables(r: Any) -> list[Any]:
    """The study's summary, its break-even table and each panel's best point."""
    c = r.counts
    out: list[Any] = [
        table(f"{r.source}: {len(r.rows):,} points of {r.command}",
              ["outcome", "points"], [["ok", f"{c['ok']:,}"], ["infeasible", f"{c['infeasible']:,}"],
                                      ["failed", f"{c['error']:,}"]],
              caption="Axes: " + ", ".join(r.axes))]
    f = r.figures
    if f.breakeven:
        out.append(table(
            "Where PrfaaS-PD stops paying: the lowest bandwidth at which it serves more than homogeneous PD",
            ["panel", "line", f"pays from ({f.x_key}, Gbps)", "best gain", f"at ({f.x_key}, Gbps)"],
            [[b.panel, b.label, "every tier" if b.always else ("never" if b.from_bytes_per_s is None
                                                                else _gbps(b.from_bytes_per_s)),
              f"{b.best_gain:.3f}x", _gbps(b.best_at_bytes_per_s)] for b in f.breakeven],
            caption="gain = Lambda_max of PrfaaS-PD / Lambda_max of homogeneous PD on the local GPU"
                    + (f"; each line its best over {', '.join(f.aggregated)}" if f.aggregated else "")))
    if r.command == "optimize":
        best: dict[str, dict[str, Any]] = {}
        for row in r.rows:
            g = row.get("prfaas_vs_homogeneous")
            m = str(row.get("model", "all"))
            if row["status"] == "ok" and g is not None and (m not in best or g > best[m]["prfaas_vs_homogeneous"]):
                best[m] = row
        keys = [a for a in r.axes if a != "model"]
        heads = [axis_name(k) or k for k in keys]
        out.append(table("Each model's largest gain over homogeneous PD", ["model", *heads, "Lambda_max req/s",
                                                                         "gain", "t", "binding"],
                         [[m, *(_cell(row[k]) for k in keys), num(row["lambda_max_rps"], 3),
                           f"{row['prfaas_vs_homogeneous']:.3f}x", _threshold(row), _cell(row["binding"])]
                          for m, row in best.items()]))
    errors: dict[str, int] = defaultdict(int)
    for row in r.rows:
        if row["status"] != "ok" and row.get("error"):
            errors[f"{row['status']}: {row['error']}"] += 1
    if errors:
        out.append(table("Points that did not plan, by reason", ["points", "reason"],
                         [[f"{n:,}", e] for e, n in sorted(errors.items(), key=lambda kv: -kv[1])[:12]],
                         justify_first_left=False))
    return out


def _cell(v: Any) -> str:
    """A study row's value as the table shows it: "-" where the file left it empty."""
    return "-" if v is None else str(v)


def emit_study_report(fmt: str, r: Any) -> None:
    emit(fmt, study_report_json(r), rows=breakeven_rows(r), tables=lambda: tables(r))
