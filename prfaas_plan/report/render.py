"""Results -> JSON, CSV or rich tables. Human unit formatting lives here and in units.py only."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import Any


def finite(x: float | None) -> float | None:
    """``x``, or None where it is missing or not finite (a statistic of no sample, an unbounded stage)."""
    return x if x is not None and math.isfinite(x) else None


def _clean(value: Any, where: str = "") -> Any:
    """JSON-safe: numpy scalars to Python, no NaN/inf (they would mean a bug upstream)."""
    if isinstance(value, dict):
        return {str(k): _clean(v, f"{where}.{k}" if where else str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if hasattr(value, "tolist"):
        return _clean(value.tolist(), where)
    if isinstance(value, float) and not math.isfinite(value):
        raise RuntimeError(f"internal error: {where or 'a result'} is {value}, refusing to print it")
    return value


def _csv_cell(value: Any, where: str) -> Any:
    """12 significant digits: a CSV cell never shows binary round-off (2039000000000.0002)."""
    value = _clean(value, where)
    if not isinstance(value, float):
        return value
    value = float(f"{value:.12g}")
    return f"{value:.12g}" if abs(value) >= BIG else repr(value)


def to_json(payload: dict[str, Any]) -> str:
    return json.dumps(_clean(payload), indent=2)


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    fields = list(dict.fromkeys(k for row in rows for k in row))  # union, in first-seen order
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _csv_cell(v, str(k)) for k, v in row.items()})
    return buf.getvalue()


def emit(fmt: str, payload: dict[str, Any], *, rows: Sequence[dict[str, Any]] | None = None,
         tables: Callable[[], Iterable[Any]] | None = None) -> None:
    """Print a result: ``payload`` as JSON, ``rows`` as CSV, ``tables()`` (tables or lines) as text.

    Inside ``collect`` the table format's items are kept instead of printed."""
    sink = _SINK.get()
    if sink is not None and fmt == "table":
        sink.extend(tables() if tables else [])
    elif fmt == "json":
        sys.stdout.write(to_json(payload) + "\n")
    elif fmt == "csv":
        sys.stdout.write(to_csv(list(rows if rows is not None else [payload])))
    else:
        sys.stdout.write("\n".join(str(item) for item in (tables() if tables else [])) + "\n")


_SINK: ContextVar[list[Any] | None] = ContextVar("prfaas_plan_render_sink", default=None)


def collect(emit_fn: Callable[..., None], *args: Any, **kwargs: Any) -> list[Any]:
    """The items (``Table`` objects and lines of text) ``emit_fn("table", *args)`` would print, in
    order, printing nothing: how the HTML report shows exactly the tables of each command."""
    items: list[Any] = []
    token = _SINK.set(items)
    try:
        emit_fn("table", *args, **kwargs)
    finally:
        _SINK.reset(token)
    return items


class Table:
    """A plain-text table: title, a header, a rule, right-aligned numbers, an optional caption.

    Plain text rather than rich: importing rich costs about a fifth of a second, more than the
    whole computation of most commands.
    """

    def __init__(self, title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
                 caption: str | None = None, justify_first_left: bool = True):
        self.title, self.caption = title, caption
        self.columns = [str(c) for c in columns]
        self.rows = [[str(c) for c in r] for r in rows]
        self.left = {0} if justify_first_left else set()

    def __str__(self) -> str:
        cols = len(self.columns)
        cells = [self.columns, *[r + [""] * (cols - len(r)) for r in self.rows]]
        widths = [max(len(line) for row in cells for line in row[i].splitlines() or [""]) for i in range(cols)]

        def line(row: list[str]) -> list[str]:
            parts = [c.splitlines() or [""] for c in row]
            height = max(len(p) for p in parts)
            out = []
            for k in range(height):
                text = [(p[k] if k < len(p) else "") for p in parts]
                out.append("  " + "   ".join(t.ljust(w) if i in self.left else t.rjust(w)
                                             for i, (t, w) in enumerate(zip(text, widths, strict=True))).rstrip())
            return out

        width = sum(widths) + 3 * (cols - 1) + 2
        out = [self.title] if self.title else []
        out += line(self.columns)
        out.append(" " + "-" * (width - 1))
        for r in cells[1:]:
            out += line(r)
        if self.caption:
            out.append(self.caption)
        out.append("")
        return "\n".join(out)


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
          caption: str | None = None, justify_first_left: bool = True) -> Table:
    return Table(title, columns, rows, caption=caption, justify_first_left=justify_first_left)


WIDTH = 120  # columns a table should fit
BIG = 1e15  # from here on a number prints in scientific form, not as a 16+ digit integer


def num(x: float | None, digits: int = 2, *, sep: bool = True) -> str:
    """Fixed point with ``digits`` decimals (and thousands separators), scientific from 1e15 on."""
    if x is None:
        return "-"
    if not math.isfinite(x):
        return "unbounded" if x > 0 else ("-unbounded" if x < 0 else "n/a")
    if abs(x) >= BIG:
        return f"{x:.4g}"
    return f"{x:,.{digits}f}" if sep else f"{x:.{digits}f}"


def count(x: float | None) -> str:
    if x is None:
        return "-"
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}" if abs(x) < BIG else f"{x:.3g}"
    return f"{x:,.0f}"


# the systems a scenario compares, as the tables and figures name them
SYSTEM_NAMES = {"prfaas": "PrfaaS-PD", "homogeneous": "Homogeneous PD", "naive_heterogeneous": "Naive heterogeneous"}


def secs(x: float | None) -> str:
    """Seconds to the millisecond: "2.025"; "-" for none."""
    return "-" if x is None else f"{x:.3f}"


def pct(x: float | None) -> str:
    """A fraction as a percentage: "37.5%"; "-" for none."""
    return "-" if x is None else f"{x * 100:.1f}%"
