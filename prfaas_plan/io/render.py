"""Results -> JSON, CSV or rich tables. Human unit formatting lives here and in units.py only."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from collections.abc import Callable, Iterable, Sequence
from typing import Any


def _clean(value: Any) -> Any:
    """JSON-safe: numpy scalars to Python, no NaN/inf (they would mean a bug upstream)."""
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    if hasattr(value, "item") and callable(value.item) and getattr(value, "ndim", 1) == 0:
        value = value.item()
    if hasattr(value, "tolist"):
        return _clean(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"refusing to print a non-finite number ({value})")
    return value


def to_json(payload: dict[str, Any]) -> str:
    return json.dumps(_clean(payload), indent=2)


def to_csv(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return ""
    buf = io.StringIO()
    fields = list(rows[0])
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _clean(v) for k, v in row.items()})
    return buf.getvalue()


def emit(fmt: str, payload: dict[str, Any], *, rows: Sequence[dict[str, Any]] | None = None,
         tables: Callable[[], Iterable[Any]] | None = None) -> None:
    """Print a result: ``payload`` as JSON, ``rows`` as CSV, ``tables()`` (rich renderables) as text."""
    if fmt == "json":
        sys.stdout.write(to_json(payload) + "\n")
    elif fmt == "csv":
        sys.stdout.write(to_csv(list(rows if rows is not None else [payload])))
    else:
        from rich.console import Console

        console = Console(highlight=False, soft_wrap=False)
        if not console.is_terminal:  # piped or captured: do not squeeze tables into 80 columns
            console = Console(highlight=False, soft_wrap=False, width=120)
        for item in (tables() if tables else []):
            console.print(item)


def table(title: str | None, columns: Sequence[str], rows: Iterable[Sequence[Any]], *,
          caption: str | None = None, justify_first_left: bool = True):
    from rich import box
    from rich.table import Table

    t = Table(title=title, caption=caption, box=box.SIMPLE_HEAD, title_justify="left",
              caption_justify="left")
    for i, col in enumerate(columns):
        t.add_column(col, justify="left" if (i == 0 and justify_first_left) else "right")
    for r in rows:
        t.add_row(*[str(c) for c in r])
    return t


def num(x: float | None, digits: int = 2) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def count(x: float | None) -> str:
    if x is None:
        return "-"
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{suffix}"
    return f"{x:,.0f}"
