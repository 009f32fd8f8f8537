"""The JSON of `study report` (``api.study_report``'s typed result): the points, their counts and where
PrfaaS-PD stops paying."""

from __future__ import annotations

from typing import Any


def study_report_json(r: Any) -> dict[str, Any]:
    return {"source": r.source, "command": r.command, "points": len(r.rows), "counts": r.counts, "axes": list(r.axes),
            "breakeven": breakeven_rows(r)}


def breakeven_rows(r: Any) -> list[dict[str, Any]]:
    """Per panel and line: the lowest bandwidth from which PrfaaS-PD serves more than homogeneous PD."""
    return [{"panel": b.panel, "line": b.label, "pays_from_bytes_per_s": b.from_bytes_per_s,
             "pays_at_every_tier": b.always, "best_gain": b.best_gain, "best_at_bytes_per_s": b.best_at_bytes_per_s}
            for b in r.figures.breakeven]
